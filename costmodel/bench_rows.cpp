#include "costmodel/bench_rows.hpp"
#include "costmodel/calibration_csv.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/calibrated_cost_model.hpp"
#include "ir/graph_builder.hpp"
#include "ir/kernel_precision.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

using ir::BenchShape;

ir::DType precision_dtype(std::string_view precision) {
  return ir::kernel_precision(precision).dtype;
}

}  // namespace

KernelWork op_kind_work(std::string_view kernel, const std::vector<int64_t>& d, std::string_view precision) {
  using ir::FuseAxis;
  using ir::TensorRole;
  const ir::OpKind kind = ir::parse_kind(kernel);
  ir::GraphBuilder b(fmt::format("kernel {}", kernel), precision_dtype(precision));
  const ir::TensorId x = b.add_input("x", d, TensorRole::input, FuseAxis::stack);
  std::vector<ir::TensorId> inputs{x};
  if (kind == ir::OpKind::add || kind == ir::OpKind::mul) {
    inputs.push_back(b.add_input("b", d, TensorRole::input, FuseAxis::stack));
  } else if (kind == ir::OpKind::layernorm || kind == ir::OpKind::batchnorm2d) {
    // gamma and beta over the normalised channel: the last dim (layer norm), dim 1 (batch norm).
    const int64_t channels = kind == ir::OpKind::layernorm ? d.back() : d.at(1);
    const FuseAxis axis = kind == ir::OpKind::layernorm ? FuseAxis::stack : FuseAxis::dim0;
    inputs.push_back(b.add_weight("gamma", {channels}, axis));
    inputs.push_back(b.add_weight("beta", {channels}, axis));
  }
  b.add_op(kind, std::string(kernel), inputs);
  const ir::Graph graph = std::move(b).finish();
  // The op's own kernel: bench-ops times the whole op, its helper passes (batch norm's statistics)
  // inside that one time.
  std::vector<OpKernel> kernels = op_kernels(graph, graph.ops.front());
  std::erase_if(kernels, [](const OpKernel& k) { return k.helper; });
  if (kernels.size() != 1) {
    throw Error(fmt::format("op kind '{}' prices as {} kernels, expected 1", kernel, kernels.size()));
  }
  const KernelSample& k = kernels.front().sample;
  KernelWork work;
  work.m = k.m;
  work.n = k.n;
  work.k = k.k;
  work.flops = static_cast<int64_t>(k.flops);
  work.bytes = static_cast<int64_t>(k.bytes);
  work.row_elements = k.row_elements;
  return work;
}

CalibrationRow bench_row(const ir::KernelTiming& timing, std::string_view device) {
  const BenchShape& shape = timing.shape;
  ir::validate_bench_shape(shape);
  const std::vector<int64_t>& d = shape.dims;
  KernelWork work;
  std::string text;
  std::string variant;
  if (is_gemm_kernel(shape.kernel)) {
    work = gemm_work(d[0], d[1], d[2], timing.precision);
    text = fmt::format("M={} N={} K={} NN", d[0], d[1], d[2]);
  } else if (shape.kernel.starts_with("conv2d_")) {
    const ir::BenchConv c = ir::bench_conv(shape);
    const ConvGeometry conv{c.n, c.c, c.h, c.w, c.k, c.r, c.s, c.pad, c.pad, c.stride, c.stride, c.groups};
    const ConvPass passes[] = {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter};
    ConvPass pass = ConvPass::forward;
    for (ConvPass p : passes) {
      if (conv_pass_kernel(p) == shape.kernel) pass = p;
    }
    work = conv_work(conv, pass, timing.precision);
    text = conv_shape_text(conv);
    variant = std::string(conv_variant(c.r, c.s, c.stride, c.stride, 1, 1, c.groups));
  } else {
    work = op_kind_work(shape.kernel, shape.dims, timing.precision);
    text = d.size() == 4 ? fmt::format("N={} C={} H={} W={}", d[0], d[1], d[2], d[3])
                         : fmt::format("rows={} cols={}", d[0], d[1]);
  }
  CalibrationRow row;
  row.device = std::string(device);
  row.precision = timing.precision;
  row.kernel = shape.kernel;
  row.variant = std::move(variant);
  row.category = kernel_category(shape.kernel);
  set_row_work(row, work);
  row.time_ns = timing.time_ns;
  // On a GPU each launch sits between two events, launched back to back: a kernel shorter than the
  // host's time per launch reads as that time (exec/bench_ops.cpp). The CPU's time is its own.
  row.timing = device == kHostCpuDevice ? Timing::kernel : Timing::host_paced;
  row.source = shape.source.empty() ? "bench-ops" : "bench-ops " + shape.source;
  row.shape = text;
  validate_calibration_row(row);
  return row;
}

}  // namespace mutwo::costmodel

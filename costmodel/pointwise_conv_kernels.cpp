#include "costmodel/pointwise_conv_kernels.hpp"

#include "ir/conv_groups.hpp"
#include "ir/conv_lowering.hpp"
#include "ir/dtype.hpp"
#include "ir/needs_grad.hpp"

namespace mutwo::costmodel {
namespace {

// `batch` products m x n x k; each reads m*k + k*n and writes m*n elements of `element_bytes`.
OpKernel batched_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, double element_bytes) {
  OpKernel g;
  g.kernel = std::string(kGemmKernel);
  g.category = ir::KindCategory::matmul;
  g.sample.batch = batch;
  g.sample.m = m;
  g.sample.n = n;
  g.sample.k = k;
  const double b = static_cast<double>(batch);
  g.sample.flops = 2.0 * b * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  g.sample.bytes = b * static_cast<double>(m * k + k * n + m * n) * element_bytes;
  return g;
}

// A bandwidth-bound kernel moving `elements` elements in all (reads plus writes).
OpKernel moving(std::string kernel, ir::KindCategory category, double elements, double element_bytes,
                bool helper) {
  OpKernel p;
  p.kernel = std::move(kernel);
  p.category = category;
  p.sample.m = std::max<int64_t>(1, static_cast<int64_t>(elements));
  p.sample.bytes = elements * element_bytes;
  p.helper = helper;
  return p;
}

}  // namespace

std::vector<OpKernel> pointwise_conv_kernels(const ir::Graph& graph, const ir::Op& op) {
  std::vector<OpKernel> out;
  if (!ir::conv_runs_as_batched_gemm(op)) return out;
  const bool backward = op.kind == ir::OpKind::conv2d_backward;
  if (backward && op.forward_of == ir::kNoId) return out;
  const ir::Op& conv = backward ? graph.ops[static_cast<size_t>(op.forward_of)] : op;
  if (conv.inputs.size() < 2 || conv.outputs.empty()) return out;
  const ir::Tensor& x = graph.tensor(conv.inputs[0]);
  const auto& w = graph.tensor(conv.inputs[1]).shape;        // [G*Co, Ci, 1, 1]
  const auto& y = graph.tensor(conv.outputs.front()).shape;  // [N, G*Co, P, Q]
  if (x.shape.size() != 4 || w.size() != 4 || y.size() != 4) return out;
  const ir::PointwiseGemm g = ir::pointwise_gemm(x.shape, w, y, ir::conv_groups(conv));
  const int64_t products = g.images * g.groups;
  const int64_t ci = g.in_channels, co = g.out_channels, pq = g.pixels;
  const double element_bytes = static_cast<double>(ir::dtype_size_bytes(x.dtype));
  const double sampled = static_cast<double>(products * ci * pq);  // the input's sampled elements
  // at::matmul's broadcast of the weight over the images: read once, written N times.
  const auto weight_copy = [&] {
    out.push_back(moving("copy", ir::KindCategory::elementwise,
                         static_cast<double>((g.images + 1) * g.groups * co * ci), element_bytes, true));
  };
  const auto sample_copy = [&] {
    if (g.strided) {
      out.push_back(moving("copy", ir::KindCategory::elementwise, 2 * sampled, element_bytes, true));
    }
  };
  if (!backward) {
    sample_copy();
    weight_copy();
    out.push_back(batched_gemm(products, co, pq, ci, element_bytes));
    return out;
  }
  if (ir::needs_grad(op, 0)) {  // dX = W^T dY
    weight_copy();
    out.push_back(batched_gemm(products, ci, pq, co, element_bytes));
    if (g.strided) {  // the zeros of dX (x's size), then the scatter into them
      out.push_back(moving("copy", ir::KindCategory::elementwise,
                           static_cast<double>(x.bytes) / element_bytes, element_bytes, true));
      out.push_back(moving("copy", ir::KindCategory::elementwise, 2 * sampled, element_bytes, true));
    }
  }
  if (ir::needs_grad(op, 1)) {  // dW = sum over the images of dY x^T
    sample_copy();
    out.push_back(batched_gemm(products, co, ci, pq, element_bytes));
    out.push_back(moving("sum_to_shape", ir::KindCategory::reduction, static_cast<double>(products * co * ci),
                         element_bytes, true));
  }
  return out;
}

}  // namespace mutwo::costmodel

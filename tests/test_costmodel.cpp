// Cost model: device catalog, overrides and size parsing, analytic op durations, transfers, sources.
//
// Figures used below (costmodel/device_catalog.cpp, analytic_cost_model.cpp), a100-40gb:
//   FP32 19.5, TF32 156, BF16 312 TFLOPS -> 19,500 / 156,000 / 312,000 FLOP/ns; HBM 1,555 B/ns;
//   108 SMs; launch 4,000 ns; PCIe 4.0 x16 25 B/ns per direction, 10,000 ns per copy.
//   matmul: eff 0.80, half 4 MiFLOP/SM -> 108 * 4,194,304 = 452,984,832 FLOP; bytes half 16 KiB/SM
//           -> 108 * 16,384 = 1,769,472 B; memory eff 0.80 -> 1,244 B/ns.
//   conv: eff 0.70, half 8 MiFLOP/SM -> 905,969,664 FLOP; memory eff 0.75 -> 1,166.25 B/ns.
//   elementwise: compute eff 0.50, half 64 KiFLOP/SM -> 7,077,888 FLOP; memory eff 0.85 -> 1,321.75 B/ns,
//           half 1,769,472 B.
// A term is (work + half) / (rate * eff_max); duration = 4,000 + ceil(max(compute, memory)).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "costmodel/op_cost_model.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"

using namespace mutwo::costmodel;
using namespace mutwo::ir;

namespace {

// y = x W^T on a per-model x[rows, in] and W[out, in], no bias.
Graph linear_graph(DType dtype, int64_t rows, int64_t in, int64_t out, int32_t width = 1) {
  GraphBuilder b("linear", dtype, width, rows);
  TensorId x = b.add_input("x", {rows, in}, TensorRole::input, FuseAxis::stack);
  TensorId w = b.add_weight("w", {out, in}, FuseAxis::stack);
  b.op(OpKind::linear, "fc", {x, w});
  return std::move(b).finish();
}

Graph relu_graph(std::vector<int64_t> shape) {
  GraphBuilder b("relu", DType::f32, 1, shape[0]);
  TensorId x = b.add_input("x", shape, TensorRole::input, FuseAxis::stack);
  b.op(OpKind::relu, "relu", {x});
  return std::move(b).finish();
}

// The first conv of ResNet: x[2,3,224,224], W[64,3,7,7], stride 2, padding 3 -> [2,64,112,112].
Graph conv_graph() {
  GraphBuilder b("conv", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 3, 224, 224}, TensorRole::input, FuseAxis::dim1);
  TensorId w = b.add_weight("conv1.weight", {64, 3, 7, 7}, FuseAxis::dim0);
  b.op(OpKind::conv2d, "conv1", {x, w},
       {{"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{3, 3}}});
  return std::move(b).finish();
}

}  // namespace

TEST_CASE("fp32 linear on a100-40gb is compute-bound at the FP32 CUDA-core peak") {
  Graph g = linear_graph(DType::f32, 4096, 1024, 1024);
  const Op& op = g.ops[0];
  // FLOPs 2 * 4096 * 1024 * 1024 = 8,589,934,592; bytes (4096*1024 + 1024*1024 + 4096*1024) * 4.
  REQUIRE(op.flops == 8'589'934'592);
  REQUIRE(op.bytes_read + op.bytes_written == 37'748'736);
  AnalyticCostModel model(find_device("a100-40gb"));
  const OpCostBreakdown b = model.breakdown(g, op);
  // PyTorch's matmul default is no TF32: P = 19,500 * 0.8 = 15,600 FLOP/ns.
  // compute = (8,589,934,592 + 452,984,832) / 15,600 = 579,674.32 ns;
  // memory = (37,748,736 + 1,769,472) / 1,244 = 31,767.05 ns -> compute-bound.
  CHECK(b.peak_flops_per_ns == doctest::Approx(19'500.0));
  CHECK(b.compute_ns == doctest::Approx(579'674.322).epsilon(1e-9));
  CHECK(b.memory_ns == doctest::Approx(31'767.05).epsilon(1e-6));
  CHECK_FALSE(b.memory_bound);
  // 4,000 + ceil(579,674.32) = 583,675.
  CHECK(model.op_duration_ns(g, op) == 583'675);

  SUBCASE("with allow_tf32_matmul the TF32 tensor-core peak applies") {
    AnalyticOptions options;
    options.allow_tf32_matmul = true;
    AnalyticCostModel tf32(find_device("a100-40gb"), options);
    // 9,042,919,424 / (156,000 * 0.8) = 72,459.29 -> 4,000 + 72,460.
    CHECK(tf32.op_duration_ns(g, op) == 76'460);
  }
}

TEST_CASE("bf16 linear on a100-40gb runs at the tensor-core peak") {
  Graph g = linear_graph(DType::bf16, 4096, 1024, 1024);
  const Op& op = g.ops[0];
  REQUIRE(op.bytes_read + op.bytes_written == 18'874'368);  // half of the fp32 bytes
  AnalyticCostModel model(find_device("a100-40gb"));
  // compute = 9,042,919,424 / (312,000 * 0.8 = 249,600) = 36,229.65 ns;
  // memory = (18,874,368 + 1,769,472) / 1,244 = 16,594.73 ns -> 4,000 + 36,230 = 40,230.
  CHECK(model.breakdown(g, op).peak_flops_per_ns == doctest::Approx(312'000.0));
  CHECK(model.op_duration_ns(g, op) == 40'230);
}

TEST_CASE("fp32 conv2d uses TF32 tensor cores by default, like cuDNN under PyTorch") {
  Graph g = conv_graph();
  const Op& op = g.ops[0];
  REQUIRE(op.flops == 2 * int64_t{236'027'904});
  AnalyticCostModel model(find_device("a100-40gb"));
  // compute = (472,055,808 + 905,969,664) / (156,000 * 0.7 = 109,200) = 12,619.28 ns;
  // memory = (1,204,224 + 37,632 + 6,422,528 + 1,769,472) / 1,166.25 = 8,089.04 ns -> 4,000 + 12,620.
  CHECK(model.op_duration_ns(g, op) == 16'620);
  AnalyticOptions no_tf32;
  no_tf32.allow_tf32_conv = false;
  // 1,378,025,472 / (19,500 * 0.7 = 13,650) = 100,954.25 -> 4,000 + 100,955.
  CHECK(AnalyticCostModel(find_device("a100-40gb"), no_tf32).op_duration_ns(g, op) == 104'955);
  // V100 has no TF32: the flag falls back to FP32 15,700 * 0.7 = 10,990 FLOP/ns;
  // 80 SMs: half = 80 * 8 MiFLOP = 671,088,640 -> (472,055,808 + 671,088,640) / 10,990 = 104,016.78.
  AnalyticCostModel v100(find_device("v100-16gb"));
  CHECK(v100.breakdown(g, op).peak_flops_per_ns == doctest::Approx(15'700.0));
  CHECK(v100.op_duration_ns(g, op) == 4'000 + 104'017);
}

TEST_CASE("relu is memory-bound and priced by its bytes") {
  Graph g = relu_graph({4096, 1024});
  const Op& op = g.ops[0];
  // reads and writes 4096 * 1024 * 4 = 16 MiB each.
  REQUIRE(op.bytes_read + op.bytes_written == 33'554'432);
  AnalyticCostModel model(find_device("a100-40gb"));
  const OpCostBreakdown b = model.breakdown(g, op);
  // memory = (33,554,432 + 1,769,472) / 1,321.75 = 26,725.10 ns;
  // compute = (4,194,304 + 7,077,888) / (19,500 * 0.5) = 1,156.12 ns.
  CHECK(b.memory_bound);
  CHECK(b.compute_ns == doctest::Approx(1'156.122).epsilon(1e-6));
  CHECK(model.op_duration_ns(g, op) == 4'000 + 26'726);
}

TEST_CASE("tiny ops cost the launch overhead plus the kernel ramp, never less than the launch") {
  AnalyticCostModel model(find_device("a100-40gb"));
  SUBCASE("a 4x8 relu") {
    Graph g = relu_graph({4, 8});
    // memory = (256 + 1,769,472) / 1,321.75 = 1,338.93 ns -> 4,000 + 1,339.
    CHECK(model.op_duration_ns(g, g.ops[0]) == 5'339);
  }
  SUBCASE("an opaque op without FLOPs or bytes costs exactly the launch overhead") {
    Graph g;
    Op op;
    op.id = 0;
    op.kind = OpKind::opaque;
    g.ops.push_back(op);
    CHECK(model.op_duration_ns(g, g.ops[0]) == 4'000);
    // With bytes only: (1,000,000 + 1,769,472) / (1,555 * 0.6 = 933) = 2,968.35 -> 4,000 + 2,969.
    g.ops[0].bytes_read = 1'000'000;
    CHECK(model.op_duration_ns(g, g.ops[0]) == 6'969);
  }
  SUBCASE("a launch-overhead override moves the floor") {
    DeviceOverrides o;
    o.launch_overhead_ns = 0;
    AnalyticCostModel no_launch(apply_overrides(find_device("a100-40gb"), o));
    Graph g = relu_graph({4, 8});
    CHECK(no_launch.op_duration_ns(g, g.ops[0]) == 1'339);
  }
}

TEST_CASE("a width-4 fused linear is faster than 4 separate ones and slower than one") {
  Graph one = linear_graph(DType::bf16, 256, 512, 512, 1);
  Graph four = linear_graph(DType::bf16, 256, 512, 512, 4);
  REQUIRE(four.ops[0].flops == 4 * one.ops[0].flops);
  AnalyticCostModel model(find_device("a100-40gb"));
  // width 1: FLOPs 2*256*512*512 = 134,217,728 -> (134,217,728 + 452,984,832) / 249,600 = 2,352.57;
  //   bytes (256*512 + 512*512 + 256*512) * 2 = 1,048,576 -> (1,048,576 + 1,769,472) / 1,244 = 2,265.31
  //   -> 4,000 + 2,353 = 6,353.
  // width 4: (536,870,912 + 452,984,832) / 249,600 = 3,965.77; (4,194,304 + 1,769,472) / 1,244 = 4,794.03
  //   -> 4,000 + 4,795 = 8,795 < 4 * 6,353 = 25,412 and > 6,353.
  const int64_t t1 = model.op_duration_ns(one, one.ops[0]);
  const int64_t t4 = model.op_duration_ns(four, four.ops[0]);
  CHECK(t1 == 6'353);
  CHECK(t4 == 8'795);
  CHECK(t4 < 4 * t1);
  CHECK(t4 > t1);
}

TEST_CASE("op_durations_ns prices every op of a graph in program order") {
  GraphBuilder b("mlp", DType::f32, 1, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId w1 = b.add_weight("fc1.weight", {16, 8}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc1", {x, w1});
  b.op(OpKind::relu, "relu", {h});
  Graph g = std::move(b).finish();
  AnalyticCostModel model(find_device("h100-sxm-80gb"));
  const std::vector<int64_t> d = op_durations_ns(model, g);
  REQUIRE(d.size() == 2);
  CHECK(d[0] == model.op_duration_ns(g, g.ops[0]));
  // relu of 4x8 f32 on H100: 256 bytes + 132 * 16,384 = 2,162,688 half -> 2,162,944 / (3,350 * 0.85
  // = 2,847.5) = 759.59 -> 4,000 + 760.
  CHECK(d[1] == 4'760);
}

TEST_CASE("a transfer takes latency plus bytes over bandwidth, rounded up to whole ns") {
  const DeviceSpec a100 = find_device("a100-40gb");
  // 1 GiB = 1,073,741,824 B over 25 B/ns = 42,949,672.96 -> 42,949,673 ns, + 10,000 ns latency.
  CHECK(transfer_duration_ns(a100, int64_t{1} << 30, CopyDirection::host_to_device) == 10'000 + 42'949'673);
  CHECK(transfer_duration_ns(a100, int64_t{1} << 30, CopyDirection::device_to_host) == 10'000 + 42'949'673);
  // An exact quotient is not rounded up: 100 / 25 = 4.
  CHECK(transfer_duration_ns(a100, 100, CopyDirection::host_to_device) == 10'004);
  // One byte still costs one ns of link time.
  CHECK(transfer_duration_ns(a100, 1, CopyDirection::host_to_device) == 10'001);
  CHECK(transfer_duration_ns(a100, 0, CopyDirection::host_to_device) == 0);
  CHECK_THROWS_AS(transfer_duration_ns(a100, -1, CopyDirection::host_to_device), mutwo::Error);
  // PCIe 3.0 on V100: 12.5 B/ns -> 85,899,345.92 -> 85,899,346.
  CHECK(transfer_duration_ns(find_device("v100-32gb"), int64_t{1} << 30, CopyDirection::device_to_host) ==
        10'000 + 85'899'346);
}

TEST_CASE("every catalog device has every field set and positive") {
  const DeviceCatalog& catalog = builtin_devices();
  // One file per GPU in costmodel/devices/, registered in file-name order.
  CHECK(catalog.names() == std::vector<std::string>{"a10",
                                                    "a100-40gb",
                                                    "a100-80gb",
                                                    "a100-pcie-40gb",
                                                    "a100-pcie-80gb",
                                                    "b200",
                                                    "gtx1080ti",
                                                    "h100-pcie",
                                                    "h100-sxm-80gb",
                                                    "h200",
                                                    "l4",
                                                    "l40s",
                                                    "p100-pcie-16gb",
                                                    "p4",
                                                    "rtx3090",
                                                    "rtx4090",
                                                    "t4",
                                                    "titan-xp",
                                                    "v100-16gb",
                                                    "v100-32gb",
                                                    "v100-pcie-32gb"});
  for (const DeviceSpec& d : catalog.devices()) {
    CAPTURE(d.name);
    CHECK_FALSE(d.description.empty());
    CHECK_FALSE(d.chip.empty());
    CHECK_FALSE(d.host_link.empty());
    CHECK(d.memory_bytes > 0);
    CHECK(d.fp32_flops_per_ns > 0);
    // Volta, Pascal and Turing predate TF32 (0 = none); every later GPU has it.
    const bool pre_ampere = d.name.rfind("v100", 0) == 0 || d.name == "p100-pcie-16gb" || d.name == "t4" ||
                            d.name == "gtx1080ti" || d.name == "titan-xp" || d.name == "p4";
    if (pre_ampere) {
      CHECK(d.tf32_flops_per_ns == 0);
    } else {
      CHECK(d.tf32_flops_per_ns > 0);
    }
    // Tensor cores (and GP100's FP16x2) beat FP32 CUDA cores; GP102 and GP104 run FP16 at 1/64.
    if (d.name == "gtx1080ti" || d.name == "titan-xp" || d.name == "p4") {
      CHECK(d.half_flops_per_ns == doctest::Approx(d.fp32_flops_per_ns / 64).epsilon(0.02));  // 2 decimals
    } else {
      CHECK(d.half_flops_per_ns > d.fp32_flops_per_ns);
    }
    CHECK(d.fp64_flops_per_ns > 0);
    CHECK(d.hbm_bytes_per_ns > 0);
    CHECK(d.sm_count > 0);
    CHECK(d.boost_clock_mhz >= 1000);  // every catalog GPU boosts past 1 GHz
    CHECK(d.l2_bytes >= int64_t{2} << 20);
    CHECK(d.h2d_bytes_per_ns > 0);
    CHECK(d.d2h_bytes_per_ns > 0);
    CHECK(d.h2d_latency_ns > 0);
    CHECK(d.d2h_latency_ns > 0);
    CHECK(d.launch_overhead_ns > 0);
  }
}

TEST_CASE("catalog figures follow the datasheets, dense not sparse") {
  const DeviceSpec a100 = find_device("a100-40gb");
  CHECK(a100.memory_bytes == int64_t{40} << 30);
  CHECK(a100.sm_count == 108);
  CHECK(a100.hbm_bytes_per_ns == doctest::Approx(1'555.0));
  CHECK(find_device("a100-80gb").hbm_bytes_per_ns == doctest::Approx(2'039.0));
  // H100 SXM datasheet lists BF16 1,979 and TF32 989 TFLOPS with sparsity; dense is half.
  const DeviceSpec h100 = find_device("h100-sxm-80gb");
  CHECK(h100.half_flops_per_ns == doctest::Approx(1'979'000.0 / 2));
  CHECK(h100.tf32_flops_per_ns == doctest::Approx(989'000.0 / 2));
  // H200: same compute as H100, 141 GB at 4.8 TB/s.
  const DeviceSpec h200 = find_device("h200");
  CHECK(h200.half_flops_per_ns == h100.half_flops_per_ns);
  CHECK(h200.hbm_bytes_per_ns == doctest::Approx(4'800.0));
  CHECK(h200.memory_bytes == int64_t{141} << 30);
  // RTX 4090: FP16 tensor with FP32 accumulate 165.2 TFLOPS (330.3 is FP16 accumulate).
  CHECK(find_device("rtx4090").half_flops_per_ns == doctest::Approx(165'200.0));
  CHECK(find_device("v100-16gb").half_flops_per_ns == doctest::Approx(125'000.0));
  // Host links: PCIe 3.0 (V100) 12.5, 4.0 (A100, RTX 4090) 25, 5.0 (H100, H200) 50 GB/s pinned.
  CHECK(find_device("v100-16gb").h2d_bytes_per_ns == doctest::Approx(12.5));
  CHECK(find_device("rtx4090").d2h_bytes_per_ns == doctest::Approx(25.0));
  CHECK(h200.h2d_bytes_per_ns == doctest::Approx(50.0));
}

TEST_CASE("an unknown device is an error listing the valid names") {
  CHECK_THROWS_WITH_AS(
      find_device("a100"),
      "unknown device 'a100'; valid: a10, a100-40gb, a100-80gb, a100-pcie-40gb, a100-pcie-80gb, b200, "
      "gtx1080ti, h100-pcie, h100-sxm-80gb, h200, l4, l40s, p100-pcie-16gb, p4, rtx3090, rtx4090, t4, "
      "titan-xp, "
      "v100-16gb, v100-32gb, v100-pcie-32gb",
      mutwo::UnknownNameError);
}

TEST_CASE("a device added twice or with a missing number is refused") {
  DeviceCatalog catalog;
  register_builtin_devices(catalog);
  CHECK_THROWS_WITH_AS(catalog.add(find_device("h200")), "device 'h200' registered twice", mutwo::Error);
  DeviceSpec bad = find_device("h200");
  bad.name = "h200-broken";
  bad.hbm_bytes_per_ns = 0;
  CHECK_THROWS_WITH_AS(catalog.add(bad),
                       doctest::Contains("device 'h200-broken': field 'hbm_bytes_per_ns' = 0"), mutwo::Error);
}

TEST_CASE("overrides replace only the fields they set") {
  DeviceOverrides o;
  o.memory_bytes = parse_memory_size("16GiB");
  o.h2d_gbps = 12.0;
  o.d2h_latency_ns = 2'000;
  o.half_duplex = true;
  const DeviceSpec base = find_device("a100-80gb");
  const DeviceSpec d = apply_overrides(base, o);
  CHECK(d.memory_bytes == 17'179'869'184);
  CHECK(d.h2d_bytes_per_ns == doctest::Approx(12.0));
  CHECK(d.d2h_bytes_per_ns == doctest::Approx(25.0));  // unchanged
  CHECK(d.d2h_latency_ns == 2'000);
  CHECK(d.h2d_latency_ns == 10'000);  // unchanged
  CHECK_FALSE(d.full_duplex);
  CHECK(d.hbm_bytes_per_ns == base.hbm_bytes_per_ns);
  // 1 GiB at 12 B/ns = 89,478,485.33 -> 89,478,486, + 10,000.
  CHECK(transfer_duration_ns(d, int64_t{1} << 30, CopyDirection::host_to_device) == 10'000 + 89'478'486);

  DeviceOverrides bad;
  bad.h2d_gbps = 0.0;
  CHECK_THROWS_WITH_AS(apply_overrides(base, bad),
                       "device 'a100-80gb': override 'h2d_gbps' = 0 GB/s must be > 0", mutwo::Error);
  DeviceOverrides no_memory;
  no_memory.memory_bytes = 0;
  CHECK_THROWS_WITH_AS(apply_overrides(base, no_memory), doctest::Contains("override 'memory' = 0 bytes"),
                       mutwo::Error);
}

TEST_CASE("memory sizes parse decimal and binary units") {
  CHECK(parse_memory_size("16GiB") == 17'179'869'184);   // 16 * 2^30
  CHECK(parse_memory_size("40GB") == 40'000'000'000);    // 40 * 10^9
  CHECK(parse_memory_size("512MiB") == 536'870'912);     // 512 * 2^20
  CHECK(parse_memory_size("1.5GiB") == 1'610'612'736);   // 1.5 * 2^30
  CHECK(parse_memory_size("123456") == 123'456);         // bytes
  CHECK(parse_memory_size(" 8 gib ") == 8'589'934'592);  // case and spaces
  CHECK(parse_memory_size("2TiB") == int64_t{2} << 40);
  CHECK(parse_memory_size("0.5KB") == 500);
  CHECK(parse_memory_size("1.1KiB") == 1'126);  // 1126.4 rounds to 1126
  CHECK(parse_memory_size("7B") == 7);
}

TEST_CASE("bad memory sizes are errors naming the value") {
  CHECK_THROWS_WITH_AS(
      parse_memory_size("16XB"),
      "invalid memory size '16XB': unknown unit 'XB' (valid: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
      mutwo::Error);
  CHECK_THROWS_WITH_AS(parse_memory_size(""), doctest::Contains("invalid memory size '': empty"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(parse_memory_size("GiB"), doctest::Contains("invalid memory size 'GiB'"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(parse_memory_size("-1GiB"), doctest::Contains("invalid memory size '-1GiB'"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(parse_memory_size("1.5"),
                       "invalid memory size '1.5': a size without a unit is a whole number of bytes",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(parse_memory_size("1.2.3GB"), doctest::Contains("invalid memory size '1.2.3GB'"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(parse_memory_size("99999999999TiB"),
                       "invalid memory size '99999999999TiB': too large for int64 bytes", mutwo::Error);
}

TEST_CASE("cost sources are created by name and an unknown one lists the valid names") {
  const CostSourceRegistry& registry = builtin_cost_sources();
  CHECK(registry.names() == std::vector<std::string>{"waves", "analytic", "measured", "calibrated"});
  CHECK_FALSE(registry.find("analytic").citation.empty());
  std::unique_ptr<OpCostModel> model = registry.create("analytic", find_device("a100-40gb"));
  CHECK(model->name() == "analytic");
  CHECK(model->device().name == "a100-40gb");
  Graph g = relu_graph({4096, 1024});
  CHECK(model->op_duration_ns(g, g.ops[0]) == 30'726);  // the relu priced above
  CHECK_THROWS_WITH_AS(registry.create("roofline", find_device("a100-40gb")),
                       "unknown cost source 'roofline'; valid: waves, analytic, measured, calibrated",
                       mutwo::UnknownNameError);
  CostSourceRegistry twice;
  register_builtin_cost_sources(twice);
  CHECK_THROWS_AS(register_builtin_cost_sources(twice), mutwo::Error);
}

TEST_CASE("efficiencies outside (0, 1] are refused naming the category") {
  AnalyticOptions o;
  o.efficiency[static_cast<size_t>(KindCategory::norm)].memory_efficiency = 1.5;
  CHECK_THROWS_WITH_AS(AnalyticCostModel(find_device("a100-40gb"), o),
                       "analytic cost model: category 'norm': memory_efficiency = 1.5 must be in (0, 1]",
                       mutwo::Error);
}

TEST_CASE("host cost per op: Python forward, C++ backward, a launch for ops issued inside another call") {
  // The catalog's eager figures (HTA's V100 trace medians): forward 55.2 us, backward 14.1 us,
  // a kernel launch 5.2 us; a cast (autocast, inside its parent op) and an optimizer update
  // (torch.optim's foreach kernels) cost their launch only.
  Graph g = linear_graph(DType::f32, 4, 8, 16);
  AnalyticCostModel model(find_device("a100-40gb"));
  Op forward = g.ops[0];
  CHECK(model.op_host_ns(g, forward) == 55'200);
  Op backward = forward;
  backward.kind = OpKind::linear_backward;
  backward.phase = Phase::backward;
  CHECK(model.op_host_ns(g, backward) == 14'100);
  Op cast = forward;
  cast.kind = OpKind::cast;
  CHECK(model.op_host_ns(g, cast) == 5'200);
  Op update = forward;
  update.kind = OpKind::sgd_step;
  update.phase = Phase::optimizer;
  CHECK(model.op_host_ns(g, update) == 5'200);
  // Every catalog GPU carries the figures and names their source.
  for (const DeviceSpec& d : builtin_devices()) {
    CAPTURE(d.name);
    CHECK(d.host.forward_op_ns == 55'200);
    CHECK(d.host.launch_queue_depth == 1024);
    CHECK_FALSE(d.host.source.empty());
  }
}

TEST_CASE("host cost per op issued from C++ (mutwo's executor): every op one C++ call") {
  // HostIssuer::cpp: the forward op that costs 55.2 us from Python costs the C++ figure (14.1 us), as
  // do the cast and the update the interpreter issues as instructions of their own.
  Graph g = linear_graph(DType::f32, 4, 8, 16);
  AnalyticCostModel model(find_device("a100-40gb"));
  Op forward = g.ops[0];
  CHECK(model.op_host_ns(g, forward, HostIssuer::cpp) == 14'100);
  CHECK(model.op_host_ns(g, forward, HostIssuer::python) == 55'200);
  Op cast = forward;
  cast.kind = OpKind::cast;
  CHECK(model.op_host_ns(g, cast, HostIssuer::cpp) == 14'100);
  Op update = forward;
  update.kind = OpKind::sgd_step;
  update.phase = Phase::optimizer;
  CHECK(model.op_host_ns(g, update, HostIssuer::cpp) == 14'100);
}

TEST_CASE("the analytic source on Hopper against the lent H100's and H200's own measurements") {
  // Measured on this workplace's lent machines and recorded with their dates in the device tool's
  // notes (KINDS.md): an 8192x8192x8192 bf16 matrix product through PyTorch at 798 TFLOP/s on the
  // H100 80GB HBM3 (2026-11-13) and 788 TFLOP/s on the H200 (2026-10-28, the mean of ten products
  // after three warm-ups, random data); a device-to-device copy at about 3.0 TB/s (H100) and 4.3 TB/s
  // (H200, 8.6 GB in 2.0 ms), bytes read plus written. Validation only: nothing is fitted to them.
  const Graph gemm = linear_graph(DType::bf16, 8192, 8192, 8192);
  // FLOPs 2 * 8192^3 = 1,099,511,627,776 on 989,500 FLOP/ns * 0.8 = 791,600 with the ramp of
  // 132 SMs * 4 MiFLOP = 553,648,128: 1,389,673.16 ns, compute-bound on both (memory: 404,815,872 B
  // at 2,680 / 3,840 B/ns = 151,051 / 105,421 ns) -> 4,000 + 1,389,674 = 1,393,674 ns.
  const double gemm_flops = 1'099'511'627'776.0;
  struct Measured {
    std::string gpu;
    double rate;               // TFLOP/s (GEMM) or TB/s (copy)
    int64_t predicted_ns = 0;  // the copy's, by hand below
  };
  // (Plain structs, not structured bindings: clang 14 cannot capture those in doctest's CAPTURE.)
  for (const Measured& m : {Measured{"h100-sxm-80gb", 798.0}, Measured{"h200", 788.0}}) {
    CAPTURE(m.gpu);
    const double measured_tflops = m.rate;
    AnalyticCostModel model(find_device(m.gpu));
    const int64_t predicted_ns = model.op_duration_ns(gemm, gemm.ops[0]);
    CHECK(predicted_ns == 1'393'674);
    // Measured 1,377,834 ns (H100), 1,395,319 ns (H200): +1.15 %, -0.12 %.
    const double measured_ns = gemm_flops / (measured_tflops * 1e3);
    CHECK(std::abs(static_cast<double>(predicted_ns) - measured_ns) / measured_ns < 0.015);
  }
  // The copy as the pointwise kernel that reads and writes the same bytes: relu over 1,075,000,000
  // f32 elements (4.3 GB each way). Memory (8.6e9 + 132 * 16 KiB) at 0.85 of 3,350 / 4,800 B/ns:
  // 3,020,952.66 / 2,108,373.21 ns (its FLOP term 32,348 ns) -> 3,024,953 / 2,112,374 ns.
  const Graph copy = relu_graph({1'075, 1'000'000});
  const double copy_bytes = 8.6e9;
  for (const Measured& m : {Measured{"h100-sxm-80gb", 3.0, 3'024'953}, Measured{"h200", 4.3, 2'112'374}}) {
    CAPTURE(m.gpu);
    const double measured_tbps = m.rate;
    AnalyticCostModel model(find_device(m.gpu));
    const int64_t predicted_ns = model.op_duration_ns(copy, copy.ops[0]);
    CHECK(predicted_ns == m.predicted_ns);
    // Measured 2,866,667 / 2,000,000 ns: +5.5 %, +5.6 % (the 0.85 of HBM peak is A100's STREAM figure;
    // Hopper's copy reaches 0.90).
    const double measured_ns = copy_bytes / (measured_tbps * 1e3);
    const double error = (static_cast<double>(predicted_ns) - measured_ns) / measured_ns;
    CHECK(error > 0.05);
    CHECK(error < 0.06);
  }
}

TEST_CASE("the default waves source on Hopper against the same measurements: within 15 %") {
  // The same kernels (above) priced by the shipped wave model, fitted on nine other GPUs' kernels and
  // nothing of Hopper's: the GEMM 7-8 % fast (its tensor-core GEMM group learnt V100 and T4 fp16 rates,
  // the T4's read as power-limited), the copy 12 % slow (its streaming rate is NeuSight's five GPUs').
  // A refit that drifts further from the only Hopper measurements there are fails here.
  const Graph gemm = linear_graph(DType::bf16, 8192, 8192, 8192);
  const Graph copy = relu_graph({1'075, 1'000'000});
  struct Measured {
    std::string gpu;
    double gemm_tflops;
    double copy_tbps;
  };
  for (const Measured& m : {Measured{"h100-sxm-80gb", 798.0, 3.0}, Measured{"h200", 788.0, 4.3}}) {
    CAPTURE(m.gpu);
    const auto waves = builtin_cost_sources().create("waves", find_device(m.gpu));
    const double gemm_ns = 1'099'511'627'776.0 / (m.gemm_tflops * 1e3);
    const double copy_ns = 8.6e9 / (m.copy_tbps * 1e3);
    const double gemm_error =
        (static_cast<double>(waves->op_duration_ns(gemm, gemm.ops[0])) - gemm_ns) / gemm_ns;
    const double copy_error =
        (static_cast<double>(waves->op_duration_ns(copy, copy.ops[0])) - copy_ns) / copy_ns;
    CHECK(std::abs(gemm_error) < 0.15);
    CHECK(std::abs(copy_error) < 0.15);
  }
}

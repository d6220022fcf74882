// Cost model: analytic op durations and transfers (the catalog, sizes, sources and host costs:
// tests/test_costmodel_catalog.cpp).
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
#include "tests/support/test_costmodel_fixtures.hpp"

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

TEST_CASE("a price becomes whole ns, or an error naming the source and op: never an int64 out of range") {
  CHECK(whole_price_ns(0.0, "waves") == 0);
  CHECK(whole_price_ns(1.2, "waves") == 2);
  CHECK(whole_price_ns(4.0e18, "waves") == 4'000'000'000'000'000'000);
  mutwo::ir::Op op;
  op.id = 91;
  op.name = "fc";
  // A calibration profile whose compute term is 1e300 ns used to reach the simulator as
  // "a negative duration -9223372036854775808 ns".
  CHECK_THROWS_WITH_AS(whole_price_ns(1e300, "calibrated", &op),
                       "cost model 'calibrated', op 91 'fc': a price of 1e+300 ns is no time in [0, 4e+18] ns (a "
                       "coefficient or device figure out of range)",
                       mutwo::Error);
  CHECK_THROWS_AS(whole_price_ns(std::nan(""), "waves"), mutwo::Error);
  CHECK_THROWS_AS(whole_price_ns(-1.0, "waves"), mutwo::Error);
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
  // A link so slow that the copy's ns overflow int64 (`--h2d-gbps 1e-300`) is refused, naming it; it
  // used to reach the simulator as an event at -9.2e18 ns.
  DeviceSpec crawl = a100;
  crawl.h2d_bytes_per_ns = 1e-300;
  CHECK_THROWS_WITH_AS(transfer_duration_ns(crawl, int64_t{1} << 30, CopyDirection::host_to_device),
                       doctest::Contains("a host_to_device copy of 1073741824 bytes at 1e-300 bytes/ns"),
                       mutwo::Error);
  crawl.h2d_bytes_per_ns = 1.0 / 4.0e9;  // 1 GiB in 4.29e18 ns: just past the bound
  CHECK_THROWS_AS(transfer_duration_ns(crawl, int64_t{1} << 30, CopyDirection::host_to_device), mutwo::Error);
  crawl.h2d_bytes_per_ns = 1.0 / 3.0e9;  // 3.22e18 ns: still timed
  CHECK(transfer_duration_ns(crawl, int64_t{1} << 30, CopyDirection::host_to_device) >
        3'000'000'000'000'000'000);
  // PCIe 3.0 on V100: 12.5 B/ns -> 85,899,345.92 -> 85,899,346.
  CHECK(transfer_duration_ns(find_device("v100-32gb"), int64_t{1} << 30, CopyDirection::device_to_host) ==
        10'000 + 85'899'346);
}

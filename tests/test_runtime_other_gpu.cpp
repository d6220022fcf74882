// Moving a replayed trace's work to another GPU (costmodel/kernel_transfer.hpp,
// sim/runtime_other_gpu.hpp), on hand-made traces: a kernel's occupancy read from its launch, the
// rule each piece of work takes, and the replayed step derived by hand. Catalog figures used:
// A100-SXM4-40GB 108 SMs, 1555 GB/s, 19.5 TFLOP/s FP32, PCIe 4.0 (25 GB/s per direction);
// H100 SXM 132 SMs, 3350 GB/s, 67 TFLOP/s FP32, PCIe 5.0 (50 GB/s).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/device_catalog.hpp"
#include "costmodel/kernel_transfer.hpp"
#include "io/kineto_op_records.hpp"
#include "sim/runtime_other_gpu.hpp"
#include "sim/runtime_replay.hpp"
#include "support/error.hpp"
#include "tests/support/runtime_trace_builder.hpp"

using namespace mutwo;
using costmodel::TransferRule;
using nlohmann::json;
using test::kUs;
using test::TraceBuilder;

namespace {

// An A100's deviceProperties as PyTorch 2.x's profiler writes them.
json a100_properties() {
  return json::array({{{"id", 0},
                       {"name", "NVIDIA A100-SXM4-40GB"},
                       {"computeMajor", 8},
                       {"computeMinor", 0},
                       {"maxThreadsPerMultiprocessor", 2048},
                       {"regsPerMultiprocessor", 65536},
                       {"sharedMemPerMultiprocessor", 167936},
                       {"warpSize", 32},
                       {"numSms", 108}}});
}

// One step of 1000 us: a kernel under one wave, a kernel of many waves, a host-to-device copy and a
// device synchronize that waits for them.
TraceBuilder three_pieces() {
  TraceBuilder b;
  b.properties = a100_properties();
  b.step("ProfilerStep#1", 0, 1000);
  b.call("cudaLaunchKernel", 10, 5, 1);
  b.kernel("small", 7, 20, 100);  // 20..120
  b.geometry(100, 1, 256, 32, 0);
  b.call("cudaLaunchKernel", 30, 5, 2);
  b.kernel("large", 7, 120, 335);  // 120..455
  b.geometry(1000, 2, 256, 64, 0);
  b.call("cudaMemcpyAsync", 40, 5, 3);
  b.work("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 7, 455, 10, 3);  // 455..465
  b.call("cudaDeviceSynchronize", 50, 420, 4);                            // returns at 470
  return b;
}

}  // namespace

TEST_CASE("a kernel's occupancy comes from its launch and the GPU's SM limits") {
  TraceBuilder b = three_pieces();
  b.call("cudaLaunchKernel", 480, 5, 5);
  b.kernel("shared", 7, 490, 10);
  b.geometry(50, 1, 128, 0, 49152);
  const ir::RuntimeTrace t = b.read();
  REQUIRE(t.work.size() == 4);
  // 256 threads, 32 registers: 2048 / 256 = 8 by threads, 65536 / (1024 x 8 warps) = 8 by registers.
  CHECK(t.work[0].blocks == 100);
  CHECK(t.work[0].resident_blocks_per_sm == 8);
  // 64 registers: 2048 per warp, 65536 / (2048 x 8) = 4.
  CHECK(t.work[1].blocks == 2000);
  CHECK(t.work[1].resident_blocks_per_sm == 4);
  CHECK(t.work[2].blocks == 0);  // a copy
  // 48 KiB of shared memory per block: 167936 / 49152 = 3 (threads would allow 16).
  CHECK(t.work[3].resident_blocks_per_sm == 3);

  SUBCASE("without deviceProperties the occupancy is unknown") {
    TraceBuilder bare = three_pieces();
    bare.properties = json::array();
    const ir::RuntimeTrace u = bare.read();
    CHECK(u.work[0].blocks == 100);
    CHECK(u.work[0].resident_blocks_per_sm == 0);
  }
  SUBCASE("a malformed grid is refused naming the field") {
    TraceBuilder bad = three_pieces();
    bad.events[2]["args"]["grid"] = {0, 1, 1};
    CHECK_THROWS_WITH_AS(bad.read(), doctest::Contains("field 'args.grid' = [0,1,1]"), FormatError);
  }
}

TEST_CASE("the transfer rules: under one wave kept, more wave scaled by bandwidth, copies by their link") {
  const costmodel::DeviceSpec a100 = costmodel::find_device("a100-40gb");
  const costmodel::DeviceSpec h100 = costmodel::find_device("h100-sxm-80gb");
  // Resident 4: a wave is 432 blocks on the A100, 528 on the H100.
  CHECK(costmodel::wave_transfer(431, 4, a100, h100).rule == TransferRule::under_one_wave);
  CHECK(costmodel::wave_transfer(431, 4, a100, h100).factor == 1.0);
  const costmodel::KernelTransfer full = costmodel::wave_transfer(432, 4, a100, h100);
  CHECK(full.rule == TransferRule::wave_scaled);
  CHECK(full.factor == doctest::Approx(1555.0 / 3350.0));
  // Under one wave on the H100 but not on the A100: wave scaled (Habitat asks for both).
  CHECK(costmodel::wave_transfer(500, 4, a100, h100).rule == TransferRule::wave_scaled);
  // Unknown occupancy: wave scaled.
  CHECK(costmodel::wave_transfer(10, 0, a100, h100).rule == TransferRule::wave_scaled);
  CHECK(costmodel::copy_transfer("Memcpy HtoD (Pinned -> Device)", a100, h100).factor ==
        doctest::Approx(0.5));
  CHECK(costmodel::copy_transfer("Memcpy DtoH (Device -> Pageable)", a100, h100).factor ==
        doctest::Approx(0.5));
  CHECK(costmodel::copy_transfer("Memset (Device)", a100, h100).factor == doctest::Approx(1555.0 / 3350.0));

  // A priced kernel: a compute-bound 8192^3 FP32 GEMM. The roofline's ratio is the FP32 peaks'.
  costmodel::CalibrationRow gemm;
  gemm.device = "a100-40gb";
  gemm.precision = "fp32";
  gemm.kernel = "gemm";
  gemm.m = gemm.n = gemm.k = 8192;
  gemm.shape = "aten::mm [8192,8192] [8192,8192]";
  costmodel::set_row_work(gemm, costmodel::gemm_work(8192, 8192, 8192, "fp32"));
  CHECK(costmodel::priced_transfer(gemm, a100, h100, "analytic").factor ==
        doctest::Approx(19.5 / 67.0).epsilon(0.002));
  CHECK(costmodel::priced_transfer(gemm, a100, a100, "waves").factor == 1.0);
  CHECK_THROWS_WITH_AS(costmodel::priced_transfer(gemm, a100, h100, "measured"),
                       "unknown kernel pricing source 'measured'; valid: waves, analytic", UnknownNameError);
}

TEST_CASE("work moved to another GPU replays to the hand-derived step; to its own GPU, to the replay") {
  const TraceBuilder b = three_pieces();
  const ir::RuntimeTrace t = b.read();
  const costmodel::DeviceSpec a100 = costmodel::find_device("a100-40gb");
  const costmodel::DeviceSpec h100 = costmodel::find_device("h100-sxm-80gb");
  const io::KinetoOpRecords none = io::kineto_op_records_if_shaped(b.document(), "hand.json");
  CHECK(none.ops.empty());  // no Input Dims: nothing priced, and no error

  const sim::OtherGpuWork same = sim::move_work_to_gpu(t, none, a100, a100, "waves");
  sim::RuntimeWhatIf w;
  w.work_scale = &same.work_scale;
  CHECK(sim::replay_runtime(t, w).step_ns == 1000 * kUs);

  const sim::OtherGpuWork moved = sim::move_work_to_gpu(t, none, a100, h100, "waves");
  CHECK(moved.work_by_rule[static_cast<size_t>(TransferRule::under_one_wave)] == 1);
  CHECK(moved.work_by_rule[static_cast<size_t>(TransferRule::wave_scaled)] == 1);
  CHECK(moved.work_by_rule[static_cast<size_t>(TransferRule::copy)] == 1);
  CHECK(moved.traced_ns_by_rule[static_cast<size_t>(TransferRule::wave_scaled)] == 335 * kUs);
  w.work_scale = &moved.work_scale;
  // small 20..120 as measured; large 335 us x 1555/3350 = 155.5 us: 120..275.5; the copy 10 us x
  // 25/50 = 5 us: 275.5..280.5; the synchronize returns 5 us after it (its residual), at 285.5; then
  // the 530 us of host time the trace shows: the step ends at 815.5 us.
  CHECK(sim::replay_runtime(t, w).step_ns == 815'500);
}

TEST_CASE("a kernel whose op has recorded shapes takes the cost source's ratio") {
  TraceBuilder b = three_pieces();
  // aten::mm around the second launch, with its shapes (PyTorch's record_shapes).
  b.events.push_back(
      {{"ph", "X"},
       {"cat", "cpu_op"},
       {"name", "aten::mm"},
       {"pid", 1},
       {"tid", 1},
       {"ts", 28},
       {"dur", 9},
       {"args", {{"Input Dims", {{4096, 4096}, {4096, 4096}}}, {"Input type", {"float", "float"}}}}});
  const ir::RuntimeTrace t = b.read();
  const io::KinetoOpRecords records = io::kineto_op_records_if_shaped(b.document(), "hand.json");
  REQUIRE(records.ops.size() == 1);
  const costmodel::DeviceSpec a100 = costmodel::find_device("a100-40gb");
  const costmodel::DeviceSpec h100 = costmodel::find_device("h100-sxm-80gb");
  const sim::OtherGpuWork moved = sim::move_work_to_gpu(t, records, a100, h100, "analytic");
  CHECK(moved.work_by_rule[static_cast<size_t>(TransferRule::priced)] == 1);
  // A 4096^3 FP32 GEMM is compute-bound on both: the ratio of the FP32 peaks.
  CHECK(moved.work_scale[1] == doctest::Approx(19.5 / 67.0).epsilon(0.002));
  CHECK(moved.work_scale[0] == 1.0);  // still under one wave
}

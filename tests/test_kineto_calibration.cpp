// Calibration rows from a PyTorch profiler trace recorded with record_shapes: each shaped aten op's
// kernels found through launch correlation and External id (innermost op), typed into the
// calibration CSV's kernels with bench-ops' work rules; errors for traces that cannot calibrate.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/kineto_calibration.hpp"
#include "io/kineto_op_records.hpp"
#include "support/error.hpp"
#include "tests/support/error_of.hpp"

using namespace mutwo::costmodel;
using namespace mutwo::ir;
using namespace mutwo::io;

namespace {

const std::string kFixtures = MUTWO_TEST_FIXTURES;
const std::string kShapes = kFixtures + "/calibration/kineto_shapes.json";

using mutwo::test::error_of;

}  // namespace

TEST_CASE("op records: each kernel counts for the innermost op that launched it") {
  const KinetoOpRecords r = read_kineto_op_records(kShapes);
  CHECK(r.device == "Tesla V100-SXM2-16GB");
  CHECK(r.shaped_ops == 6);  // linear, addmm, relu, bmm, cat, zeros
  // linear launched nothing itself (its addmm did); zeros launched nothing: 4 records keep kernels.
  REQUIRE(r.ops.size() == 4);
  CHECK(r.ops[0].name == "aten::addmm");
  CHECK(r.ops[0].gpu_ns == 10'000);
  CHECK(r.ops[0].input_dims[1] == std::vector<int64_t>{32, 128});
  CHECK(r.ops[1].name == "aten::relu");  // its launch has no External id: found by enclosure
  CHECK(r.ops[1].gpu_ns == 2'000);
  CHECK(r.ops[2].name == "aten::bmm");
  CHECK(r.ops[2].input_types[0] == "c10::Half");
  CHECK(r.ops[3].name == "aten::cat");
  CHECK(r.ops[3].input_dims[0].empty());  // a TensorList: no one shape
}

TEST_CASE("calibration rows: gemm, relu and a batched product with bench-ops' work; cat not typed") {
  const KinetoCalibration k = kineto_calibration_rows(read_kineto_op_records(kShapes), "v100-16gb", "k.json");
  REQUIRE(k.rows.size() == 3);
  CHECK(k.ops == 4);
  CHECK(k.gpu_ns == 16'000);
  CHECK(k.typed_gpu_ns == 15'000);
  CHECK(k.skipped == std::map<std::string, int64_t>{{"aten::cat", 1}});
  // addmm [32,128] x [128,64] fp32: flops 2*32*64*128 = 524,288; bytes (32*128 + 128*64 + 32*64) * 4
  // = 57,344.
  const CalibrationRow& gemm = k.rows[0];
  CHECK(gemm.kernel == "gemm");
  CHECK(gemm.variant.empty());
  CHECK(gemm.precision == "fp32");
  CHECK((gemm.m == 32 && gemm.n == 64 && gemm.k == 128));
  CHECK(gemm.flops == 524'288);
  CHECK(gemm.bytes == 57'344);
  CHECK(gemm.time_ns == 10'000);
  CHECK(gemm.device == "v100-16gb");
  CHECK(gemm.source == "kineto k.json");
  CHECK(gemm.shape == "aten::addmm [64] [32,128] [128,64] [] []");
  // relu on [32, 64]: m = 2,048 elements, n = k = 1.
  CHECK(k.rows[1].kernel == "relu");
  CHECK(k.rows[1].m == 2048);
  CHECK(k.rows[1].time_ns == 2'000);
  // bmm [4,16,8] x [4,8,16] fp16: batch 4 of m = 16, n = 16, k = 8; flops 2*4*16*16*8 = 16,384;
  // bytes 4 * (16*8 + 8*16 + 16*16) * 2 = 4,096 (every batch's operands).
  const CalibrationRow& bmm = k.rows[2];
  CHECK(bmm.kernel == "gemm");
  CHECK(bmm.precision == "fp16");
  CHECK((bmm.batch == 4 && bmm.m == 16 && bmm.n == 16 && bmm.k == 8));
  CHECK(bmm.flops == 16'384);
  CHECK(bmm.bytes == 4'096);
}

TEST_CASE("read_calibration_input: a trace by content, its device from deviceProperties or --device") {
  std::string note;
  const auto rows = read_calibration_input(kShapes, "", &note);
  CHECK(rows.size() == 3);
  CHECK(note ==
        "kineto_shapes.json: 3 rows on v100-16gb from 4 shaped ops with kernels (0.015 of 0.016 GPU ms "
        "typed); not "
        "typed: aten::cat 1");
  // The real sampled training trace of HTA's test data names no GPU.
  const std::string sampled = kFixtures + "/kineto/sampled_training_rank0.json.gz";
  CHECK(error_of([&] { read_calibration_input(sampled); })
            .ends_with("sampled_training_rank0.json.gz: the trace names no GPU (no deviceProperties): name "
                       "the catalog "
                       "device it ran on with --device"));
  const auto a100 = read_calibration_input(sampled, "a100-40gb");
  CHECK(a100.size() == 420);
  const std::string no_shapes = kFixtures + "/kineto/v100_training_rank0.pt.trace.json.gz";
  CHECK(error_of([&] { read_calibration_input(no_shapes); })
            .ends_with("no CPU op has \"Input Dims\": the trace was recorded without record_shapes=True, so "
                       "its kernels "
                       "have no shapes to calibrate with"));
  CHECK(error_of([] {
          kineto_op_records(nlohmann::json::parse(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op",
      "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"Input Dims": [[2, -1]]}}]})"),
                            "t.json");
        }) == "t.json: event 0 ('aten::mm'): field 'args.Input Dims'[0] = [2,-1], expected sizes >= 0");
}

namespace {

// A trace of one shaped op per entry, each with one kernel of `dur_us` on device `device`.
struct TraceOp {
  std::string name;
  std::string dims;   // "Input Dims" JSON
  std::string types;  // "Input type" JSON
  double dur_us = 10;
  int device = 0;
};

nlohmann::json trace_of(const std::vector<TraceOp>& ops, const std::string& second_gpu = "Tesla T4") {
  nlohmann::json t = nlohmann::json::parse(
      R"({"deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-16GB"}, {"id": 1, "name": ")" + second_gpu +
      R"("}], "traceEvents": []})");
  for (size_t i = 0; i < ops.size(); ++i) {
    const int64_t ts = 100 * static_cast<int64_t>(i + 1), ext = static_cast<int64_t>(i + 1);
    t["traceEvents"].push_back(nlohmann::json::parse(fmt::format(
        R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": 1, "ts": {}, "dur": 30, "args":
        {{"External id": {}, "Input Dims": {}, "Input type": {}}}}})",
        ops[i].name, ts, ext, ops[i].dims, ops[i].types)));
    t["traceEvents"].push_back(nlohmann::json::parse(fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {},
        "dur": 5, "args": {{"External id": {}, "correlation": {}}}}})",
        ts + 5, ext, 10 + ext)));
    t["traceEvents"].push_back(nlohmann::json::parse(fmt::format(
        R"({{"ph": "X", "cat": "kernel", "name": "k", "pid": {}, "tid": 7, "ts": {}, "dur": {}, "args":
        {{"device": {}, "stream": 7, "correlation": {}}}}})",
        ops[i].device, ts + 10, ops[i].dur_us, ops[i].device, 10 + ext)));
  }
  return t;
}

KinetoCalibration rows_of(const nlohmann::json& trace) {
  return kineto_calibration_rows(kineto_op_records(trace, "t.json"), "v100-16gb", "t.json");
}

}  // namespace

TEST_CASE("calibration rows from a trace refuse what the CSV readers refuse, naming the event") {
  // An addmm recorded with one input (no bias type to read past) maps to no row; it read past the
  // end of its types and crashed.
  CHECK(rows_of(trace_of({{"aten::addmm", "[[32, 128]]", R"(["float"])"}})).rows.empty());
  // A 4096^3 GEMM in 1 ns: no GPU's rate (the CSV readers' check_measured_time).
  CHECK(error_of([] {
          rows_of(trace_of({{"aten::mm", "[[4096, 4096], [4096, 4096]]", R"(["float", "float"])", 0.001}}));
        }) ==
        "t.json: event 0: field 'dur (its kernels, summed)' = '1 ns': 137438953472 FLOPs in 1 ns is "
        "1.37e+11 FLOP/ns, more than 2.25e+07 (10 x the fastest catalog GPU's peak): not a measured time");
  // A shape past 2^63 elements: an error, not a wrapped -1 or 0 (which dropped the op unsaid).
  CHECK(error_of([] {
          rows_of(trace_of({{"aten::relu", "[[4611686018427387904, 4]]", R"(["float"])"}}));
        }) ==
        "t.json: event 0 ('aten::relu'): shape [4611686018427387904,4]: its element count overflows 64-bit "
        "integers");
}

TEST_CASE("op records of a trace are one GPU model's: a second model's kernels are refused") {
  const TraceOp mm{"aten::mm", "[[64, 64], [64, 64]]", R"(["float", "float"])"};
  TraceOp on_second = mm;
  on_second.device = 1;
  // The T4's kernel was fitted as a V100's row.
  CHECK(error_of([&] {
          kineto_op_records(trace_of({mm, mm, on_second}), "t.json");
        }) ==
        "t.json: kernels ran on device 0 ('Tesla V100-SXM2-16GB', 2 kernels) and device 1 ('Tesla T4', 1 "
        "kernels): a trace's rows are one GPU's; give each GPU's trace on its own");
  // Two GPUs of one model are one GPU's measurements.
  const KinetoOpRecords same =
      kineto_op_records(trace_of({mm, mm, on_second}, "Tesla V100-SXM2-16GB"), "t.json");
  CHECK(same.device == "Tesla V100-SXM2-16GB");
  CHECK(same.ops.size() == 3);
}

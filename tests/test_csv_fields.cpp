// The field rules every measured-kernel CSV reader shares (costmodel/csv_fields.hpp): a kernel time in
// ms becomes whole ns, and a value no kernel has is refused naming the field, not wrapped or rounded away;
// a time faster than any GPU and a shape past 64 bits (costmodel/calibration_csv.hpp) likewise.
#include <doctest/doctest.h>

#include <string>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/csv_fields.hpp"
#include "costmodel/deepbench_csv.hpp"
#include "support/error.hpp"

using namespace mutwo::costmodel;

namespace {

std::string refusal(const std::string& value) {
  try {
    return std::to_string(ms_to_ns("g.csv:2", "time_ms", value));
  } catch (const mutwo::FormatError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a kernel time in ms: whole ns, at least 1, at most 1e6 ms") {
  CHECK(refusal("0.038") == "38000");
  CHECK(refusal("0.0000004") == "1");  // 0.4 ns: a measured time never rounds to 0
  CHECK(refusal("1e6") == "1000000000000");
  CHECK(refusal("1000000.5") == "g.csv:2: field 'time_ms' = '1000000.5': must be at most 1e+06 ms");
  // 1e308 ms used to reach the fit as -9.2e18 ns (and `calibrate --waves` fitted it).
  CHECK(refusal("1e308") == "g.csv:2: field 'time_ms' = '1e308': must be at most 1e+06 ms");
  CHECK(refusal("0") == "g.csv:2: field 'time_ms' = '0': must be > 0");
  CHECK(refusal("nan") == "g.csv:2: field 'time_ms' = 'nan': must be a number");
  CHECK(refusal("inf") == "g.csv:2: field 'time_ms' = 'inf': must be a number");
  // DeepBench's reader uses the rule.
  CHECK_THROWS_WITH_AS(convert_deepbench_gemm("gpu,precision,source,M,N,K,a_transpose,b_transpose,time_ms\n"
                                              "V100,fp32,x,1,1,1,N,N,1e308\n",
                                              "g.csv"),
                       "g.csv:2: field 'time_ms' = '1e308': must be at most 1e+06 ms", mutwo::FormatError);
}

TEST_CASE("a measured time no GPU reaches, and a shape past 64 bits, are refused naming the row") {
  const std::string header =
      "device,precision,kernel,variant,category,batch,m,n,k,flops,bytes,time_ns,timing,source,shape\n";
  const auto native = [&](const std::string& row) {
    try {
      return std::to_string(parse_calibration_csv(header + row + "\n", "n.csv").size());
    } catch (const mutwo::FormatError& e) {
      return std::string(e.what());
    }
  };
  // B200's dense FP16, 2,250 TFLOPS, is the catalog's fastest: 10 x is 2.25e7 FLOP/ns.
  CHECK(max_measured_flops_per_ns() == 2.25e7);
  CHECK(native("h200,fp32,gemm,,matmul,1,64,64,64,524288,49152,27824,host-paced,x,") == "1");
  // A 137-GFLOP GEMM in 1 ns zeroed every coefficient of the fit.
  CHECK(native("h200,fp32,gemm,,matmul,1,4096,4096,4096,137438953472,201326592,1,host-paced,x,") ==
        "n.csv:2: field 'time_ns' = '1': 137438953472 FLOPs in 1 ns is 1.37e+11 FLOP/ns, more than 2.25e+07 "
        "(10 x the fastest catalog GPU's peak): not a measured time");
  // Past DeepBench's cap of 1e6 ms.
  CHECK(native("h200,fp32,gemm,,matmul,1,64,64,64,524288,49152,9000000000000000000,kernel,x,") ==
        "n.csv:2: field 'time_ns' = '9000000000000000000': must be at most 1000000000000 ns (1e+06 ms): no "
        "kernel runs that long");
  // The shape overflows as DeepBench's reader says; a gemm's flops are its shape's.
  CHECK(
      native("h200,fp32,gemm,,matmul,4611686018427387904,4611686018427387904,4611686018427387904,64,524288,"
             "49152,27824,host-paced,x,") ==
      "n.csv:2: gemm 4611686018427387904 x 4611686018427387904x4611686018427387904x64: 4611686018427387904 x "
      "64 overflows 64-bit integers");  // m x k, the first product, on every compiler
  CHECK(native("h200,fp32,gemm,,matmul,1,64,64,64,524289,49152,27824,host-paced,x,") ==
        "n.csv:2: field 'flops' = '524289': a gemm's flops are 2*batch*m*n*k = 524288");
  CHECK(native("h200,fp32,softmax,,reduction,1,4611686018427387904,4,1,5,8,27824,host-paced,x,")
            .find("n.csv:2: softmax 4611686018427387904x4x1: ") == 0);
  // DeepBench's reader: 1e-7 ms for 99 MFLOP.
  CHECK_THROWS_WITH_AS(
      convert_deepbench_gemm("gpu,precision,source,M,N,K,a_transpose,b_transpose,time_ms\n"
                             "V100,fp32,x,1760,16,1760,N,N,0.0000001\n",
                             "g.csv"),
      "g.csv:2: field 'time_ms' = '0.0000001': 99123200 FLOPs in 1 ns is 9.91e+07 FLOP/ns, more "
      "than 2.25e+07 (10 x the fastest catalog GPU's peak): not a measured time",
      mutwo::FormatError);
}

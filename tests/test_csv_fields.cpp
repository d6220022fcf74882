// The field rules every measured-kernel CSV reader shares (costmodel/csv_fields.hpp): a kernel time in
// ms becomes whole ns, and a value no kernel has is refused naming the field, not wrapped or rounded away.
#include <doctest/doctest.h>

#include <string>

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

// A server plan checked one GPU at a time (issue 21, item 5): the executor stays single-GPU, so each
// GPU's part of a model array spread over a server (policies/server_search.hpp) runs alone on the
// executor, within the limit the search planned for, with the memory the simulator predicted.
#include "tests/support/torch_doctest.hpp"

#include <cmath>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/server_catalog.hpp"
#include "exec/device_backend.hpp"
#include "exec/interpreter.hpp"
#include "policies/server_search.hpp"
#include "sim/simulator.hpp"
#include "tests/support/server_arrays.hpp"

using namespace mutwo;

TEST_CASE("every GPU's part of 7 gpt2-mini over Harmony's server trains alone at the predicted peak") {
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  const policies::ServerSearchReport report = policies::run_server_search(test::gpt2_mini_array(7, cost));
  REQUIRE(report.best_parts.size() == 4);
  int32_t first_model = 0;
  for (const policies::ServerGpuPart& part : report.best_parts) {
    CAPTURE(part.gpu);
    REQUIRE(part.schedule.has_value());
    auto backend = exec::make_backend("cpu");
    exec::InterpreterOptions options;
    options.memory_limit_bytes = report.memory_limit_bytes;  // enforced by accounting, as the GPU would
    options.first_model = first_model;  // seeded as these models of the whole array
    exec::Interpreter interpreter(*part.schedule, *backend, options);
    const exec::StepResult first = interpreter.step();
    const exec::StepResult second = interpreter.step();
    REQUIRE_FALSE(first.oom);
    REQUIRE_FALSE(second.oom);
    // Swaps and recomputation in list order on the CPU: the accounted peak is the simulator's to the
    // byte (1,048,064 B for two fused models, 599,552 B for one), though with swaps not always at the
    // same instruction (the simulator counts a prefetch at its simulated start, the interpreter at
    // its place in the list: 136 vs 135 on GPUs 0-2).
    const sim::Prediction p = sim::simulate(*part.schedule, cost, sim::SimOptions{});
    CHECK(p.peak_bytes == part.peak_bytes);
    CHECK(second.accounted_peak_bytes == part.peak_bytes);
    CHECK(part.peak_bytes == (part.architectures.front().count == 2 ? 1'048'064 : 599'552));
    REQUIRE(second.losses.size() == static_cast<size_t>(part.architectures.front().count));
    for (size_t m = 0; m < second.losses.size(); ++m) {
      CHECK(std::isfinite(second.losses[m]));
      CHECK(second.losses[m] < first.losses[m]);  // Adam's first step lowers each model's loss
    }
    first_model += part.architectures.front().count;
  }
  CHECK(first_model == 7);
}

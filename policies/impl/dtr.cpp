// dtr: Dynamic Tensor Rematerialization (Kirisame et al., "Dynamic Tensor Rematerialization",
// ICLR 2021). Decides at run time: before each op, evicts the resident tensor of smallest
// h_DTR = cost / (memory x staleness) until the op fits the budget, and recomputes evicted tensors
// when they are read again. mutwo runs the engine's dynamic eviction over the base schedule
// (policies/dtr_run.hpp) and returns what it executed as a static Schedule; "dtr-eqclass" uses the
// paper's union-find approximation of the evicted neighbourhood (policies/dtr_heuristics.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "policies/dtr_heuristics.hpp"
#include "policies/dtr_run.hpp"
#include "policies/policy_registry.hpp"
#include "policies/policy_result.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

namespace {

class DtrPolicy : public MemoryPolicy {
 public:
  DtrPolicy(std::string name, std::string heuristic)
      : name_(std::move(name)), heuristic_(std::move(heuristic)) {}
  std::string_view name() const override { return name_; }

  PolicyResult plan(const PolicyInput& input) const override {
    check_policy_input(input, name_);
    DtrRun run = run_at(input, input.memory_limit_bytes);
    std::string failure;
    if (!run.fits) {
      failure = run.failure;
      run = smallest_fitting_run(input, run);
    }
    run.schedule.policy = name_;
    std::string note = fmt::format("{} evicted, {} recomputed ({:.3f} ms), heuristic {}", run.evictions,
                                   run.remats, static_cast<double>(run.remat_ns) / 1e6, heuristic_);
    if (!failure.empty()) {
      note = fmt::format("infeasible: {}; plan shown fits {} B: {}", failure, run.peak_bytes, note);
    }
    // The run's own figures: the engine already simulated what it recorded. DTR's runtime has no
    // host, but the executor issues the recorded program as it issues any static plan, so with a
    // host mode it is priced again with the host in front of the GPU (one stream of computes and
    // frees: the same memory, in the same order).
    if (input.host_mode != sim::HostMode::none) return evaluate_schedule(std::move(run.schedule), input, std::move(note));
    return policy_result(std::move(run.schedule), run.prediction, input, std::move(note));
  }

 private:
  DtrRun run_at(const PolicyInput& input, int64_t budget_bytes) const {
    const std::unique_ptr<sim::EvictionHeuristic> h = make_dtr_heuristic(heuristic_);
    return run_dtr(*input.base, *input.cost, budget_bytes, *h);
  }

  // The contract's "most memory-saving plan": bisects for the smallest budget the runtime meets
  // (to 0.1 %), between the failed one and the base's own peak, where nothing is evicted.
  DtrRun smallest_fitting_run(const PolicyInput& input, const DtrRun& failed) const {
    DtrRun best = run_at(input, std::numeric_limits<int64_t>::max());
    int64_t lo = std::max(input.memory_limit_bytes, failed.resident_bytes - 1);  // does not fit
    int64_t hi = best.peak_bytes;                                                // fits
    while (hi - lo > std::max<int64_t>(512, hi / 1000)) {
      const int64_t mid = lo + (hi - lo) / 2;
      DtrRun run = run_at(input, mid);
      if (run.fits) {
        hi = mid;
        best = std::move(run);
      } else {
        lo = mid;
      }
    }
    return best;
  }

  std::string name_;
  std::string heuristic_;
};

}  // namespace

namespace {

void register_dtr_policy(PolicyRegistry& registry) {
  registry.add({"dtr", "evict by cost / (memory x staleness) at simulated run time, recompute on demand",
                "Kirisame et al., ICLR 2021", [] { return std::make_unique<DtrPolicy>("dtr", "dtr"); },
                /*in_default_search=*/true, /*static_plan=*/false});
  registry.add({"dtr-eqclass", "dtr with evicted neighbourhoods approximated by union-find classes",
                "Kirisame et al., ICLR 2021",
                [] { return std::make_unique<DtrPolicy>("dtr-eqclass", "dtr-eqclass"); },
                /*in_default_search=*/true, /*static_plan=*/false});
}

[[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(60, register_dtr_policy);

}  // namespace

}  // namespace mutwo::policies

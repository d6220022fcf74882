// mutwo (μ-TWO, Purandare et al., MLSys 2023): the strategy the partition search itself makes
// (policies/partition_search.hpp): every sub-array partition x policy, multiplexed, the best feasible.
// Its entry has no run of its own: the search fills its rows.
#include "policies/strategy.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {
namespace {

void register_mutwo(StrategyRegistry& registry) {
  registry.add({"mutwo",
                "μ-TWO (Purandare et al., MLSys 2023): every sub-array partition x policy, multiplexed, best "
                "feasible",
                {}});
}

[[maybe_unused]] const bool kRegistered = Plugins<StrategyRegistry>::add(40, register_mutwo);

}  // namespace
}  // namespace mutwo::policies

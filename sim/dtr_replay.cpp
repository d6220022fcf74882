// Replay of a DTR operator log (sim/dtr_replay.hpp) on simrd's runtime (sim/dtr_runtime.hpp).
#include "sim/dtr_replay.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "sim/dtr_log_graph.hpp"
#include "sim/dtr_runtime.hpp"
#include "support/error.hpp"

namespace mutwo::sim {
std::string_view dtr_outcome_name(DtrOutcome outcome) {
  switch (outcome) {
    case DtrOutcome::ok:
      return "ok";
    case DtrOutcome::oom:
      return "OOM";
    case DtrOutcome::remat_limit_exceeded:
      return "remat_limit_exceeded";
  }
  return "?";
}

DtrReplayResult replay_dtr_log(const io::DtrLog& log, int64_t budget_bytes, double remat_limit_ns,
                               const EvictionHeuristic& heuristic) {
  return replay_dtr_log(log, DtrLogGraph(log), budget_bytes, remat_limit_ns, heuristic);
}

DtrReplayResult replay_dtr_log(const io::DtrLog& log, const DtrLogGraph& graph, int64_t budget_bytes,
                               double remat_limit_ns, const EvictionHeuristic& heuristic) {
  return DtrRuntime(log, graph, budget_bytes, remat_limit_ns, heuristic).run();
}

}  // namespace mutwo::sim

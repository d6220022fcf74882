#include "policies/dtr_run.hpp"

#include <fmt/format.h>

#include <vector>

#include "sim/simulator.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

namespace {

// The policy's input contract: every op computed once, only compute and free.
void check_base(const ir::Schedule& base) {
  const ir::Graph& g = base.graph;
  std::vector<ir::InstrId> seen(g.ops.size(), ir::kNoId);
  for (const ir::Instruction& in : base.instructions) {
    if (in.kind == ir::InstrKind::compute) {
      const auto k = static_cast<size_t>(in.op);
      if (in.op < 0 || k >= g.ops.size()) throw Error(fmt::format("dtr: base instruction {} computes no op", in.id));
      if (seen[k] != ir::kNoId) {
        throw Error(fmt::format("dtr: base schedule computes op {} '{}' twice (instructions {} and {})", in.op,
                                g.ops[k].name, seen[k], in.id));
      }
      seen[k] = in.id;
    } else if (in.kind != ir::InstrKind::free) {
      throw Error(fmt::format("dtr: base schedule is not a base schedule: instruction {} is a {}", in.id,
                              ir::instr_kind_name(in.kind)));
    }
  }
  for (size_t k = 0; k < g.ops.size(); ++k) {
    if (seen[k] == ir::kNoId)
      throw Error(fmt::format("dtr: base schedule never computes op {} '{}'", k, g.ops[k].name));
  }
}

}  // namespace

DtrRun run_dtr(const ir::Schedule& base, const costmodel::OpCostModel& cost, int64_t budget_bytes,
               const sim::EvictionHeuristic& heuristic) {
  if (budget_bytes <= 0) throw Error(fmt::format("dtr: budget_bytes = {} must be > 0", budget_bytes));
  check_base(base);
  sim::SimOptions options;
  options.memory_limit_bytes = budget_bytes;
  options.eviction = &heuristic;
  options.remat_overhead_limit = 2.0;  // simrd's thrashing limit: remat time up to the step's compute
  options.record_executed = true;
  sim::Prediction p = sim::simulate(base, cost, options);
  DtrRun r;
  r.schedule.graph = base.graph;
  r.schedule.sub_arrays = base.sub_arrays;
  r.schedule.instructions = std::move(p.executed);
  p.executed.clear();
  r.fits = !p.oom;
  r.failure = p.oom_message;
  r.peak_bytes = p.peak_bytes;
  r.resident_bytes = p.resident_bytes;
  r.clock_ns = p.step_time_ns;
  r.remat_ns = p.recompute_ns;
  r.evictions = p.evictions;
  r.remats = p.recomputes;
  // As the recorded schedule simulates with no limit: no OOM, its own figures.
  p.oom = false;
  p.oom_message.clear();
  p.memory_limit_bytes = 0;
  p.evictions = 0;
  p.recomputes = 0;
  r.prediction = std::move(p);
  return r;
}

}  // namespace mutwo::policies

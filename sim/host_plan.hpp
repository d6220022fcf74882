#pragma once
// The host timeline of a Schedule (docs/ARCHITECTURE.md "Simulation"): the CPU issues the schedule's GPU
// instructions in list order, each taking its issue time; an instruction may start on the GPU only
// once issued; the host runs ahead of the GPU by at most `queue_depth` issued-but-unstarted
// instructions; after a host_sync op it waits for that op to finish. Frees are allocator
// bookkeeping, not issued work. One rule for both engines: the single-GPU simulator replays it, and
// a Schedule lifted onto a server GPU (policies/server_lift.hpp) carries it into its tasks.
#include <cstdint>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "sim/host_mode.hpp"

namespace mutwo::sim {

struct HostPlan {
  bool on = false;
  std::vector<int64_t> issue_ns;  // per instruction; -1: not issued by the host (free)
  std::vector<uint8_t> sync;      // per instruction: the host waits for it to finish
  int32_t queue_depth = 0;        // 0: unbounded
};

// The host's issue time per instruction in `mode` (off when no instruction costs host time, as with
// a device whose host figures are 0, and with dynamic eviction, whose runtime DTR defines without a
// host: `evicting`).
HostPlan make_host_plan(const ir::Schedule& s, const costmodel::OpCostModel& cost, HostMode mode,
                        bool evicting = false);

}  // namespace mutwo::sim

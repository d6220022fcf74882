#include "sim/host_plan.hpp"

namespace mutwo::sim {

using ir::InstrKind;
using ir::Instruction;
using ir::Schedule;

HostPlan make_host_plan(const Schedule& s, const costmodel::OpCostModel& cost, HostMode mode, bool evicting) {
  HostPlan h;
  if (mode == HostMode::none || evicting) return h;
  const costmodel::HostDispatch& d = cost.device().host;
  const size_t n = s.instructions.size();
  h.issue_ns.assign(n, -1);
  h.sync.assign(n, 0);
  h.queue_depth = d.launch_queue_depth;
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& in = s.instructions[i];
    // A host optimizer update runs on its own host thread (ZeRO-Offload's CPU Adam), not issued.
    if (in.kind == InstrKind::free || ir::runs_on_host(s, in)) continue;
    int64_t ns = 0;
    if (mode == HostMode::cuda_graph) {
      ns = d.graph_kernel_ns;
    } else if (ir::runs_op(in.kind)) {
      const auto issuer = mode == HostMode::libtorch ? costmodel::HostIssuer::cpp : costmodel::HostIssuer::python;
      ns = cost.op_host_ns(s.graph, s.graph.op(in.op), issuer);
    } else {
      ns = d.copy_issue_ns;
    }
    if (ir::runs_op(in.kind)) {
      const ir::Op& op = s.graph.op(in.op);
      h.sync[i] = op.attrs.contains("host_sync") ? 1 : 0;
    }
    h.issue_ns[i] = ns;
    any = any || ns > 0 || h.sync[i] != 0;
  }
  h.on = any;
  return h;
}

}  // namespace mutwo::sim

#include "policies/server_lift.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "costmodel/host_optimizer.hpp"
#include "sim/host_plan.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

using ir::InstrKind;
using ir::Instruction;
using ir::Payload;
using ir::ServerTask;
using ir::ServerTaskKind;
using ir::TensorRole;

namespace {

Payload payload_of(TensorRole role) {
  switch (role) {
    case TensorRole::weight: return Payload::weights;
    case TensorRole::gradient: return Payload::weight_gradients;
    case TensorRole::optimizer_state: return Payload::optimizer_state;
    default: return Payload::tensor;
  }
}

}  // namespace

void lift_schedule(const ir::Schedule& schedule, const costmodel::OpCostModel& cost, int32_t gpu,
                   ir::ServerSchedule& into, sim::HostMode host_mode) {
  if (gpu < 0 || gpu >= into.gpu_count) {
    throw Error(fmt::format("lift_schedule: gpu = {} must be in [0, {})", gpu, into.gpu_count));
  }
  const ir::Graph& g = schedule.graph;
  const auto base = static_cast<int32_t>(into.tasks.size());
  const sim::HostPlan host = sim::make_host_plan(schedule, cost, host_mode);
  if (host.on) into.launch_queue_depth = host.queue_depth;
  // Per tensor, the instructions that touched it since its last free: a free follows all of them.
  std::vector<std::vector<int32_t>> touched(g.tensors.size());
  for (const Instruction& in : schedule.instructions) {
    ServerTask t;
    t.id = base + in.id;
    t.gpu = gpu;
    if (host.on) {
      t.issue_ns = host.issue_ns[static_cast<size_t>(in.id)];
      t.host_sync = host.sync[static_cast<size_t>(in.id)] != 0;
    }
    for (const ir::InstrId w : in.waits) t.waits.push_back(base + w);
    switch (in.kind) {
      case InstrKind::compute:
      case InstrKind::recompute: {
        const ir::Op& op = g.op(in.op);
        t.kind = ServerTaskKind::compute;
        if (ir::runs_on_host(schedule, in)) {  // a host-placed optimizer's update, on the host CPU
          t.stream = ir::kServerHostCpuStream;
          t.duration_ns = costmodel::host_optimizer_ns(cost.device(), op);
        } else {
          t.stream = ir::kServerComputeStream;
          t.duration_ns = cost.op_duration_ns(g, op);
        }
        t.label = fmt::format("{} {}", in.kind == InstrKind::compute ? "compute" : "recompute", op.name);
        for (const auto id : op.inputs) touched[static_cast<size_t>(id)].push_back(t.id);
        for (const auto id : op.outputs) touched[static_cast<size_t>(id)].push_back(t.id);
        break;
      }
      case InstrKind::swap_out:
      case InstrKind::swap_in: {
        const ir::Tensor& tensor = g.tensor(in.tensor);
        const bool out = in.kind == InstrKind::swap_out;
        t.kind = ServerTaskKind::transfer;
        t.stream = out ? ir::kServerToHostStream : ir::kServerFromHostStream;
        t.from = out ? gpu : ir::kHostSide;
        t.to = out ? ir::kHostSide : gpu;
        t.bytes = tensor.bytes;
        t.payload = payload_of(tensor.role);
        t.label = fmt::format("{} {}", out ? "swap_out" : "swap_in", tensor.name);
        touched[static_cast<size_t>(in.tensor)].push_back(t.id);
        break;
      }
      case InstrKind::free: {
        // On its own stream, as the single-GPU engine runs it (sim/simulator.hpp): what follows on
        // that stream waits for it, and it waits for every earlier toucher of its tensor (a compute
        // stream stalls behind the free of a tensor still being swapped out).
        t.kind = ServerTaskKind::compute;
        t.stream = in.stream == ir::kDeviceToHostStream   ? ir::kServerToHostStream
                   : in.stream == ir::kHostToDeviceStream ? ir::kServerFromHostStream
                   : in.stream == schedule.host_stream    ? ir::kServerHostCpuStream
                                                          : ir::kServerComputeStream;
        t.label = fmt::format("free {}", g.tensor(in.tensor).name);
        auto& readers = touched[static_cast<size_t>(in.tensor)];
        t.waits.insert(t.waits.end(), readers.begin(), readers.end());
        readers.clear();
        break;
      }
    }
    std::sort(t.waits.begin(), t.waits.end());
    t.waits.erase(std::unique(t.waits.begin(), t.waits.end()), t.waits.end());
    into.tasks.push_back(std::move(t));
  }
}

}  // namespace mutwo::policies

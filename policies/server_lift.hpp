#pragma once
// A single-GPU Schedule placed on one GPU of a server: each instruction becomes a server task
// (compute and recompute with the cost model's duration, a host-placed optimizer's updates on the
// GPU's host CPU stream at the host's update rate, swaps as copies to or from the host over that
// GPU's links, frees as 0 ns markers on their own stream after every earlier toucher of their
// tensor, as the single-GPU engine runs them), so that several GPUs' plans run together and their swaps share the server's links (μ-TWO arrays spread
// over a server, each GPU's part planned by the single-GPU search). Memory stays the single-GPU
// simulator's business: lifted tasks allocate nothing.
#include <cstdint>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "ir/server_schedule.hpp"
#include "sim/host_mode.hpp"

namespace mutwo::policies {

// Appends `schedule`'s instructions to `into` as tasks of GPU `gpu` (< into.gpu_count). Extra
// compute streams of the schedule (a replayed multi-stream trace's; the search makes none) run on
// the GPU's compute stream, in list order. Throws Error on a GPU index out of range.
// With a host mode other than none the tasks carry the host timeline the single-GPU simulator
// replays for that mode (sim/host_plan.hpp): each GPU's host issues its part.
void lift_schedule(const ir::Schedule& schedule, const costmodel::OpCostModel& cost, int32_t gpu,
                   ir::ServerSchedule& into, sim::HostMode host_mode = sim::HostMode::none);

}  // namespace mutwo::policies

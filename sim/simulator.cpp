#include "sim/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/memory_rule.hpp"
#include "ir/unrolled_schedule.hpp"
#include "sim/dynamic_eviction.hpp"
#include "sim/executed_instruction.hpp"
#include "sim/host_plan.hpp"
#include "sim/memory_simulator.hpp"
#include "sim/replay_loop.hpp"
#include "sim/replay_plan.hpp"

namespace mutwo::sim {

using ir::InstrId;
using ir::InstrKind;
using ir::Instruction;
using ir::kNoId;
using ir::Schedule;
using ir::TensorId;
using ir::UnrolledSchedule;

namespace {

std::string ns_as_ms(int64_t ns) {
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

// Timeline events from the executed instructions, in instruction id order (the schedule's ids, or
// the executed ids with dynamic eviction).
void fill_timeline(const Schedule& s, const std::vector<ExecutedInstruction>& executed, bool renumbered,
                   Timeline& timeline) {
  const ir::Graph& g = s.graph;
  for (size_t k = 0; k < executed.size(); ++k) {
    const ExecutedInstruction& x = executed[k];
    TimelineEvent ev;
    ev.instruction = renumbered ? static_cast<InstrId>(k) : x.original;
    ev.kind = x.kind;
    ev.stream = x.stream;
    ev.start_ns = x.start_ns;
    ev.end_ns = x.start_ns + x.duration_ns;
    if (ir::runs_op(x.kind)) {
      const ir::Op& op = g.op(x.target);
      ev.name = op.name;
      ev.phase = op.phase;
      ev.op = x.target;
    } else {
      const ir::Tensor& t = g.tensor(x.target);
      ev.name = t.name;
      ev.phase = t.producer != kNoId ? g.op(t.producer).phase : ir::Phase::forward;
      ev.tensor = x.target;
    }
    timeline.events.push_back(std::move(ev));
  }
  if (!renumbered) {
    std::stable_sort(timeline.events.begin(), timeline.events.end(),
                     [](const TimelineEvent& a, const TimelineEvent& b) { return a.instruction < b.instruction; });
  }
}

// The host's issue spans as timeline events on the host track, in instruction order.
void add_host_track(const Schedule& s, const HostPlan& host, const std::vector<int64_t>& host_start_ns,
                    Timeline& timeline) {
  for (size_t i = 0; i < s.instructions.size(); ++i) {
    if (host.issue_ns[i] < 0 || host_start_ns[i] < 0) continue;
    const Instruction& in = s.instructions[i];
    TimelineEvent ev;
    ev.instruction = in.id;
    ev.kind = in.kind;
    ev.stream = kHostTrack;
    ev.start_ns = host_start_ns[i];
    ev.end_ns = host_start_ns[i] + host.issue_ns[i];
    if (ir::runs_op(in.kind)) {
      const ir::Op& op = s.graph.op(in.op);
      ev.name = op.name;
      ev.phase = op.phase;
      ev.op = in.op;
    } else {
      ev.name = s.graph.tensor(in.tensor).name;
      ev.tensor = in.tensor;
    }
    timeline.events.push_back(std::move(ev));
  }
}

// The executed instructions as a Schedule's list: ids renumbered in start order, waits mapped.
std::vector<Instruction> executed_instructions(const Schedule& s,
                                               const std::vector<ExecutedInstruction>& executed) {
  std::vector<InstrId> new_id(s.instructions.size(), kNoId);
  std::vector<Instruction> out;
  out.reserve(executed.size());
  for (const ExecutedInstruction& x : executed) {
    Instruction in;
    in.id = static_cast<InstrId>(out.size());
    in.kind = x.kind;
    in.stream = x.stream;
    (ir::runs_op(x.kind) ? in.op : in.tensor) = x.target;
    if (x.original != kNoId) {
      new_id[static_cast<size_t>(x.original)] = in.id;
      for (InstrId w : s.instructions[static_cast<size_t>(x.original)].waits) {
        if (new_id[static_cast<size_t>(w)] != kNoId) in.waits.push_back(new_id[static_cast<size_t>(w)]);
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

// One replay of `schedule`; with `unrolled` (whose schedule it is, ir/unrolled_schedule.hpp), the
// iterations' ends and the steady-state step too.
Prediction simulate_schedule(const Schedule& schedule, const costmodel::OpCostModel& cost_model,
                             const SimOptions& options, const UnrolledSchedule* unrolled) {
  const std::vector<int32_t>* iteration_of = unrolled != nullptr ? &unrolled->iteration_of : nullptr;
  check_references(schedule);
  const costmodel::DeviceSpec& device = cost_model.device();
  const bool half_duplex = options.half_duplex.value_or(!device.full_duplex);
  ReplayPlan plan = make_replay_plan(schedule, cost_model, half_duplex);
  const size_t n = schedule.instructions.size();

  Prediction pred;
  pred.memory_limit_bytes = options.memory_limit_bytes == 0
                                ? std::max<int64_t>(device.memory_bytes, 0)
                                : std::max<int64_t>(options.memory_limit_bytes, 0);
  std::vector<MemorySample>* samples = nullptr;
  if (options.record_timeline) {
    pred.has_timeline = true;
    pred.timeline.memory.reserve(3 * n + 1);
    samples = &pred.timeline.memory;
  }
  const bool evicting = options.eviction != nullptr;
  // With dynamic eviction the limit is the eviction's budget; the allocator itself has none.
  MemorySimulator memory(schedule.graph, evicting ? 0 : pred.memory_limit_bytes, samples);
  if (evicting && !schedule.host_state.empty()) {
    throw Error("simulate: dynamic eviction replays base schedules; this schedule keeps model state on the host "
                "(field 'host_state')");
  }
  const std::vector<uint8_t> at_start = ir::resident_at_start_mask(schedule);
  bool resident_fits = memory.allocate_resident(at_start);
  pred.resident_bytes = memory.in_use_bytes();

  std::vector<ExecutedInstruction> executed;
  std::optional<DynamicEviction> eviction;
  if (evicting) {
    // The eviction prices rematerialisations: every op, those no instruction computes too.
    std::vector<int64_t>& op_ns = plan.op_ns;
    for (size_t i = 0; i < op_ns.size(); ++i) {
      if (op_ns[i] < 0) op_ns[i] = cost_model.op_duration_ns(schedule.graph, schedule.graph.ops[i]);
    }
    int64_t compute_ns = 0;
    for (size_t i = 0; i < n; ++i) {
      if (plan.kind[i] == InstrKind::compute) compute_ns += plan.duration_ns[i];
    }
    const int64_t remat_limit_ns =
        options.remat_overhead_limit > 0
            ? static_cast<int64_t>(static_cast<double>(compute_ns) * (options.remat_overhead_limit - 1))
            : -1;
    const int64_t budget =
        pred.memory_limit_bytes > 0 ? pred.memory_limit_bytes : std::numeric_limits<int64_t>::max();
    eviction.emplace(schedule, op_ns, memory, executed, *options.eviction, budget, remat_limit_ns);
  } else if (!resident_fits && options.continue_past_limit) {
    pred.oom = true;
    pred.oom_requested_bytes = memory.last_request_bytes();
    pred.oom_message = fmt::format(
        "out of memory at t=0: the resident tensors (weights, gradients, optimizer state, "
        "inputs, labels) need {} B, over the {} B limit",
        memory.in_use_bytes(), pred.memory_limit_bytes);
    memory.lift_limit();
    resident_fits = true;
  }

  const HostPlan host = make_host_plan(schedule, cost_model, options.host_mode, evicting);
  ReplayLoop replay(plan, memory, executed, eviction ? &*eviction : nullptr, options.continue_past_limit,
                    host);
  bool completed = false;
  if (!resident_fits) {
    pred.oom = true;
    pred.oom_requested_bytes = memory.last_request_bytes();
    pred.oom_in_use_bytes = 0;
    pred.oom_message = fmt::format(
        "out of memory at t=0: the resident tensors (weights, gradients, optimizer state, "
        "inputs, labels) need {} B, over the {} B limit",
        memory.in_use_bytes(), pred.memory_limit_bytes);
  } else if (!replay.run()) {
    completed = false;
  } else {
    completed = true;
  }
  const InstrId f = replay.failed_instruction();
  if (f != kNoId && !pred.oom) {
    pred.oom = true;
    pred.oom_instruction = f;
    pred.oom_requested_bytes = replay.failed_request_bytes();
    pred.oom_in_use_bytes = replay.failed_in_use_bytes();
    pred.oom_message = fmt::format(
        "out of memory at instruction {} ({}) at t={}: requests {} B with {} B in use, "
        "over the {} B limit",
        f, describe_instruction(schedule, f), ns_as_ms(replay.failed_at_ns()), pred.oom_requested_bytes,
        pred.oom_in_use_bytes, pred.memory_limit_bytes);
  }
  if (eviction) {
    pred.evictions = eviction->evictions();
    pred.recomputes = eviction->recomputes();
    if (!eviction->fits()) {
      pred.oom = true;
      pred.oom_message = eviction->failure();
    }
  }
  if (completed && replay.started() != static_cast<int64_t>(n)) {
    throw Error(
        fmt::format("simulation of schedule '{}' stopped after {} of {} instructions (dependency cycle)",
                    schedule.policy, replay.started(), n));
  }

  const auto streams = static_cast<size_t>(plan.num_streams);
  pred.host_stream = schedule.host_stream;
  pred.busy_ns.assign(streams, 0);
  pred.stall_ns.assign(streams, 0);
  std::vector<int64_t> stream_free_at(streams, 0);
  const std::vector<ir::Tensor>& tensors = schedule.graph.tensors;
  for (const ExecutedInstruction& x : executed) {  // start order: list order within each stream
    const auto st = static_cast<size_t>(x.stream);
    const int64_t d = x.duration_ns;
    const int64_t end = x.start_ns + d;
    pred.busy_ns[st] += d;
    if (x.stream == schedule.host_stream) pred.host_optimizer_ns += d;
    pred.stall_ns[st] += x.start_ns - stream_free_at[st];
    stream_free_at[st] = end;
    pred.step_time_ns = std::max(pred.step_time_ns, end);
    switch (x.kind) {
      case InstrKind::recompute:
        pred.recompute_ns += d;
        break;
      case InstrKind::swap_out: {
        const ir::Tensor& t = tensors[static_cast<size_t>(x.target)];
        pred.bytes_swapped_out += t.bytes;
        if (ir::is_persistent(t.role)) pred.state_bytes_swapped_out += t.bytes;
        break;
      }
      case InstrKind::swap_in: {
        const ir::Tensor& t = tensors[static_cast<size_t>(x.target)];
        // A later iteration's batch upload (ir/unrolled_schedule.hpp) is data loading, not a swap.
        if (unrolled != nullptr && x.original != kNoId &&
            unrolled->original_of[static_cast<size_t>(x.original)] == kNoId) {
          break;
        }
        pred.bytes_swapped_in += t.bytes;
        if (ir::is_persistent(t.role)) pred.state_bytes_swapped_in += t.bytes;
        break;
      }
      default:
        break;
    }
  }
  if (host.on) {
    // The step ends when both the GPU and the host are done; the compute streams' idle time that
    // waited for an instruction's issue (its other dependencies met, its stream free) is host-bound.
    pred.host_busy_ns = replay.host_busy_ns();
    pred.step_time_ns = std::max(pred.step_time_ns, replay.host_end_ns());
    std::vector<int64_t> free_at(streams, 0);
    for (const ExecutedInstruction& x : executed) {
      const auto st = static_cast<size_t>(x.stream);
      if (ir::is_compute_stream(x.stream) && x.stream != schedule.host_stream && x.original != kNoId &&
          x.kind != InstrKind::free) {
        const auto i = static_cast<size_t>(x.original);
        const int64_t ready = std::max(free_at[st], replay.dep_ready_ns()[i]);
        const int64_t waited = std::min(x.start_ns, replay.launched_ns()[i]) - ready;
        if (waited > 0) pred.host_bound_idle_ns += waited;
      }
      free_at[st] = x.start_ns + x.duration_ns;
    }
  }
  if (pred.oom && !completed) pred.step_time_ns = replay.now_ns();
  for (size_t st = 0; st < streams; ++st) {
    const auto id = static_cast<int32_t>(st);
    if (ir::is_compute_stream(id) && id != schedule.host_stream) pred.compute_stall_ns += pred.stall_ns[st];
  }
  pred.peak_bytes = memory.peak_bytes();
  pred.peak_instruction = memory.peak_instruction();
  pred.peak_time_ns = memory.peak_time_ns();
  pred.instructions_simulated = replay.started();
  if (options.record_timeline) {
    fill_timeline(schedule, executed, evicting, pred.timeline);
    if (host.on) add_host_track(schedule, host, replay.host_start_ns(), pred.timeline);
  }
  if (options.record_executed) pred.executed = executed_instructions(schedule, executed);
  if (iteration_of != nullptr && !iteration_of->empty()) {
    const auto iterations = static_cast<size_t>(unrolled->iterations);
    pred.iterations = static_cast<int32_t>(iterations);
    pred.iteration_end_ns.assign(iterations, 0);
    for (const ExecutedInstruction& x : executed) {
      if (x.original == kNoId) continue;
      const auto k = static_cast<size_t>((*iteration_of)[static_cast<size_t>(x.original)]);
      if (k >= iterations) continue;  // wrapped: the next iteration's head, the last one's partner
      pred.iteration_end_ns[k] = std::max(pred.iteration_end_ns[k], x.start_ns + x.duration_ns);
    }
    // An iteration ends no earlier than the one before it; the last when the host is done too
    // (wrapped, the host goes on with the next iteration's head).
    for (size_t k = 1; k < iterations; ++k) {
      pred.iteration_end_ns[k] = std::max(pred.iteration_end_ns[k], pred.iteration_end_ns[k - 1]);
    }
    if (!unrolled->wrapped) pred.iteration_end_ns.back() = std::max(pred.iteration_end_ns.back(), pred.step_time_ns);
    pred.first_step_ns = pred.iteration_end_ns.front();
    if (!pred.oom && iterations > 1) {
      pred.step_time_ns = pred.iteration_end_ns[iterations - 1] - pred.iteration_end_ns[iterations - 2];
    }
  }
  return pred;
}

}  // namespace

Prediction simulate(const Schedule& schedule, const costmodel::OpCostModel& cost_model,
                    const SimOptions& options) {
  if (options.iterations == 1) return simulate_schedule(schedule, cost_model, options, nullptr);
  if (options.eviction != nullptr) {
    throw Error(fmt::format("simulate: dynamic eviction runs one iteration, not {} (SimOptions::iterations)",
                            options.iterations));
  }
  std::optional<ir::BoundaryMerge> wrap;
  if (options.wrap_iterations)
    wrap = ir::boundary_merge(schedule, costmodel::op_durations_ns(cost_model, schedule.graph));
  const UnrolledSchedule unrolled =
      ir::unroll_iterations(schedule, options.iterations, wrap.has_value() ? &*wrap : nullptr);
  SimOptions one = options;
  one.iterations = 1;
  Prediction pred = simulate_schedule(unrolled.schedule, cost_model, one, &unrolled);
  // Reports name the step's own instructions (timeline events and executed keep the unrolled ids).
  auto original = [&](InstrId id) { return id == kNoId ? id : unrolled.original_of[static_cast<size_t>(id)]; };
  pred.peak_instruction = original(pred.peak_instruction);
  pred.oom_instruction = original(pred.oom_instruction);
  pred.wrapped = unrolled.wrapped;
  return pred;
}

}  // namespace mutwo::sim

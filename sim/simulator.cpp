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

// Marks an event of an op the dynamic eviction runs inside an instruction (a recompute).
constexpr InstrId kInsertedOp = -2;
// The engine slot of a host event: the host finished issuing an instruction.
constexpr size_t kHostEngine = static_cast<size_t>(-1);

// The event loop: one clock, a (time, sequence) heap of instruction finishes, one engine per
// stream (or shared copy engine), the memory simulator and, with a heuristic, dynamic eviction.
class Replay {
 public:
  Replay(ReplayPlan& plan, MemorySimulator& memory, std::vector<ExecutedInstruction>& executed,
         DynamicEviction* eviction, bool continue_past_limit, const HostPlan& host)
      : p_(plan),
        memory_(memory),
        executed_(executed),
        eviction_(eviction),
        continue_past_limit_(continue_past_limit),
        host_(host),
        n_(plan.kind.size()) {
    if (host_.on) {
      launched_ns_.assign(n_, 0);
      host_start_ns_.assign(n_, -1);
      dep_ready_ns_.assign(n_, 0);
      for (size_t i = 0; i < n_; ++i) {
        if (host_.issue_ns[i] >= 0) ++p_.pending[i];  // waits for its issue as for a dependency
      }
    }
    start_ns_.assign(n_, -1);
    const auto engines = static_cast<size_t>(p_.num_streams);
    busy_.assign(engines, 0);
    ready_.resize(engines);
    for (auto& r : ready_) r.reserve(engines);
    heap_.reserve(engines + 1);
    free_stack_.reserve(n_);
    executed_.reserve(n_);
  }

  // Runs to the end or to the first allocation over the limit; returns false on OOM.
  bool run() {
    for (size_t i = 0; i < n_; ++i) {
      if (p_.pending[i] == 0) make_ready(static_cast<InstrId>(i), 0);
    }
    run_frees(0);
    if (host_.on) host_advance(0);
    if (!dispatch(0)) return false;
    while (!heap_.empty()) {
      const int64_t now = heap_.front().time_ns;
      while (!heap_.empty() && heap_.front().time_ns == now) {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        const Event e = heap_.back();
        heap_.pop_back();
        finish(e, now);
      }
      run_frees(now);
      if (eviction_ != nullptr && !eviction_->active()) eviction_->release_dead(now);
      if (!dispatch(now)) return false;
    }
    if (eviction_ != nullptr) eviction_->end_of_step(now_ns_);
    return true;
  }

  const std::vector<int64_t>& start_ns() const { return start_ns_; }  // -1: not started
  // Host timeline (host on): when each instruction was issued (start, end), when its other
  // dependencies were met, the host's busy time and when it finished.
  const std::vector<int64_t>& host_start_ns() const { return host_start_ns_; }
  const std::vector<int64_t>& launched_ns() const { return launched_ns_; }
  const std::vector<int64_t>& dep_ready_ns() const { return dep_ready_ns_; }
  int64_t host_busy_ns() const { return host_busy_ns_; }
  int64_t host_end_ns() const { return host_end_ns_; }
  int64_t started() const { return started_; }
  int64_t now_ns() const { return now_ns_; }
  InstrId failed_instruction() const { return failed_; }
  int64_t failed_at_ns() const { return failed_at_ns_; }
  int64_t failed_request_bytes() const { return failed_request_bytes_; }
  int64_t failed_in_use_bytes() const { return failed_in_use_bytes_; }

 private:
  struct Event {
    int64_t time_ns;
    int64_t sequence;
    InstrId instruction;  // kInsertedOp: an op the dynamic eviction inserted
    size_t engine;
  };
  struct Ready {
    int64_t time_ns;  // when it became ready: a shared engine serves the earliest first
    InstrId instruction;
  };
  static bool later(const Event& a, const Event& b) {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.sequence > b.sequence;
  }

  void make_ready(InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    if (p_.kind[idx] == InstrKind::free) {
      free_stack_.push_back(i);
      return;
    }
    ready_[engine_of(idx)].push_back(Ready{now, i});
  }

  void release_dependents(InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    for (int32_t k = p_.dependents_begin[idx]; k < p_.dependents_begin[idx + 1]; ++k) {
      const InstrId d = p_.dependents[static_cast<size_t>(k)];
      if (host_.on) dep_ready_ns_[static_cast<size_t>(d)] = now;
      if (--p_.pending[static_cast<size_t>(d)] == 0) make_ready(d, now);
    }
  }

  // Issues the next instructions in list order until the host has one in flight or must wait.
  void host_advance(int64_t now) {
    if (host_issuing_ || host_sync_on_ != kNoId) return;
    while (host_next_ < n_ && host_.issue_ns[host_next_] < 0) ++host_next_;
    if (host_next_ >= n_) return;
    if (host_.queue_depth > 0 && host_outstanding_ >= host_.queue_depth) return;  // resumed by a start
    const size_t i = host_next_++;
    const int64_t start = std::max(now, host_free_at_);
    host_start_ns_[i] = start;
    host_free_at_ = start + host_.issue_ns[i];
    host_busy_ns_ += host_.issue_ns[i];
    host_issuing_ = true;
    heap_.push_back(Event{host_free_at_, sequence_++, static_cast<InstrId>(i), kHostEngine});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }

  // The host finished issuing i: it may start on the GPU; the host goes on unless i syncs.
  void host_issued(InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    host_issuing_ = false;
    host_end_ns_ = now;
    launched_ns_[idx] = now;
    ++host_outstanding_;
    if (host_.sync[idx] != 0) host_sync_on_ = i;
    if (--p_.pending[idx] == 0) make_ready(i, now);
    host_advance(now);
  }

  void finish(const Event& e, int64_t now) {
    if (e.engine == kHostEngine) {
      host_issued(e.instruction, now);
      return;
    }
    if (host_.on && e.instruction == host_sync_on_) {  // the host waited for this one
      host_sync_on_ = kNoId;
      host_end_ns_ = now;
      host_advance(now);
    }
    busy_[e.engine] = 0;
    if (eviction_ != nullptr) {
      memory_.end_op(running_op_, now);
      if (!eviction_->finish(now)) return;  // a recompute: the instruction goes on
      release_dependents(e.instruction, now);
      return;
    }
    const auto idx = static_cast<size_t>(e.instruction);
    if (on_device_op(idx)) memory_.end_op(p_.target[idx], now);
    release_dependents(e.instruction, now);
  }

  // Frees take 0 ns and need no engine: run them (and frees they unblock) at once.
  void run_frees(int64_t now) {
    while (!free_stack_.empty()) {
      const InstrId f = free_stack_.back();
      free_stack_.pop_back();
      const auto idx = static_cast<size_t>(f);
      start_ns_[idx] = now;
      ++started_;
      if (eviction_ != nullptr) {
        eviction_->base_free(p_.target[idx], now);  // records the free if and when it happens
      } else {
        executed_.push_back({InstrKind::free, p_.target[idx], p_.stream[idx], now, 0, f});
        memory_.free_tensor(p_.target[idx], now);
      }
      release_dependents(f, now);
    }
  }

  // Starts the next ready instruction on every idle engine; false on OOM.
  bool dispatch(int64_t now) {
    now_ns_ = now;
    for (size_t e = 0; e < ready_.size(); ++e) {
      if (busy_[e] != 0) continue;
      if (eviction_ != nullptr && eviction_->active()) {  // the instruction's next recompute, or itself
        if (e == compute_engine()) start_evicting(e, kInsertedOp, now);
        continue;
      }
      std::vector<Ready>& ready = ready_[e];
      if (ready.empty()) continue;
      size_t best = 0;
      for (size_t k = 1; k < ready.size(); ++k) {  // only a shared engine holds more than one
        const Ready& a = ready[k];
        const Ready& b = ready[best];
        if (a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.instruction < b.instruction)) best = k;
      }
      const InstrId i = ready[best].instruction;
      ready[best] = ready.back();
      ready.pop_back();
      if (eviction_ != nullptr) {
        const auto idx = static_cast<size_t>(i);
        start_ns_[idx] = now;
        ++started_;
        eviction_->begin(p_.target[idx], i);
        start_evicting(e, i, now);
        continue;
      }
      if (!start(i, e, now)) return false;
    }
    return true;
  }

  // With dynamic eviction: the next op of the instruction being materialised (never OOM: a budget
  // not met is the eviction's failure, and the run goes on).
  void start_evicting(size_t engine, InstrId instruction, int64_t now) {
    running_op_ = eviction_->next(now);
    const InstrId event_id = instruction == kInsertedOp ? bottom_instruction_ : instruction;
    if (instruction != kInsertedOp) bottom_instruction_ = instruction;
    heap_.push_back(Event{now + executed_.back().duration_ns, sequence_++, event_id, engine});
    std::push_heap(heap_.begin(), heap_.end(), later);
    busy_[engine] = 1;
  }

  bool start(InstrId i, size_t engine, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    const InstrKind kind = p_.kind[idx];
    bool ok = true;
    if (on_device_op(idx)) {
      ok = memory_.start_op(p_.target[idx], now, i);
    } else if (kind == InstrKind::swap_in) {
      ok = memory_.start_swap_in(p_.target[idx], now, i);
    }
    if (!ok) {
      if (failed_ == kNoId) {
        failed_ = i;
        failed_at_ns_ = now;
        failed_request_bytes_ = memory_.last_request_bytes();
        failed_in_use_bytes_ = memory_.in_use_bytes();
      }
      if (!continue_past_limit_) return false;
      memory_.lift_limit();
      if (on_device_op(idx)) {
        memory_.start_op(p_.target[idx], now, i);
      } else {
        memory_.start_swap_in(p_.target[idx], now, i);
      }
    }
    start_ns_[idx] = now;
    ++started_;
    if (host_.on) {
      --host_outstanding_;
      host_advance(now);  // a host blocked on a full launch queue goes on
    }
    executed_.push_back({kind, p_.target[idx], p_.stream[idx], now, p_.duration_ns[idx], i});
    heap_.push_back(Event{now + p_.duration_ns[idx], sequence_++, i, engine});
    std::push_heap(heap_.begin(), heap_.end(), later);
    busy_[engine] = 1;
    return true;
  }

  // An op the device runs (not one on the host stream, which allocates no device memory).
  bool on_device_op(size_t idx) const {
    return ir::runs_op(p_.kind[idx]) && p_.stream[idx] != p_.host_stream;
  }

  size_t compute_engine() const {
    return static_cast<size_t>(p_.engine_of_stream[static_cast<size_t>(ir::kComputeStream)]);
  }
  size_t engine_of(size_t idx) const {
    return static_cast<size_t>(p_.engine_of_stream[static_cast<size_t>(p_.stream[idx])]);
  }

  ReplayPlan& p_;
  MemorySimulator& memory_;
  std::vector<ExecutedInstruction>& executed_;
  DynamicEviction* eviction_;
  bool continue_past_limit_;
  const HostPlan& host_;
  size_t n_;
  std::vector<int64_t> start_ns_;          // -1 until started
  std::vector<uint8_t> busy_;              // per engine
  std::vector<std::vector<Ready>> ready_;  // per engine: ready, not started
  std::vector<Event> heap_;
  std::vector<InstrId> free_stack_;
  int64_t sequence_ = 0;
  int64_t started_ = 0;
  int64_t now_ns_ = 0;
  ir::OpId running_op_ = kNoId;              // dynamic eviction: the op on the compute engine
  InstrId bottom_instruction_ = kNoId;       // dynamic eviction: the instruction being materialised
  InstrId failed_ = kNoId;
  int64_t failed_at_ns_ = 0;
  int64_t failed_request_bytes_ = 0;
  int64_t failed_in_use_bytes_ = 0;
  // Host timeline state.
  size_t host_next_ = 0;          // next instruction (list order) to issue
  int64_t host_free_at_ = 0;      // the host is busy issuing until then
  bool host_issuing_ = false;     // an issue is in flight
  InstrId host_sync_on_ = kNoId;  // the host waits for this instruction to finish
  int32_t host_outstanding_ = 0;  // issued, not started
  int64_t host_busy_ns_ = 0;
  int64_t host_end_ns_ = 0;
  std::vector<int64_t> launched_ns_;
  std::vector<int64_t> host_start_ns_;
  std::vector<int64_t> dep_ready_ns_;
};

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
  std::vector<int64_t> op_ns;
  std::optional<DynamicEviction> eviction;
  if (evicting) {
    op_ns = costmodel::op_durations_ns(cost_model, schedule.graph);
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
  Replay replay(plan, memory, executed, eviction ? &*eviction : nullptr, options.continue_past_limit, host);
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

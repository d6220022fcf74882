#include "sim/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/memory_simulator.hpp"
#include "sim/replay_plan.hpp"

namespace mutwo::sim {

using profiles::InstrId;
using profiles::InstrKind;
using profiles::Instruction;
using profiles::kNoId;
using profiles::Schedule;
using profiles::TensorId;

namespace {

// The event loop: one clock, a (time, sequence) heap of instruction finishes, one engine per
// stream (or shared copy engine), and the memory simulator.
class Replay {
 public:
  Replay(ReplayPlan& plan, MemorySimulator& memory) : p_(plan), memory_(memory), n_(plan.kind.size()) {
    start_ns_.assign(n_, -1);
    const auto engines = static_cast<size_t>(p_.num_streams);
    busy_.assign(engines, 0);
    ready_.resize(engines);
    for (auto& r : ready_) r.reserve(engines);
    heap_.reserve(engines + 1);
    free_stack_.reserve(n_);
  }

  // Runs to the end or to the first allocation over the limit; returns false on OOM.
  bool run() {
    for (size_t i = 0; i < n_; ++i) {
      if (p_.pending[i] == 0) make_ready(static_cast<InstrId>(i), 0);
    }
    run_frees(0);
    if (!dispatch(0)) return false;
    while (!heap_.empty()) {
      const int64_t now = heap_.front().time_ns;
      while (!heap_.empty() && heap_.front().time_ns == now) {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        const InstrId i = heap_.back().instruction;
        heap_.pop_back();
        finish(i, now);
      }
      run_frees(now);
      if (!dispatch(now)) return false;
    }
    return true;
  }

  const std::vector<int64_t>& start_ns() const { return start_ns_; }  // -1: not started
  int64_t started() const { return started_; }
  int64_t now_ns() const { return now_ns_; }
  InstrId failed_instruction() const { return failed_; }

 private:
  struct Event {
    int64_t time_ns;
    int64_t sequence;
    InstrId instruction;
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
      if (--p_.pending[static_cast<size_t>(d)] == 0) make_ready(d, now);
    }
  }

  void finish(InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    busy_[engine_of(idx)] = 0;
    if (profiles::runs_op(p_.kind[idx])) memory_.end_op(p_.target[idx], now);
    release_dependents(i, now);
  }

  // Frees take 0 ns and need no engine: run them (and frees they unblock) at once.
  void run_frees(int64_t now) {
    while (!free_stack_.empty()) {
      const InstrId f = free_stack_.back();
      free_stack_.pop_back();
      const auto idx = static_cast<size_t>(f);
      start_ns_[idx] = now;
      ++started_;
      memory_.free_tensor(p_.target[idx], now);
      release_dependents(f, now);
    }
  }

  // Starts the next ready instruction on every idle engine; false on OOM.
  bool dispatch(int64_t now) {
    now_ns_ = now;
    for (size_t e = 0; e < ready_.size(); ++e) {
      std::vector<Ready>& ready = ready_[e];
      if (busy_[e] != 0 || ready.empty()) continue;
      size_t best = 0;
      for (size_t k = 1; k < ready.size(); ++k) {  // only a shared engine holds more than one
        const Ready& a = ready[k];
        const Ready& b = ready[best];
        if (a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.instruction < b.instruction)) best = k;
      }
      const InstrId i = ready[best].instruction;
      ready[best] = ready.back();
      ready.pop_back();
      if (!start(i, now)) return false;
      busy_[e] = 1;
    }
    return true;
  }

  bool start(InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    const InstrKind kind = p_.kind[idx];
    bool ok = true;
    if (profiles::runs_op(kind)) {
      ok = memory_.start_op(p_.target[idx], now, i);
    } else if (kind == InstrKind::swap_in) {
      ok = memory_.start_swap_in(p_.target[idx], now, i);
    }
    if (!ok) {
      failed_ = i;
      return false;
    }
    start_ns_[idx] = now;
    ++started_;
    heap_.push_back(Event{now + p_.duration_ns[idx], sequence_++, i});
    std::push_heap(heap_.begin(), heap_.end(), later);
    return true;
  }

  size_t engine_of(size_t idx) const {
    return static_cast<size_t>(p_.engine_of_stream[static_cast<size_t>(p_.stream[idx])]);
  }

  ReplayPlan& p_;
  MemorySimulator& memory_;
  size_t n_;
  std::vector<int64_t> start_ns_;          // -1 until started
  std::vector<uint8_t> busy_;              // per engine
  std::vector<std::vector<Ready>> ready_;  // per engine: ready, not started
  std::vector<Event> heap_;
  std::vector<InstrId> free_stack_;
  int64_t sequence_ = 0;
  int64_t started_ = 0;
  int64_t now_ns_ = 0;
  InstrId failed_ = kNoId;
};

std::string ns_as_ms(int64_t ns) {
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

void fill_timeline(const Schedule& s, const ReplayPlan& plan, const std::vector<int64_t>& start_ns,
                   Timeline& timeline) {
  const profiles::Graph& g = s.graph;
  for (size_t i = 0; i < s.instructions.size(); ++i) {
    if (start_ns[i] < 0) continue;
    const Instruction& in = s.instructions[i];
    TimelineEvent ev;
    ev.instruction = in.id;
    ev.kind = in.kind;
    ev.stream = in.stream;
    ev.start_ns = start_ns[i];
    ev.end_ns = start_ns[i] + plan.duration_ns[i];
    if (profiles::runs_op(in.kind)) {
      const profiles::Op& op = g.op(in.op);
      ev.name = op.name;
      ev.phase = op.phase;
      ev.op = in.op;
    } else {
      const profiles::Tensor& t = g.tensor(in.tensor);
      ev.name = t.name;
      ev.phase = t.producer != kNoId ? g.op(t.producer).phase : profiles::Phase::forward;
      ev.tensor = in.tensor;
    }
    timeline.events.push_back(std::move(ev));
  }
}

}  // namespace

Prediction simulate(const Schedule& schedule, const costmodel::OpCostModel& cost_model,
                    const SimOptions& options) {
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
  MemorySimulator memory(schedule.graph, pred.memory_limit_bytes, samples);
  const bool resident_fits = memory.allocate_resident();
  pred.resident_bytes = memory.in_use_bytes();

  Replay replay(plan, memory);
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
    const InstrId f = replay.failed_instruction();
    pred.oom = true;
    pred.oom_instruction = f;
    pred.oom_requested_bytes = memory.last_request_bytes();
    pred.oom_in_use_bytes = memory.in_use_bytes();
    pred.oom_message = fmt::format(
        "out of memory at instruction {} ({}) at t={}: requests {} B with {} B in use, "
        "over the {} B limit",
        f, describe_instruction(schedule, f), ns_as_ms(replay.now_ns()), pred.oom_requested_bytes,
        pred.oom_in_use_bytes, pred.memory_limit_bytes);
  } else {
    completed = true;
  }
  if (completed && replay.started() != static_cast<int64_t>(n)) {
    throw Error(
        fmt::format("simulation of schedule '{}' stopped after {} of {} instructions (dependency cycle)",
                    schedule.policy, replay.started(), n));
  }

  const std::vector<int64_t>& start = replay.start_ns();
  const auto streams = static_cast<size_t>(plan.num_streams);
  pred.busy_ns.assign(streams, 0);
  pred.stall_ns.assign(streams, 0);
  std::vector<int64_t> stream_free_at(streams, 0);
  const std::vector<profiles::Tensor>& tensors = schedule.graph.tensors;
  for (size_t i = 0; i < n; ++i) {
    if (start[i] < 0) continue;
    const auto st = static_cast<size_t>(plan.stream[i]);
    const int64_t d = plan.duration_ns[i];
    const int64_t end = start[i] + d;
    pred.busy_ns[st] += d;
    pred.stall_ns[st] += start[i] - stream_free_at[st];
    stream_free_at[st] = end;
    pred.step_time_ns = std::max(pred.step_time_ns, end);
    switch (plan.kind[i]) {
      case InstrKind::recompute:
        pred.recompute_ns += d;
        break;
      case InstrKind::swap_out:
        pred.bytes_swapped_out += tensors[static_cast<size_t>(plan.target[i])].bytes;
        break;
      case InstrKind::swap_in:
        pred.bytes_swapped_in += tensors[static_cast<size_t>(plan.target[i])].bytes;
        break;
      default:
        break;
    }
  }
  if (pred.oom) pred.step_time_ns = replay.now_ns();
  for (size_t st = 0; st < streams; ++st) {
    if (profiles::is_compute_stream(static_cast<int32_t>(st))) pred.compute_stall_ns += pred.stall_ns[st];
  }
  pred.peak_bytes = memory.peak_bytes();
  pred.peak_instruction = memory.peak_instruction();
  pred.peak_time_ns = memory.peak_time_ns();
  pred.instructions_simulated = replay.started();
  if (options.record_timeline) fill_timeline(schedule, plan, start, pred.timeline);
  return pred;
}

}  // namespace mutwo::sim

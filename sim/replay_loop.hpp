#pragma once
// The single-GPU engine's event loop (sim/simulator.hpp describes the engine it runs): the event
// core (sim/event_core.hpp) with instruction finishes in creation order, one engine per stream or
// shared copy engine, the memory simulator, the host timeline and, with a heuristic, dynamic
// eviction. Used by simulate() only; a class of its own so that the loop reads apart from how a
// Prediction is put together.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/dynamic_eviction.hpp"
#include "sim/event_core.hpp"
#include "sim/executed_instruction.hpp"
#include "sim/host_issuer.hpp"
#include "sim/host_plan.hpp"
#include "sim/memory_simulator.hpp"
#include "sim/replay_plan.hpp"

namespace mutwo::sim {

// Marks an event of an op the dynamic eviction runs inside an instruction (a recompute).
constexpr ir::InstrId kInsertedOp = -2;
// The engine slot of a host event: the host finished issuing an instruction.
constexpr size_t kHostEngine = static_cast<size_t>(-1);

// The event loop: the core's clock and queue of instruction finishes, one engine per stream (or
// shared copy engine), the memory simulator and, with a heuristic, dynamic eviction.
class ReplayLoop {
 public:
  ReplayLoop(ReplayPlan& plan, MemorySimulator& memory, std::vector<ExecutedInstruction>& executed,
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
      std::vector<int32_t> order;
      for (size_t i = 0; i < n_; ++i) {
        if (host_.issue_ns[i] < 0) continue;
        ++p_.pending[i];  // waits for its issue as for a dependency
        order.push_back(static_cast<int32_t>(i));
      }
      issuer_ = HostIssuer(std::move(order), host_.queue_depth);
    }
    start_ns_.assign(n_, -1);
    const auto engines = static_cast<size_t>(p_.num_streams);
    busy_.assign(engines, 0);
    ready_.resize(engines);
    for (auto& r : ready_) r.reserve(engines);
    events_.reserve(engines + 1);
    free_stack_.reserve(n_);
    executed_.reserve(n_);
  }

  // Runs to the end or to the first allocation over the limit; returns false on OOM.
  bool run() {
    for (size_t i = 0; i < n_; ++i) {
      if (p_.pending[i] == 0) make_ready(static_cast<ir::InstrId>(i), 0);
    }
    run_frees(0);
    if (host_.on) host_advance(0);
    if (!dispatch(0)) return false;
    while (!events_.empty()) {
      const int64_t now = events_.advance();
      while (events_.due()) finish(events_.pop_due(), now);
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
  ir::InstrId failed_instruction() const { return failed_; }
  int64_t failed_at_ns() const { return failed_at_ns_; }
  int64_t failed_request_bytes() const { return failed_request_bytes_; }
  int64_t failed_in_use_bytes() const { return failed_in_use_bytes_; }

 private:
  struct Event {
    ir::InstrId instruction;  // kInsertedOp: an op the dynamic eviction inserted
    size_t engine;
  };
  struct Ready {
    int64_t time_ns;  // when it became ready: a shared engine serves the earliest first
    ir::InstrId instruction;
  };
  void make_ready(ir::InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    if (p_.kind[idx] == ir::InstrKind::free) {
      free_stack_.push_back(i);
      return;
    }
    ready_[engine_of(idx)].push_back(Ready{now, i});
  }

  void release_dependents(ir::InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    for (int32_t k = p_.dependents_begin[idx]; k < p_.dependents_begin[idx + 1]; ++k) {
      const ir::InstrId d = p_.dependents[static_cast<size_t>(k)];
      if (host_.on) dep_ready_ns_[static_cast<size_t>(d)] = now;
      if (--p_.pending[static_cast<size_t>(d)] == 0) make_ready(d, now);
    }
  }

  // Issues the next instruction in list order unless the host must wait (sim/host_issuer.hpp).
  void host_advance(int64_t now) {
    const std::optional<HostIssuer::Issue> issue = issuer_.next(now);
    if (!issue) return;
    const auto i = static_cast<size_t>(issue->item);
    host_start_ns_[i] = issue->start_ns;
    const int64_t end_ns = later_ns(issue->start_ns, host_.issue_ns[i]);
    issuer_.issuing_until(end_ns);
    host_busy_ns_ += host_.issue_ns[i];
    events_.push(end_ns, Event{issue->item, kHostEngine});
  }

  // The host finished issuing i: it may start on the GPU; the host goes on unless i syncs.
  void host_issued(ir::InstrId i, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    host_end_ns_ = now;
    launched_ns_[idx] = now;
    issuer_.issued(i, host_.sync[idx] != 0);
    if (--p_.pending[idx] == 0) make_ready(i, now);
    host_advance(now);
  }

  void finish(const Event& e, int64_t now) {
    if (e.engine == kHostEngine) {
      host_issued(e.instruction, now);
      return;
    }
    if (host_.on && issuer_.finished(e.instruction)) {  // the host waited for this one
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
      const ir::InstrId f = free_stack_.back();
      free_stack_.pop_back();
      const auto idx = static_cast<size_t>(f);
      start_ns_[idx] = now;
      ++started_;
      if (eviction_ != nullptr) {
        eviction_->base_free(p_.target[idx], now);  // records the free if and when it happens
      } else {
        executed_.push_back({ir::InstrKind::free, p_.target[idx], p_.stream[idx], now, 0, f});
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
      const ir::InstrId i = ready[best].instruction;
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
  void start_evicting(size_t engine, ir::InstrId instruction, int64_t now) {
    running_op_ = eviction_->next(now);
    const ir::InstrId event_id = instruction == kInsertedOp ? bottom_instruction_ : instruction;
    if (instruction != kInsertedOp) bottom_instruction_ = instruction;
    events_.push(later_ns(now, executed_.back().duration_ns), Event{event_id, engine});
    busy_[engine] = 1;
  }

  bool start(ir::InstrId i, size_t engine, int64_t now) {
    const auto idx = static_cast<size_t>(i);
    const ir::InstrKind kind = p_.kind[idx];
    bool ok = true;
    if (on_device_op(idx)) {
      ok = memory_.start_op(p_.target[idx], now, i);
    } else if (kind == ir::InstrKind::swap_in) {
      ok = memory_.start_swap_in(p_.target[idx], now, i);
    }
    if (!ok) {
      if (failed_ == ir::kNoId) {
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
      issuer_.started();
      host_advance(now);  // a host blocked on a full launch queue goes on
    }
    executed_.push_back({kind, p_.target[idx], p_.stream[idx], now, p_.duration_ns[idx], i});
    events_.push(later_ns(now, p_.duration_ns[idx]), Event{i, engine});
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
  EventQueue<Event> events_;
  std::vector<ir::InstrId> free_stack_;
  int64_t started_ = 0;
  int64_t now_ns_ = 0;
  ir::OpId running_op_ = ir::kNoId;             // dynamic eviction: the op on the compute engine
  ir::InstrId bottom_instruction_ = ir::kNoId;  // dynamic eviction: the instruction being materialised
  ir::InstrId failed_ = ir::kNoId;
  int64_t failed_at_ns_ = 0;
  int64_t failed_request_bytes_ = 0;
  int64_t failed_in_use_bytes_ = 0;
  // Host timeline state.
  HostIssuer issuer_;
  int64_t host_busy_ns_ = 0;
  int64_t host_end_ns_ = 0;
  std::vector<int64_t> launched_ns_;
  std::vector<int64_t> host_start_ns_;
  std::vector<int64_t> dep_ready_ns_;
};

}  // namespace mutwo::sim

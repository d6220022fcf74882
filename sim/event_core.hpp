#pragma once
// The one event core every engine in sim/ runs on (docs/ARCHITECTURE.md "Simulation"): a clock that
// only moves forward and, for engines with concurrent work, a queue of events on that clock.
// - The single-GPU engine (sim/replay_loop.hpp) and the server engine (sim/server_simulator.cpp)
//   keep their events here; DTR-log replay (sim/dtr_runtime.hpp) runs one op at a time, so it needs
//   the clock only.
// - Events at one time come out in key order. An engine either keys by creation order
//   (push: a sequence number, so equal times resolve in the order events were made) or by its own
//   id (push_keyed: the server orders copies and computes by task id, host events after them).
//   Either way a run is bit-for-bit deterministic.
// - The core keeps no state of the engines: components take `now` from it and keep no clock.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::sim {

inline constexpr int64_t kNoEventNs = std::numeric_limits<int64_t>::max();

// at_ns + after_ns, the time an event `after_ns` from at_ns happens. Each op's and copy's time is
// bounded (ir::kMaxOpNs) but not their sum: a step that passes 2^63 ns is refused as that, not as
// an event at a wrapped, negative time.
inline int64_t later_ns(int64_t at_ns, int64_t after_ns) {
  int64_t out = 0;
  if (__builtin_add_overflow(at_ns, after_ns, &out) || out == kNoEventNs) {
    throw Error(fmt::format(
        "the simulated time passes 2^63 ns (292 years): {} ns + {} ns; an op or a transfer is too slow "
        "to simulate (a bandwidth near 0, such as --h2d-gbps or --d2h-gbps, or sizes near 2^62 bytes)",
        at_ns, after_ns));
  }
  return out;
}

// Simulated time in ns: starts where the engine says (0; simrd's clock starts at 1), never goes back.
class Clock {
 public:
  explicit Clock(int64_t start_ns = 0) : now_ns_(start_ns) {}
  int64_t now_ns() const { return now_ns_; }
  void advance_to(int64_t at_ns) {
    if (at_ns < now_ns_) {
      throw Error(fmt::format("event core: the clock would go back from {} ns to {} ns", now_ns_, at_ns));
    }
    now_ns_ = at_ns;
  }
  void advance_by(int64_t duration_ns) { advance_to(later_ns(now_ns_, duration_ns)); }

 private:
  int64_t now_ns_ = 0;
};

template <class Payload>
class EventQueue {
 public:
  EventQueue() = default;
  void reserve(size_t events) { heap_.reserve(events); }

  const Clock& clock() const { return clock_; }
  int64_t now_ns() const { return clock_.now_ns(); }
  bool empty() const { return heap_.empty(); }
  int64_t next_ns() const { return heap_.empty() ? kNoEventNs : heap_.front().at_ns; }

  // An event at at_ns (>= now), after every event already queued for that time.
  void push(int64_t at_ns, Payload payload) { push_keyed(at_ns, sequence_++, std::move(payload)); }
  // An event at at_ns (>= now), ordered among that time's events by `key`, then creation order.
  void push_keyed(int64_t at_ns, int64_t key, Payload payload) {
    if (at_ns < clock_.now_ns()) {
      throw Error(fmt::format("event core: an event at {} ns is before now ({} ns)", at_ns, clock_.now_ns()));
    }
    heap_.push_back(Entry{at_ns, key, order_++, std::move(payload)});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }

  // Moves the clock to at_ns, which must not pass the next event (work between events, such as the
  // server's copies moving bytes, may end before it).
  void advance_to(int64_t at_ns) {
    if (at_ns > next_ns()) {
      throw Error(
          fmt::format("event core: advancing to {} ns would skip the event at {} ns", at_ns, next_ns()));
    }
    clock_.advance_to(at_ns);
  }
  // Moves the clock to the next event's time and returns it (kNoEventNs when none is left).
  int64_t advance() {
    if (heap_.empty()) return kNoEventNs;
    clock_.advance_to(heap_.front().at_ns);
    return clock_.now_ns();
  }
  bool due() const { return !heap_.empty() && heap_.front().at_ns == clock_.now_ns(); }
  // The first event due now (call only when due()).
  Payload pop_due() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Payload p = std::move(heap_.back().payload);
    heap_.pop_back();
    return p;
  }

 private:
  struct Entry {
    int64_t at_ns;
    int64_t key;
    int64_t order;  // creation order: ties of equal keys
    Payload payload;
  };
  static bool later(const Entry& a, const Entry& b) {
    if (a.at_ns != b.at_ns) return a.at_ns > b.at_ns;
    if (a.key != b.key) return a.key > b.key;
    return a.order > b.order;
  }

  Clock clock_;
  std::vector<Entry> heap_;
  int64_t sequence_ = 0;
  int64_t order_ = 0;
};

}  // namespace mutwo::sim

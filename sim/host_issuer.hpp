#pragma once
// The host issue rule both engines follow (sim/host_plan.hpp says what it models; the single-GPU
// engine, sim/replay_loop.hpp, and the server engine, sim/server_simulator.cpp, one issuer per GPU):
// the host issues its work in list order, one item at a time, each taking its own issue time; at
// most `queue_depth` items issued but not started (0: no bound); after a synchronising item it waits
// until that item has finished. The engines own the clock and the events; this holds the rule.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace mutwo::sim {

class HostIssuer {
 public:
  HostIssuer() = default;
  // `order`: the items the host issues (ids with an issue time), in list order.
  HostIssuer(std::vector<int32_t> order, int32_t queue_depth)
      : order_(std::move(order)), depth_(queue_depth) {}

  struct Issue {
    int32_t item = -1;
    int64_t start_ns = 0;  // max(now, the end of the previous issue)
  };
  // The next item when the host may issue one now, else nullopt (issuing, waiting on a sync, the
  // launch queue full, or nothing left). The caller then calls issuing_until(its end).
  std::optional<Issue> next(int64_t now) {
    if (issuing_ || sync_on_ >= 0 || next_ >= order_.size()) return std::nullopt;
    if (depth_ > 0 && outstanding_ >= depth_) return std::nullopt;  // resumed by a start
    return Issue{order_[next_++], std::max(now, free_at_)};
  }
  void issuing_until(int64_t end_ns) {
    free_at_ = end_ns;
    issuing_ = true;
  }
  // The issue of `item` ended; with `sync` the host waits for it to finish.
  void issued(int32_t item, bool sync) {
    issuing_ = false;
    ++outstanding_;
    if (sync) sync_on_ = item;
  }
  void started() { --outstanding_; }  // an issued item started on the device
  // `item` finished; true when the host was waiting for it (it may go on).
  bool finished(int32_t item) {
    if (item != sync_on_) return false;
    sync_on_ = -1;
    return true;
  }

 private:
  std::vector<int32_t> order_;
  int32_t depth_ = 0;
  size_t next_ = 0;
  int64_t free_at_ = 0;      // the host is busy issuing until then
  bool issuing_ = false;     // an issue is in flight
  int32_t sync_on_ = -1;     // the host waits for this item to finish
  int32_t outstanding_ = 0;  // issued, not started
};

}  // namespace mutwo::sim

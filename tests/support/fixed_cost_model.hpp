#pragma once
// A cost model for hand-computed tests: op durations from a table by op id, copies at 1 B/ns each
// way with no latency and no launch overhead, so a tensor of N bytes copies in exactly N ns.
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>

#include "costmodel/op_cost_model.hpp"

namespace mutwo::test {

class FixedCostModel : public costmodel::OpCostModel {
 public:
  explicit FixedCostModel(std::map<ir::OpId, int64_t> durations, bool full_duplex = true)
      : durations_(std::move(durations)) {
    device_.name = "test-gpu";
    device_.memory_bytes = 0;  // no limit unless a test sets one
    device_.h2d_bytes_per_ns = 1.0;
    device_.d2h_bytes_per_ns = 1.0;
    device_.full_duplex = full_duplex;
  }
  std::string_view name() const override { return "fixed"; }
  int64_t op_duration_ns(const ir::Graph&, const ir::Op& op) const override { return durations_.at(op.id); }
  const costmodel::DeviceSpec& device() const override { return device_; }
  void set_memory_bytes(int64_t bytes) { device_.memory_bytes = bytes; }
  // Host dispatch figures (0 by default: the host never limits the GPU).
  void set_host(const costmodel::HostDispatch& host) { device_.host = host; }
  void set_host_optimizer(const costmodel::HostOptimizer& h) { device_.host_optimizer = h; }

 private:
  std::map<ir::OpId, int64_t> durations_;
  costmodel::DeviceSpec device_;
};

}  // namespace mutwo::test

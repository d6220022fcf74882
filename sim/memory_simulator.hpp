#pragma once
// Device memory during a simulated step, counted by the memory rule (ir/memory_rule.hpp:
// 512-B blocks, what is resident at the start, each op's request):
// - tensors resident at the start are allocated at t=0 and stay;
// - compute/recompute allocates its request (outputs not resident, workspace) at its start; the
//   workspace is released at its end;
// - swap_in allocates its tensor at its start; free releases the device copy.
// The simulator keeps no clock: callers pass `now` for the peak and the samples.
#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.hpp"
#include "ir/schedule.hpp"
#include "sim/prediction.hpp"

namespace mutwo::sim {

class MemorySimulator {
 public:
  // limit_bytes <= 0: no limit. samples, when not null, receives one MemorySample per change.
  MemorySimulator(const ir::Graph& graph, int64_t limit_bytes, std::vector<MemorySample>* samples = nullptr);

  // Allocates the tensors resident at the start (t=0): those whose entry in at_start is 1
  // (ir::resident_at_start_mask of the schedule), or with an empty span those resident by
  // role; false if they alone exceed the limit (they are allocated anyway, so in_use_bytes() tells
  // by how much).
  bool allocate_resident(std::span<const uint8_t> at_start = {});

  // Allocates op's non-resident outputs and its workspace; false (and nothing changes) when that
  // would take the bytes in use over the limit; last_request_bytes() then tells how many it asked.
  bool start_op(ir::OpId op, int64_t now_ns, ir::InstrId instruction);
  // What start_op(op) would allocate now.
  int64_t request_bytes(ir::OpId op) const;
  void end_op(ir::OpId op, int64_t now_ns);  // releases the workspace
  bool start_swap_in(ir::TensorId tensor, int64_t now_ns, ir::InstrId instruction);
  void free_tensor(ir::TensorId tensor, int64_t now_ns);  // no-op if not resident

  bool is_resident(ir::TensorId tensor) const { return resident_[static_cast<size_t>(tensor)] != 0; }
  int64_t in_use_bytes() const { return in_use_bytes_; }
  int64_t peak_bytes() const { return peak_bytes_; }
  ir::InstrId peak_instruction() const { return peak_instruction_; }
  int64_t peak_time_ns() const { return peak_time_ns_; }
  int64_t last_request_bytes() const { return last_request_bytes_; }
  int64_t limit_bytes() const { return limit_bytes_; }
  // From now on, allocations over the limit succeed (the peak keeps counting): after a first OOM,
  // the run goes on to find the peak the schedule needs with no limit.
  void lift_limit() { limit_bytes_ = 0; }

 private:
  bool allocate(int64_t bytes, int64_t now_ns, ir::InstrId instruction);
  void release(int64_t bytes, int64_t now_ns);
  void sample(int64_t now_ns);

  const ir::Graph& graph_;
  int64_t limit_bytes_;
  std::vector<MemorySample>* samples_;
  std::vector<int64_t> rounded_bytes_;  // per tensor
  std::vector<uint8_t> resident_;       // per tensor
  // Per op, flat (the hot loop reads these, not the scattered Op vectors): outputs of op k are
  // op_outputs_[op_outputs_begin_[k], op_outputs_begin_[k + 1]); workspace rounded.
  std::vector<int32_t> op_outputs_begin_;
  std::vector<ir::TensorId> op_outputs_;
  std::vector<int64_t> op_workspace_bytes_;
  int64_t in_use_bytes_ = 0;
  int64_t peak_bytes_ = 0;
  ir::InstrId peak_instruction_ = ir::kNoId;
  int64_t peak_time_ns_ = 0;
  int64_t last_request_bytes_ = 0;
};

}  // namespace mutwo::sim

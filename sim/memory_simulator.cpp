#include "sim/memory_simulator.hpp"

#include "ir/memory_rule.hpp"

namespace mutwo::sim {

using ir::InstrId;
using ir::TensorId;

MemorySimulator::MemorySimulator(const ir::Graph& graph, int64_t limit_bytes,
                                 std::vector<MemorySample>* samples)
    : graph_(graph),
      limit_bytes_(limit_bytes > 0 ? limit_bytes : 0),
      samples_(samples),
      rounded_bytes_(graph.tensors.size()),
      resident_(graph.tensors.size(), 0) {
  for (size_t i = 0; i < graph.tensors.size(); ++i)
    rounded_bytes_[i] = ir::allocation_bytes(graph.tensors[i].bytes);
  op_outputs_begin_.reserve(graph.ops.size() + 1);
  op_outputs_.reserve(graph.ops.size());
  op_workspace_bytes_.reserve(graph.ops.size());
  op_outputs_begin_.push_back(0);
  for (const ir::Op& op : graph.ops) {
    op_outputs_.insert(op_outputs_.end(), op.outputs.begin(), op.outputs.end());
    op_outputs_begin_.push_back(static_cast<int32_t>(op_outputs_.size()));
    op_workspace_bytes_.push_back(ir::allocation_bytes(op.workspace_bytes));
  }
}

bool MemorySimulator::allocate_resident(std::span<const uint8_t> at_start) {
  int64_t bytes = 0;
  for (size_t i = 0; i < graph_.tensors.size(); ++i) {
    const bool starts = at_start.empty() ? ir::resident_at_start(graph_.tensors[i].role) : at_start[i] != 0;
    if (starts && resident_[i] == 0) {
      resident_[i] = 1;
      bytes += rounded_bytes_[i];
    }
  }
  last_request_bytes_ = bytes;
  in_use_bytes_ += bytes;
  peak_bytes_ = in_use_bytes_;
  peak_instruction_ = ir::kNoId;
  peak_time_ns_ = 0;
  sample(0);
  return limit_bytes_ == 0 || in_use_bytes_ <= limit_bytes_;
}

// The memory rule's op request (ir::op_request_bytes) over the flat per-op arrays.
int64_t MemorySimulator::request_bytes(ir::OpId op) const {
  const auto k = static_cast<size_t>(op);
  int64_t bytes = op_workspace_bytes_[k];
  for (auto j = static_cast<size_t>(op_outputs_begin_[k]); j < static_cast<size_t>(op_outputs_begin_[k + 1]); ++j) {
    const auto t = static_cast<size_t>(op_outputs_[j]);
    if (resident_[t] == 0) bytes += rounded_bytes_[t];
  }
  return bytes;
}

bool MemorySimulator::start_op(ir::OpId op, int64_t now_ns, InstrId instruction) {
  const auto k = static_cast<size_t>(op);
  const auto begin = static_cast<size_t>(op_outputs_begin_[k]);
  const auto end = static_cast<size_t>(op_outputs_begin_[k + 1]);
  if (!allocate(request_bytes(op), now_ns, instruction)) return false;
  for (size_t j = begin; j < end; ++j) resident_[static_cast<size_t>(op_outputs_[j])] = 1;
  return true;
}

void MemorySimulator::end_op(ir::OpId op, int64_t now_ns) {
  release(op_workspace_bytes_[static_cast<size_t>(op)], now_ns);
}

bool MemorySimulator::start_swap_in(TensorId tensor, int64_t now_ns, InstrId instruction) {
  const auto t = static_cast<size_t>(tensor);
  if (resident_[t] != 0) {  // already on the device: the copy lands in place
    last_request_bytes_ = 0;
    return true;
  }
  if (!allocate(rounded_bytes_[t], now_ns, instruction)) return false;
  resident_[t] = 1;
  return true;
}

void MemorySimulator::free_tensor(TensorId tensor, int64_t now_ns) {
  const auto t = static_cast<size_t>(tensor);
  if (resident_[t] == 0) return;
  resident_[t] = 0;
  release(rounded_bytes_[t], now_ns);
}

bool MemorySimulator::allocate(int64_t bytes, int64_t now_ns, InstrId instruction) {
  last_request_bytes_ = bytes;
  if (bytes == 0) return true;
  if (limit_bytes_ != 0 && in_use_bytes_ + bytes > limit_bytes_) return false;
  in_use_bytes_ += bytes;
  if (in_use_bytes_ > peak_bytes_) {
    peak_bytes_ = in_use_bytes_;
    peak_instruction_ = instruction;
    peak_time_ns_ = now_ns;
  }
  sample(now_ns);
  return true;
}

void MemorySimulator::release(int64_t bytes, int64_t now_ns) {
  if (bytes == 0) return;
  in_use_bytes_ -= bytes;
  sample(now_ns);
}

void MemorySimulator::sample(int64_t now_ns) {
  if (samples_ != nullptr) samples_->push_back(MemorySample{now_ns, in_use_bytes_});
}

}  // namespace mutwo::sim

#pragma once
// The Schedule: the contract between the compiler half (policies/) and the back ends (sim/, exec/).
// A list of instructions on streams; within a stream they run in list order, across streams only
// the listed waits order them. One Schedule covers one training step of the whole model array.
// The types live here; validation in schedule_check.hpp, JSON files in schedule_json.hpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"
#include "support/error.hpp"

namespace mutwo::ir {

// Version 2 added host_state, version 3 host_stream, version 4 each sub-array's batch_size; older files
// still load (their sub-arrays take the graph's batch_size).
inline constexpr int kScheduleVersion = 4;

// A Schedule that breaks a residency, ordering or stream rule; names the first offending instruction.
class ScheduleError : public Error {
 public:
  using Error::Error;
};

enum class InstrKind : uint8_t { compute, recompute, swap_out, swap_in, free };
std::string_view instr_kind_name(InstrKind kind);
InstrKind parse_instr_kind(std::string_view name);  // throws UnknownNameError

// Stream ids: 0 is the (first) compute stream; device->host and host->device copy engines follow.
// More compute streams, if any, take ids from kFirstExtraComputeStream on.
inline constexpr int32_t kComputeStream = 0;
inline constexpr int32_t kDeviceToHostStream = 1;
inline constexpr int32_t kHostToDeviceStream = 2;
inline constexpr int32_t kFirstExtraComputeStream = 3;
inline constexpr int32_t kNoStream = -1;
// The largest stream id a schedule may use: the simulator keeps per-stream state by id, and a trace
// replay numbers its streams from kFirstExtraComputeStream up (a trace of an op per stream: 152).
inline constexpr int32_t kMaxStreamId = 1023;

// compute and recompute run an op; the others move or release one tensor.
inline constexpr bool runs_op(InstrKind kind) {
  return kind == InstrKind::compute || kind == InstrKind::recompute;
}
inline constexpr bool is_compute_stream(int32_t stream) {
  return stream == kComputeStream || stream >= kFirstExtraComputeStream;
}

using InstrId = int32_t;

struct Instruction {
  InstrId id = kNoId;
  InstrKind kind = InstrKind::compute;
  int32_t stream = kComputeStream;
  OpId op = kNoId;             // compute, recompute
  TensorId tensor = kNoId;     // swap_out, swap_in, free
  std::vector<InstrId> waits;  // earlier instructions (any stream) that must finish first

  bool operator==(const Instruction&) const = default;
};

// Which ops of the (concatenated) graph belong to one sub-array, for reports and exec.
struct SubArray {
  std::string name;  // "bert-base x4"
  int32_t width = 1;
  OpId first_op = 0;  // ops [first_op, end_op) of Schedule::graph
  OpId end_op = 0;
  // Samples per model (its graph's batch_size; 0: unknown, e.g. an imported trace). Sub-arrays of
  // different architectures may train different batches: samples_per_step sums them.
  int64_t batch_size = 0;
  // The array's index of its first model: a plan may run sub-arrays in another order than the user
  // gave them (multiplex_order), and per-model settings (learning rates), weights and losses follow the
  // user's index. kNoId: the models after the previous sub-array's, in schedule order.
  int32_t first_model = kNoId;
};

struct Schedule {
  Graph graph;  // one training step of every sub-array, concatenated (see concat_graphs)
  std::vector<SubArray> sub_arrays;
  std::vector<Instruction> instructions;  // instructions[i].id == i
  std::string policy;                     // "none", "checkpoint", ... (informational)
  // Model state whose home is pinned host memory (ZeRO-Offload, μ-TWO's state offload): weights
  // and optimizer state start the step with a host copy and no device copy and must end it the
  // same way (swapped out after their last update, then freed); gradients listed here start with
  // no copy at all (backward writes them) and must be freed by the end. Ascending, no repeats.
  std::vector<TensorId> host_state;
  // The stream whose instructions run on the host CPU (ZeRO-Offload's CPU optimizer, Ren et al.,
  // ATC 2021), or kNoStream. An id from kFirstExtraComputeStream on, carrying only compute
  // instructions of optimizer updates (is_optimizer_update); each reads and updates the host copies
  // of its inputs (a gradient swapped out, weights and optimizer state kept on the host), never
  // device memory.
  int32_t host_stream = kNoStream;
};

// Whether instruction `in` of `schedule` runs on the host CPU rather than the device.
inline bool runs_on_host(const Schedule& schedule, const Instruction& in) {
  return schedule.host_stream != kNoStream && in.stream == schedule.host_stream;
}

// Concatenates sub-array graphs into one Graph with disjoint ids (tensor and op names prefixed
// "s<i>/" when there is more than one), recording each part's op range. The parts run one after
// another in the given order. The result's name is "a + b + ...", its width the largest part
// width and its batch_size that of the first part (samples per model; parts may differ). Linked
// and validated. Throws GraphError on no parts.
Graph concat_graphs(const std::vector<Graph>& parts, std::vector<SubArray>* sub_arrays = nullptr);

// "compute op 5 'fc1'", "swap_in tensor 3 'x'": how reports of both back ends name an instruction.
std::string describe_instruction(const Schedule& schedule, InstrId id);

// Samples one step trains over all models: each sub-array's width x its batch per model (without
// sub-arrays, the graph's width x its batch_size).
int64_t samples_per_step(const Schedule& schedule);

}  // namespace mutwo::ir

#pragma once
// The Schedule: the contract between the compiler half (policies/) and the back ends (sim/, exec/).
// A list of instructions on streams; within a stream they run in list order, across streams only
// the listed waits order them. One Schedule covers one training step of the whole model array.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiles/error.hpp"
#include "profiles/graph.hpp"

namespace mutwo::profiles {

inline constexpr int kScheduleVersion = 1;

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
};

// Which ops of the (concatenated) graph belong to one sub-array, for reports and exec.
struct SubArray {
  std::string name;  // "bert-base x4"
  int32_t width = 1;
  OpId first_op = 0;  // ops [first_op, end_op) of Schedule::graph
  OpId end_op = 0;
};

struct Schedule {
  Graph graph;  // one training step of every sub-array, concatenated (see concat_graphs)
  std::vector<SubArray> sub_arrays;
  std::vector<Instruction> instructions;  // instructions[i].id == i
  std::string policy;                     // "none", "checkpoint", ... (informational)
};

// Concatenates sub-array graphs into one Graph with disjoint ids (tensor and op names prefixed
// "s<i>/" when there is more than one), recording each part's op range. The parts run one after
// another in the given order. The result's name is "a + b + ...", its width the largest part
// width and its batch_size that of the first part (samples per model; parts may differ). Linked
// and validated. Throws GraphError on no parts.
Graph concat_graphs(const std::vector<Graph>& parts, std::vector<SubArray>* sub_arrays = nullptr);

// Checks the Schedule against its graph: ids, streams (compute, recompute, free on a compute stream,
// swap_out on kDeviceToHostStream, swap_in on kHostToDeviceStream), waits point backwards, every
// tensor an instruction reads is resident on the device and made resident by an instruction that
// happens before it (same stream earlier, or reached through waits), swap_in only of a tensor
// swapped out and freed, nothing freed twice or freed while not resident, every op computed once.
// Throws mutwo::Error naming the first offending instruction ("instruction 17 (compute op 5
// 'fc1'): reads tensor 3 'x' which is not resident").
//
// Residency model (the back ends rely on it):
// - weight, gradient, optimizer_state, input and label tensors are resident at the start; every
//   other tensor becomes resident when an instruction computing its producer, or a swap_in, runs.
// - compute(op): each op exactly once; its inputs must be resident. It writes its outputs (a
//   resident gradient is overwritten in place; any host copy of an output becomes stale).
// - recompute(op): only after compute(op), only of a forward op marked recomputable; its inputs
//   must be resident. Outputs not resident are rebuilt; outputs still resident stay untouched (the
//   recomputed copy is discarded, so they allocate nothing) and a host copy stays valid.
// - swap_out(t): t resident; leaves it resident and creates a host copy.
// - free(t): t resident; releases the device copy. It must happen after the instruction that made
//   t resident and after every instruction that read t since (readers on other streams included),
//   so a back end may release the memory as soon as the free runs.
// - swap_in(t): t has a host copy and is not resident; it must happen after the swap_out that made
//   the host copy and after the free that released the previous device copy.
// - a recompute that rebuilds a freed tensor must happen after that free.
// "A happens before B": A is earlier on B's stream, or B waits (transitively) on an instruction
// that A happens before or is. Whether a freed tensor is needed again is a policy concern and is
// not checked here (a later read of it fails as "not resident").
// Sub-array op ranges, when listed, must be in order, disjoint and within the graph.
// Throws ScheduleError (ids, references, streams and residency rules).
void validate_schedule(const Schedule& schedule);

// "compute op 5 'fc1'", "swap_in tensor 3 'x'": how reports of both back ends name an instruction.
std::string describe_instruction(const Schedule& schedule, InstrId id);

std::string schedule_to_json(const Schedule& schedule);  // embeds the graph; "format": "mutwo-schedule"
// Parses and validates: FormatError (syntax, format, version, field types, unknown or missing fields,
// naming the instruction and field), GraphError (graph invariants), ScheduleError (schedule rules).
Schedule schedule_from_json(const std::string& text);
void write_schedule(const Schedule& schedule, const std::string& path);  // atomic
Schedule read_schedule(const std::string& path);

}  // namespace mutwo::profiles

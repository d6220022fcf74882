#pragma once
// The engine's dynamic eviction (docs/ARCHITECTURE.md "Simulation": DTR's eviction at a memory budget): when
// an op's request does not fit under the budget, ask an EvictionHeuristic for a victim among the
// resident tensors that can be rebuilt, and rematerialise evicted tensors on demand when an op reads
// them again (their producer runs again, its own evicted inputs first). It follows DTR's runtime
// (Kirisame et al., ICLR 2021, section 3; simrd's runtime/v2.py with eager release) over a base
// schedule's compute order. It keeps no clock and no memory counter of its own: the event loop
// (sim/simulator.cpp) passes `now` and the MemorySimulator counts the bytes.
//
// Rules:
// - Evictable: a resident activation or temporary produced by a forward op marked recomputable,
//   not locked (read or written by an op being materialised, or one further up a remat chain), whose
//   producer's inputs can still be brought back.
// - Choice: the eviction pool's (sim/eviction_pool.hpp, shared with DTR-log replay): the smallest
//   score, ties to the later in pool order (a tensor goes to the pool's end when produced and
//   whenever its last lock is released), the first score of 0 ending the scan (simrd's
//   Heuristic.choose).
// - A base free of a tensor that cannot be rebuilt and that an evicted tensor may still need is
//   deferred until nothing needs it; tensors rebuilt after the base freed them are freed once the
//   op that needed them ran; base-freed tensors still resident at the end are freed then.
// - Failure (the run goes on, evicting no more, so the executed schedule is complete): the resident
//   state alone is over the budget, nothing is left to evict, or recomputation passes the limit.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/eq_classes.hpp"
#include "sim/eviction_heuristic.hpp"
#include "sim/eviction_pool.hpp"
#include "sim/executed_instruction.hpp"
#include "sim/memory_simulator.hpp"

namespace mutwo::sim {

class DynamicEviction {
 public:
  // op_ns: per op duration. remat_limit_ns < 0: no limit. Throws mutwo::Error when the schedule is
  // not a base schedule (compute and free on the compute stream, each op computed once).
  DynamicEviction(const ir::Schedule& schedule, const std::vector<int64_t>& op_ns, MemorySimulator& memory,
                  std::vector<ExecutedInstruction>& executed, const EvictionHeuristic& heuristic,
                  int64_t budget_bytes, int64_t remat_limit_ns);

  // The compute stream's next instruction (a compute of op) is due: materialise it.
  void begin(ir::OpId op, ir::InstrId instruction);
  // Walks the materialisation until an op must run (a recompute first, or the op itself), evicting
  // to fit its request, and allocates that request. Returns the op; its duration is the caller's.
  ir::OpId next(int64_t now_ns);
  // The running op finished (workspace already released). True when it was the instruction's own
  // op (the instruction is done); false when a remat finished and next() must be called again.
  bool finish(int64_t now_ns);
  bool active() const { return !frames_.empty(); }

  void base_free(ir::TensorId t, int64_t now_ns);        // the base's free(t) is due
  void release_dead(int64_t now_ns);                     // after the base's frees at an instant
  void end_of_step(int64_t now_ns);                      // frees base-freed tensors still resident

  bool fits() const { return fits_; }
  const std::string& failure() const { return failure_; }
  int32_t evictions() const { return evictions_; }
  int32_t recomputes() const { return recomputes_; }

 private:
  enum class State : uint8_t { unborn, resident, evicted, lost };
  struct Frame {
    ir::OpId op = ir::kNoId;
    bool remat = false;
    int32_t phase = 0;  // 0 new, 1 bringing inputs back, 2 running
    size_t next_input = 0;
    std::vector<ir::TensorId> locked;
    ir::InstrId instruction = ir::kNoId;  // the base instruction (bottom frame only)
  };

  bool resident(ir::TensorId t) const { return state_[static_cast<size_t>(t)] == State::resident; }
  void lock(ir::TensorId t, std::vector<ir::TensorId>& locked);
  bool evict_one(int64_t now_ns);
  void free_tensor(ir::TensorId t, int64_t now_ns);
  void fail(std::string why);
  bool may_free(ir::TensorId t);
  bool rebuildable_if_freed(ir::TensorId t);
  bool producer_inputs_rebuildable(ir::TensorId t);
  bool needed_for_remat(ir::TensorId t);
  bool feeds_needed_remat(ir::TensorId t);
  EvictionCandidate candidate(ir::TensorId t, int64_t now_ns);
  int64_t region_compute_ns(ir::TensorId t, bool children);
  void on_evicted(ir::TensorId t);
  void on_rematerialised(ir::TensorId t);

  const ir::Graph& g_;
  const std::vector<int64_t>& op_ns_;
  MemorySimulator& memory_;
  std::vector<ExecutedInstruction>& executed_;
  const EvictionHeuristic& heuristic_;
  const EvictionFeatures features_;
  int64_t budget_;
  int64_t remat_limit_ns_;

  std::vector<int32_t> position_of_;  // per op: its place in the base's compute order
  std::vector<State> state_;          // per tensor
  std::vector<uint8_t> rebuildable_;  // produced by a forward recomputable op, not persistent
  std::vector<uint8_t> evictable_;    // rebuildable activation or temporary
  std::vector<int32_t> last_read_pos_;
  std::vector<uint8_t> base_freed_;
  std::vector<int64_t> last_access_ns_;
  EvictionPool pool_;  // resident evictable tensors, with the locks of every tensor
  std::vector<uint32_t> memo_stamp_;
  std::vector<uint8_t> memo_value_;
  uint32_t epoch_ = 0;
  std::vector<int32_t> walk_stack_;
  std::vector<int32_t> class_of_;  // per tensor: its equivalence-class node while evicted, else -1
  EqClasses classes_;
  std::vector<int32_t> roots_;
  std::vector<ir::TensorId> dead_;      // rebuilt by a remat after the base freed them
  std::vector<ir::TensorId> deferred_;  // base-freed, kept because an evicted tensor needs them

  std::vector<Frame> frames_;
  int32_t now_pos_ = 0;
  int64_t remat_ns_ = 0;
  int32_t evictions_ = 0;
  int32_t recomputes_ = 0;
  bool fits_ = true;
  std::string failure_;
};

}  // namespace mutwo::sim

// DTR's runtime (Kirisame et al., ICLR 2021, section 3; simrd's runtime/v2.py, eager release)
// simulated over a base schedule and recorded as a Schedule. See dtr_runtime.hpp for the rules.
#include "policies/dtr_runtime.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "costmodel/op_cost_model.hpp"
#include "profiles/error.hpp"
#include "sim/memory_simulator.hpp"

namespace mutwo::policies {

using profiles::Graph;
using profiles::InstrKind;
using profiles::OpId;
using profiles::TensorId;
using profiles::TensorRole;

namespace {

class Runtime {
 public:
  Runtime(const profiles::Schedule& base, const costmodel::OpCostModel& cost, int64_t budget_bytes,
          DtrHeuristic& heuristic)
      : base_(base), g_(base.graph), budget_(budget_bytes), h_(heuristic) {
    read_base();
    build_tensors(cost);
  }

  DtrRun run() {
    DtrRun r;
    r.schedule.graph = g_;
    r.schedule.sub_arrays = base_.sub_arrays;
    out_ = &r.schedule.instructions;
    r.resident_bytes = in_use_;
    peak_ = in_use_;
    if (in_use_ > budget_) {
      fail(fmt::format(
          "tensors resident from the start (weights, gradients, optimizer state, inputs) take {} B, "
          "over the budget of {} B",
          in_use_, budget_));
    }
    for (TensorId t : initial_frees_) base_free(t);
    for (size_t p = 0; p < op_at_.size(); ++p) {
      now_pos_ = static_cast<int32_t>(p);
      materialize(op_at_[p], false);
      now_pos_ = static_cast<int32_t>(p) + 1;
      for (TensorId t : frees_after_[p]) base_free(t);
      release_dead();
    }
    for (size_t t = 0; t < g_.tensors.size(); ++t) {  // the step is over: nothing needs them any more
      if (base_freed_[t] && dg_.state[t] == StorageState::resident) free_tensor(static_cast<TensorId>(t));
    }
    r.fits = fits_;
    r.failure = failure_;
    r.peak_bytes = peak_;
    r.clock_ns = dg_.clock_ns;
    r.remat_ns = remat_ns_;
    r.evictions = evictions_;
    r.remats = remats_;
    return r;
  }

 private:
  // Compute order and the base's frees after each position.
  void read_base() {
    std::vector<int32_t> seen(g_.ops.size(), -1);
    for (const profiles::Instruction& in : base_.instructions) {
      if (in.kind == InstrKind::compute) {
        const auto k = static_cast<size_t>(in.op);
        if (in.op < 0 || k >= g_.ops.size())
          throw Error(fmt::format("dtr: base instruction {} computes no op", in.id));
        if (seen[k] >= 0) {
          throw Error(fmt::format("dtr: base schedule computes op {} '{}' twice (instructions {} and {})",
                                  in.op, g_.ops[k].name, seen[k], in.id));
        }
        seen[k] = in.id;
        op_at_.push_back(in.op);
        frees_after_.emplace_back();
      } else if (in.kind == InstrKind::free) {
        (op_at_.empty() ? initial_frees_ : frees_after_.back()).push_back(in.tensor);
      } else {
        throw Error(fmt::format("dtr: base schedule is not a base schedule: instruction {} is a {}", in.id,
                                profiles::instr_kind_name(in.kind)));
      }
    }
    for (size_t k = 0; k < g_.ops.size(); ++k) {
      if (seen[k] < 0)
        throw Error(fmt::format("dtr: base schedule never computes op {} '{}'", k, g_.ops[k].name));
    }
    position_of_.assign(g_.ops.size(), -1);
    for (size_t p = 0; p < op_at_.size(); ++p)
      position_of_[static_cast<size_t>(op_at_[p])] = static_cast<int32_t>(p);
  }

  void build_tensors(const costmodel::OpCostModel& cost) {
    const size_t nt = g_.tensors.size();
    op_ns_ = costmodel::op_durations_ns(cost, g_);
    for (int64_t d : op_ns_) {
      if (d < 0) throw Error("dtr: the cost model returned a negative op duration");
      base_ns_ += d;
    }
    rounded_.resize(nt);
    rebuildable_.assign(nt, 0);
    evictable_.assign(nt, 0);
    last_read_pos_.assign(nt, -1);
    base_freed_.assign(nt, 0);
    locks_.assign(nt, 0);
    pool_index_.assign(nt, -1);
    pool_stamp_.assign(nt, 0);
    memo_stamp_.assign(nt, 0);
    memo_value_.assign(nt, 0);
    dg_.size_bytes.resize(nt);
    dg_.compute_ns.assign(nt, 0);
    dg_.last_access_ns.assign(nt, 0);
    dg_.state.assign(nt, StorageState::unborn);
    dg_.parents_begin.assign(1, 0);
    dg_.children_begin.assign(1, 0);
    for (size_t t = 0; t < nt; ++t) {
      const profiles::Tensor& tensor = g_.tensors[t];
      rounded_[t] = sim::MemorySimulator::round_up(tensor.bytes);
      dg_.size_bytes[t] = tensor.bytes;
      const bool persistent = profiles::is_persistent(tensor.role);
      if (persistent || tensor.role == TensorRole::input || tensor.role == TensorRole::label) {
        dg_.state[t] = StorageState::resident;
        in_use_ += rounded_[t];
      }
      if (tensor.producer != profiles::kNoId) {
        const profiles::Op& op = g_.op(tensor.producer);
        dg_.compute_ns[t] = op_ns_[static_cast<size_t>(op.id)];
        rebuildable_[t] = !persistent && op.phase == profiles::Phase::forward && op.recomputable;
        evictable_[t] = rebuildable_[t] &&
                        (tensor.role == TensorRole::activation || tensor.role == TensorRole::temporary);
        for (TensorId i : op.inputs) dg_.parents_flat.push_back(i);
      }
      dg_.parents_begin.push_back(static_cast<int32_t>(dg_.parents_flat.size()));
      for (OpId c : tensor.consumers) {
        last_read_pos_[t] = std::max(last_read_pos_[t], position_of_[static_cast<size_t>(c)]);
        for (TensorId o : g_.op(c).outputs) dg_.children_flat.push_back(o);
      }
      dg_.children_begin.push_back(static_cast<int32_t>(dg_.children_flat.size()));
    }
  }

  bool resident(TensorId t) const { return dg_.state[static_cast<size_t>(t)] == StorageState::resident; }
  bool needed_later(TensorId t) const { return last_read_pos_[static_cast<size_t>(t)] >= now_pos_; }

  void emit(InstrKind kind, int32_t op_or_tensor) {
    profiles::Instruction in;
    in.id = static_cast<profiles::InstrId>(out_->size());
    in.kind = kind;
    if (profiles::runs_op(kind)) {
      in.op = op_or_tensor;
    } else {
      in.tensor = op_or_tensor;
    }
    out_->push_back(in);
  }

  void fail(std::string why) {
    if (fits_) failure_ = std::move(why);
    fits_ = false;
  }

  // Runs op (again when remat), making its inputs resident first and evicting to fit.
  void materialize(OpId id, bool remat) {
    const profiles::Op& op = g_.ops[static_cast<size_t>(id)];
    std::vector<TensorId> locked;
    for (TensorId t : op.inputs) dg_.last_access_ns[static_cast<size_t>(t)] = dg_.clock_ns;
    for (TensorId t : op.inputs) {
      if (resident(t)) lock(t, locked);
    }
    for (TensorId t : op.inputs) {
      if (resident(t)) {  // rebuilt meanwhile as a sibling of another input: lock it now
        if (std::find(locked.begin(), locked.end(), t) == locked.end()) lock(t, locked);
        continue;
      }
      if (dg_.state[static_cast<size_t>(t)] != StorageState::evicted) {
        throw Error(
            fmt::format("dtr: internal error: op {} '{}' reads tensor {} '{}' which can no longer be rebuilt",
                        id, op.name, t, g_.tensor(t).name));
      }
      materialize(g_.tensor(t).producer, true);
      lock(t, locked);
    }
    int64_t need = sim::MemorySimulator::round_up(op.workspace_bytes);
    for (TensorId t : op.outputs) {
      if (resident(t)) {
        lock(t, locked);
      } else {
        need += rounded_[static_cast<size_t>(t)];
      }
    }
    while (fits_ && in_use_ + need > budget_) {  // once over the budget, no use thrashing on
      if (!evict_one()) {
        fail(fmt::format("{} {} '{}' needs {} B with {} B in use and nothing left to evict (budget {} B)",
                         remat ? "recomputing op" : "op", id, op.name, need, in_use_, budget_));
        break;
      }
    }
    emit(remat ? InstrKind::recompute : InstrKind::compute, id);
    in_use_ += need;
    peak_ = std::max(peak_, in_use_);
    in_use_ -= sim::MemorySimulator::round_up(op.workspace_bytes);
    const int64_t d = op_ns_[static_cast<size_t>(id)];
    dg_.clock_ns += d;
    if (remat) {
      remat_ns_ += d;
      ++remats_;
      if (fits_ && remat_ns_ > base_ns_) {
        fail(
            fmt::format("thrashing: recomputation passed the step's own compute time ({} ns) at op {} '{}' "
                        "(budget {} B)",
                        base_ns_, id, op.name, budget_));
      }
    }
    for (TensorId t : op.outputs) {
      const auto k = static_cast<size_t>(t);
      if (dg_.state[k] == StorageState::resident) continue;
      const bool was_evicted = dg_.state[k] == StorageState::evicted;
      dg_.state[k] = StorageState::resident;
      if (was_evicted) h_.on_remat(dg_, t);
      if (evictable_[k]) pool_add(t);
      if (remat && base_freed_[k]) dead_.push_back(t);
    }
    if (!remat) {
      for (TensorId t : op.outputs) dg_.last_access_ns[static_cast<size_t>(t)] = dg_.clock_ns;
    }
    for (TensorId t : locked) unlock(t);
  }

  void lock(TensorId t, std::vector<TensorId>& locked) {
    ++locks_[static_cast<size_t>(t)];
    locked.push_back(t);
  }
  void unlock(TensorId t) {
    // Back in simrd's pool: it goes to the end of the scan order again.
    if (--locks_[static_cast<size_t>(t)] == 0) pool_stamp_[static_cast<size_t>(t)] = ++stamp_counter_;
  }

  void pool_add(TensorId t) {
    const auto k = static_cast<size_t>(t);
    pool_index_[k] = static_cast<int32_t>(pool_.size());
    pool_.push_back(t);
    pool_stamp_[k] = ++stamp_counter_;
  }
  void pool_remove(TensorId t) {
    const auto k = static_cast<size_t>(t);
    const int32_t i = pool_index_[k];
    if (i < 0) return;
    const TensorId last = pool_.back();
    pool_[static_cast<size_t>(i)] = last;
    pool_index_[static_cast<size_t>(last)] = i;
    pool_.pop_back();
    pool_index_[k] = -1;
  }

  // simrd's choose(): smallest score; ties go to the later in pool order, except that a score of 0
  // stops the scan (the earliest 0 wins). Only tensors that can be rebuilt later qualify.
  bool evict_one() {
    TensorId best = profiles::kNoId;
    double best_score = 0;
    uint64_t best_stamp = 0;
    for (TensorId t : pool_) {
      const auto k = static_cast<size_t>(t);
      if (locks_[k] > 0) continue;
      const double s = h_.score(dg_, t);
      const uint64_t stamp = pool_stamp_[k];
      if (best != profiles::kNoId) {
        const bool better =
            s < best_score || (s == best_score && (s == 0 ? stamp < best_stamp : stamp > best_stamp));
        if (!better) continue;
      }
      if (!rebuildable_if_freed(t)) continue;
      best = t;
      best_score = s;
      best_stamp = stamp;
    }
    if (best == profiles::kNoId) return false;
    free_tensor(best);
    ++evictions_;
    return true;
  }

  void free_tensor(TensorId t) {
    const auto k = static_cast<size_t>(t);
    emit(InstrKind::free, t);
    in_use_ -= rounded_[k];
    pool_remove(t);
    dg_.state[k] = rebuildable_[k] ? StorageState::evicted : StorageState::lost;
    if (dg_.state[k] == StorageState::evicted) h_.on_evict(dg_, t);
  }

  // The base frees t here (its last reader ran). Kept while an evicted tensor may need it and it
  // could not be rebuilt itself.
  void base_free(TensorId t) {
    const auto k = static_cast<size_t>(t);
    base_freed_[k] = 1;
    if (dg_.state[k] != StorageState::resident) return;
    if (may_free(t)) {
      free_tensor(t);
    } else {
      deferred_.push_back(t);
    }
  }

  bool may_free(TensorId t) { return rebuildable_if_freed(t) || !needed_for_remat(t); }

  // Frees rebuilt tensors no reader needs, and deferred ones nothing depends on any more.
  void release_dead() {
    for (TensorId t : dead_) {
      if (resident(t) && locks_[static_cast<size_t>(t)] == 0 && may_free(t))
        free_tensor(t);
      else if (resident(t))
        deferred_.push_back(t);
    }
    dead_.clear();
    size_t kept = 0;
    for (TensorId t : deferred_) {
      if (!resident(t)) continue;
      if (may_free(t)) {
        free_tensor(t);
      } else {
        deferred_[kept++] = t;
      }
    }
    deferred_.resize(kept);
  }

  // Could t's device copy be released now and rebuilt later? Its producer is recomputable and each
  // of the producer's inputs is resident or evicted and rebuildable in turn.
  bool rebuildable_if_freed(TensorId t) {
    if (!rebuildable_[static_cast<size_t>(t)]) return false;
    ++epoch_;
    return producer_inputs_rebuildable(t);
  }
  bool producer_inputs_rebuildable(TensorId t) {
    for (TensorId i : g_.op(g_.tensor(t).producer).inputs) {
      const auto k = static_cast<size_t>(i);
      if (dg_.state[k] == StorageState::resident) continue;
      if (dg_.state[k] != StorageState::evicted) return false;
      if (memo_stamp_[k] != epoch_) {
        memo_stamp_[k] = epoch_;
        memo_value_[k] = producer_inputs_rebuildable(i) ? 1 : 0;
      }
      if (memo_value_[k] == 0) return false;
    }
    return true;
  }

  // Does an evicted tensor that a later op reads (directly, or through further evicted tensors)
  // need t to be rebuilt?
  bool needed_for_remat(TensorId t) {
    ++epoch_;
    return feeds_needed_remat(t);
  }
  bool feeds_needed_remat(TensorId t) {
    for (OpId c : g_.tensor(t).consumers) {
      if (position_of_[static_cast<size_t>(c)] >= now_pos_) continue;  // not run yet: not a remat
      for (TensorId z : g_.op(c).outputs) {
        const auto k = static_cast<size_t>(z);
        if (dg_.state[k] != StorageState::evicted) continue;
        if (needed_later(z)) return true;
        if (memo_stamp_[k] != epoch_) {
          memo_stamp_[k] = epoch_;
          memo_value_[k] = feeds_needed_remat(z) ? 1 : 0;
        }
        if (memo_value_[k] != 0) return true;
      }
    }
    return false;
  }

  const profiles::Schedule& base_;
  const Graph& g_;
  int64_t budget_;
  DtrHeuristic& h_;
  std::vector<profiles::Instruction>* out_ = nullptr;

  std::vector<OpId> op_at_;
  std::vector<int32_t> position_of_;
  std::vector<TensorId> initial_frees_;
  std::vector<std::vector<TensorId>> frees_after_;
  std::vector<int64_t> op_ns_;

  DtrGraph dg_;
  std::vector<int64_t> rounded_;
  std::vector<uint8_t> rebuildable_;  // produced by a forward recomputable op, not persistent
  std::vector<uint8_t> evictable_;    // rebuildable activation or temporary
  std::vector<int32_t> last_read_pos_;
  std::vector<uint8_t> base_freed_;
  std::vector<int32_t> locks_;
  std::vector<TensorId> pool_;  // resident evictable tensors, any order; pool_stamp_ gives simrd's order
  std::vector<int32_t> pool_index_;
  std::vector<uint64_t> pool_stamp_;
  uint64_t stamp_counter_ = 0;
  std::vector<uint32_t> memo_stamp_;
  std::vector<uint8_t> memo_value_;
  uint32_t epoch_ = 0;
  std::vector<TensorId> dead_;      // rebuilt by a remat after the base freed them
  std::vector<TensorId> deferred_;  // base-freed, kept because an evicted tensor needs them

  int32_t now_pos_ = 0;
  int64_t in_use_ = 0;
  int64_t peak_ = 0;
  int64_t remat_ns_ = 0;
  int64_t base_ns_ = 0;  // the step's compute time: simrd's remat limit at overhead 2.0
  int32_t evictions_ = 0;
  int32_t remats_ = 0;
  bool fits_ = true;
  std::string failure_;
};

}  // namespace

DtrRun run_dtr(const profiles::Schedule& base, const costmodel::OpCostModel& cost, int64_t budget_bytes,
               DtrHeuristic& heuristic) {
  if (budget_bytes <= 0) throw Error(fmt::format("dtr: budget_bytes = {} must be > 0", budget_bytes));
  return Runtime(base, cost, budget_bytes, heuristic).run();
}

}  // namespace mutwo::policies

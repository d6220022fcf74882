// Dynamic eviction inside the engine; see dynamic_eviction.hpp for the rules. The order of every
// lock, pool entry and access-time update follows DTR's runtime, because it decides which tensor a
// heuristic picks.
#include "sim/dynamic_eviction.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ir/memory_rule.hpp"
#include "support/error.hpp"

namespace mutwo::sim {

using ir::InstrKind;
using ir::OpId;
using ir::TensorId;
using ir::TensorRole;

DynamicEviction::DynamicEviction(const ir::Schedule& schedule, const std::vector<int64_t>& op_ns,
                                 MemorySimulator& memory, std::vector<ExecutedInstruction>& executed,
                                 const EvictionHeuristic& heuristic, int64_t budget_bytes,
                                 int64_t remat_limit_ns)
    : g_(schedule.graph),
      op_ns_(op_ns),
      memory_(memory),
      executed_(executed),
      heuristic_(heuristic),
      features_(heuristic.features()),
      budget_(budget_bytes),
      remat_limit_ns_(remat_limit_ns) {
  const size_t nt = g_.tensors.size();
  position_of_.assign(g_.ops.size(), -1);
  int32_t position = 0;
  for (const ir::Instruction& in : schedule.instructions) {
    const bool base_kind = in.kind == InstrKind::compute || in.kind == InstrKind::free;
    if (!base_kind || in.stream != ir::kComputeStream) {
      throw Error(fmt::format(
          "simulate: dynamic eviction replays a base schedule (compute and free on the compute stream); "
          "instruction {} is a {} on stream {}",
          in.id, ir::instr_kind_name(in.kind), in.stream));
    }
    if (in.kind == InstrKind::compute) {
      int32_t& p = position_of_[static_cast<size_t>(in.op)];
      if (p >= 0) {
        throw Error(fmt::format("simulate: dynamic eviction needs each op computed once; op {} '{}' is "
                                "computed again by instruction {}",
                                in.op, g_.op(in.op).name, in.id));
      }
      p = position++;
    }
  }
  state_.assign(nt, State::unborn);
  rebuildable_.assign(nt, 0);
  evictable_.assign(nt, 0);
  last_read_pos_.assign(nt, -1);
  base_freed_.assign(nt, 0);
  last_access_ns_.assign(nt, 0);
  pool_ = EvictionPool(nt);
  memo_stamp_.assign(nt, 0);
  memo_value_.assign(nt, 0);
  class_of_.assign(nt, -1);
  for (size_t t = 0; t < nt; ++t) {
    const ir::Tensor& tensor = g_.tensors[t];
    if (ir::resident_at_start(tensor.role)) state_[t] = State::resident;
    if (tensor.producer != ir::kNoId) {
      const ir::Op& op = g_.op(tensor.producer);
      rebuildable_[t] = !ir::is_persistent(tensor.role) && op.phase == ir::Phase::forward && op.recomputable;
      evictable_[t] =
          rebuildable_[t] && (tensor.role == TensorRole::activation || tensor.role == TensorRole::temporary);
    }
    for (OpId c : tensor.consumers)
      last_read_pos_[t] = std::max(last_read_pos_[t], position_of_[static_cast<size_t>(c)]);
  }
  if (memory_.in_use_bytes() > budget_) {
    fail(fmt::format(
        "tensors resident from the start (weights, gradients, optimizer state, inputs) take {} B, over the "
        "budget of {} B",
        memory_.in_use_bytes(), budget_));
  }
}

void DynamicEviction::begin(OpId op, ir::InstrId instruction) {
  Frame f;
  f.op = op;
  f.instruction = instruction;
  now_pos_ = position_of_[static_cast<size_t>(op)];
  frames_.push_back(std::move(f));
}

OpId DynamicEviction::next(int64_t now_ns) {
  for (;;) {
    Frame& f = frames_.back();
    const ir::Op& op = g_.ops[static_cast<size_t>(f.op)];
    if (f.phase == 0) {
      for (TensorId t : op.inputs) last_access_ns_[static_cast<size_t>(t)] = now_ns;
      for (TensorId t : op.inputs) {
        if (resident(t)) lock(t, f.locked);
      }
      f.phase = 1;
    }
    bool descended = false;
    for (; f.next_input < op.inputs.size(); ++f.next_input) {
      const TensorId t = op.inputs[f.next_input];
      if (resident(t)) {  // resident from the start of this frame, or rebuilt meanwhile
        if (std::find(f.locked.begin(), f.locked.end(), t) == f.locked.end()) lock(t, f.locked);
        continue;
      }
      if (state_[static_cast<size_t>(t)] != State::evicted) {
        throw Error(fmt::format(
            "simulate: internal error: op {} '{}' reads tensor {} '{}' which can no longer be rebuilt", f.op,
            op.name, t, g_.tensor(t).name));
      }
      Frame child;
      child.op = g_.tensor(t).producer;
      child.remat = true;
      frames_.push_back(std::move(child));  // f is dangling from here
      descended = true;
      break;
    }
    if (descended) continue;

    for (TensorId t : op.outputs) {
      if (resident(t)) lock(t, f.locked);
    }
    const int64_t need = memory_.request_bytes(f.op);
    while (fits_ && memory_.in_use_bytes() + need > budget_) {  // once failed, no use thrashing on
      if (!evict_one(now_ns)) {
        fail(fmt::format("{} {} '{}' needs {} B with {} B in use and nothing left to evict (budget {} B)",
                         f.remat ? "recomputing op" : "op", f.op, op.name, need, memory_.in_use_bytes(),
                         budget_));
        break;
      }
    }
    const auto id = static_cast<ir::InstrId>(executed_.size());
    executed_.push_back({f.remat ? InstrKind::recompute : InstrKind::compute, f.op, ir::kComputeStream,
                         now_ns, op_ns_[static_cast<size_t>(f.op)], f.instruction});
    memory_.start_op(f.op, now_ns, id);  // the memory simulator runs without a limit here
    f.phase = 2;
    return f.op;
  }
}

bool DynamicEviction::finish(int64_t now_ns) {
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  const ir::Op& op = g_.ops[static_cast<size_t>(f.op)];
  if (f.remat) {
    remat_ns_ += op_ns_[static_cast<size_t>(f.op)];
    ++recomputes_;
    if (fits_ && remat_limit_ns_ >= 0 && remat_ns_ > remat_limit_ns_) {
      fail(fmt::format("thrashing: recomputation passed its limit of {} ns at op {} '{}' (budget {} B)",
                       remat_limit_ns_, f.op, op.name, budget_));
    }
  }
  for (TensorId t : op.outputs) {
    const auto k = static_cast<size_t>(t);
    if (state_[k] == State::resident) continue;
    const bool was_evicted = state_[k] == State::evicted;
    state_[k] = State::resident;
    if (was_evicted) on_rematerialised(t);
    if (evictable_[k]) pool_.enter(t);
    if (f.remat && base_freed_[k]) dead_.push_back(t);
  }
  if (!f.remat) {
    for (TensorId t : op.outputs) last_access_ns_[static_cast<size_t>(t)] = now_ns;
  }
  for (TensorId t : f.locked) pool_.unlock(t);
  if (!frames_.empty()) return false;
  now_pos_ = position_of_[static_cast<size_t>(f.op)] + 1;
  return true;
}

void DynamicEviction::lock(TensorId t, std::vector<TensorId>& locked) {
  pool_.lock(t);
  locked.push_back(t);
}

// The pool's pick (sim/eviction_pool.hpp) among tensors whose device copy could be rebuilt.
bool DynamicEviction::evict_one(int64_t now_ns) {
  const TensorId best = pool_.choose([&](TensorId t) { return heuristic_.score(candidate(t, now_ns)); },
                                     [&](TensorId t) { return rebuildable_if_freed(t); });
  if (best == ir::kNoId) return false;
  free_tensor(best, now_ns);
  ++evictions_;
  return true;
}

void DynamicEviction::free_tensor(TensorId t, int64_t now_ns) {
  const auto k = static_cast<size_t>(t);
  executed_.push_back({InstrKind::free, t, ir::kComputeStream, now_ns, 0, ir::kNoId});
  memory_.free_tensor(t, now_ns);
  pool_.leave(t);
  state_[k] = rebuildable_[k] ? State::evicted : State::lost;
  if (state_[k] == State::evicted) on_evicted(t);
}

void DynamicEviction::fail(std::string why) {
  if (fits_) failure_ = std::move(why);
  fits_ = false;
}

void DynamicEviction::base_free(TensorId t, int64_t now_ns) {
  const auto k = static_cast<size_t>(t);
  base_freed_[k] = 1;
  if (state_[k] != State::resident) return;
  if (may_free(t)) {
    free_tensor(t, now_ns);
  } else {
    deferred_.push_back(t);
  }
}

bool DynamicEviction::may_free(TensorId t) {
  return rebuildable_if_freed(t) || !needed_for_remat(t);
}

void DynamicEviction::release_dead(int64_t now_ns) {
  for (TensorId t : dead_) {
    if (resident(t) && pool_.locks(t) == 0 && may_free(t))
      free_tensor(t, now_ns);
    else if (resident(t))
      deferred_.push_back(t);
  }
  dead_.clear();
  size_t kept = 0;
  for (TensorId t : deferred_) {
    if (!resident(t)) continue;
    if (may_free(t)) {
      free_tensor(t, now_ns);
    } else {
      deferred_[kept++] = t;
    }
  }
  deferred_.resize(kept);
}

void DynamicEviction::end_of_step(int64_t now_ns) {
  for (size_t t = 0; t < g_.tensors.size(); ++t) {  // the step is over: nothing needs them any more
    if (base_freed_[t] && state_[t] == State::resident) free_tensor(static_cast<TensorId>(t), now_ns);
  }
}

// Could t's device copy be released now and rebuilt later? Its producer is recomputable and each of
// the producer's inputs is resident, or evicted and rebuildable in turn.
bool DynamicEviction::rebuildable_if_freed(TensorId t) {
  if (!rebuildable_[static_cast<size_t>(t)]) return false;
  ++epoch_;
  return producer_inputs_rebuildable(t);
}

bool DynamicEviction::producer_inputs_rebuildable(TensorId t) {
  for (TensorId i : g_.op(g_.tensor(t).producer).inputs) {
    const auto k = static_cast<size_t>(i);
    if (state_[k] == State::resident) continue;
    if (state_[k] != State::evicted) return false;
    if (memo_stamp_[k] != epoch_) {
      memo_stamp_[k] = epoch_;
      memo_value_[k] = producer_inputs_rebuildable(i) ? 1 : 0;
    }
    if (memo_value_[k] == 0) return false;
  }
  return true;
}

// Does an evicted tensor that a later op reads (directly, or through further evicted tensors) need
// t to be rebuilt?
bool DynamicEviction::needed_for_remat(TensorId t) {
  ++epoch_;
  return feeds_needed_remat(t);
}

bool DynamicEviction::feeds_needed_remat(TensorId t) {
  for (OpId c : g_.tensor(t).consumers) {
    if (position_of_[static_cast<size_t>(c)] >= now_pos_) continue;  // not run yet: not a remat
    for (TensorId z : g_.op(c).outputs) {
      const auto k = static_cast<size_t>(z);
      if (state_[k] != State::evicted) continue;
      if (last_read_pos_[k] >= now_pos_) return true;
      if (memo_stamp_[k] != epoch_) {
        memo_stamp_[k] = epoch_;
        memo_value_[k] = feeds_needed_remat(z) ? 1 : 0;
      }
      if (memo_value_[k] != 0) return true;
    }
  }
  return false;
}

EvictionCandidate DynamicEviction::candidate(TensorId t, int64_t now_ns) {
  const auto k = static_cast<size_t>(t);
  const ir::Tensor& tensor = g_.tensors[k];
  EvictionCandidate c;
  c.size_bytes = tensor.bytes;
  c.compute_ns = op_ns_[static_cast<size_t>(tensor.producer)];
  c.last_access_ns = last_access_ns_[k];
  c.clock_ns = now_ns;
  if (features_.regions) {
    c.region_compute_ns = region_compute_ns(t, true);
    c.region_rev_compute_ns = region_compute_ns(t, false);
  }
  if (features_.eq_classes) {
    roots_.clear();
    auto add = [&](TensorId n) {
      if (state_[static_cast<size_t>(n)] == State::evicted)
        roots_.push_back(classes_.find(class_of_[static_cast<size_t>(n)]));
    };
    for (TensorId p : g_.op(tensor.producer).inputs) add(p);
    for (OpId r : tensor.consumers) {
      for (TensorId o : g_.op(r).outputs) add(o);
    }
    std::sort(roots_.begin(), roots_.end());
    roots_.erase(std::unique(roots_.begin(), roots_.end()), roots_.end());
    for (int32_t r : roots_) c.eqclass_compute_ns += classes_.value(r);
  }
  return c;
}

// Summed compute of the evicted tensors reachable from t through evicted tensors only, along child
// edges (outputs of the ops reading a tensor; simrd's region) or parent edges (inputs of the op
// producing it; region_rev); t itself not counted.
int64_t DynamicEviction::region_compute_ns(TensorId t, bool children) {
  ++epoch_;
  int64_t sum = 0;
  walk_stack_.clear();
  memo_stamp_[static_cast<size_t>(t)] = epoch_;
  auto visit = [&](TensorId n) {
    const auto k = static_cast<size_t>(n);
    if (memo_stamp_[k] == epoch_ || state_[k] != State::evicted) return;
    memo_stamp_[k] = epoch_;
    sum += op_ns_[static_cast<size_t>(g_.tensors[k].producer)];
    walk_stack_.push_back(n);
  };
  auto push_neighbours = [&](TensorId v) {
    const ir::Tensor& tensor = g_.tensors[static_cast<size_t>(v)];
    if (children) {
      for (OpId r : tensor.consumers) {
        for (TensorId o : g_.op(r).outputs) visit(o);
      }
    } else if (tensor.producer != ir::kNoId) {
      for (TensorId i : g_.op(tensor.producer).inputs) visit(i);
    }
  };
  push_neighbours(t);
  while (!walk_stack_.empty()) {
    const TensorId v = walk_stack_.back();
    walk_stack_.pop_back();
    push_neighbours(v);
  }
  return sum;
}

// A new class per eviction, merged with the classes of the evicted neighbours.
void DynamicEviction::on_evicted(TensorId t) {
  if (!features_.eq_classes) return;
  const auto k = static_cast<size_t>(t);
  const ir::Tensor& tensor = g_.tensors[k];
  class_of_[k] = classes_.make(op_ns_[static_cast<size_t>(tensor.producer)]);
  auto merge = [&](TensorId n) {
    if (n != t && state_[static_cast<size_t>(n)] == State::evicted)
      classes_.merge(class_of_[static_cast<size_t>(n)], class_of_[k]);
  };
  for (TensorId p : g_.op(tensor.producer).inputs) merge(p);
  for (OpId r : tensor.consumers) {
    for (TensorId o : g_.op(r).outputs) merge(o);
  }
}

void DynamicEviction::on_rematerialised(TensorId t) {
  if (!features_.eq_classes) return;
  const auto k = static_cast<size_t>(t);
  if (class_of_[k] < 0) return;
  classes_.value(class_of_[k]) -= op_ns_[static_cast<size_t>(g_.tensors[k].producer)];
  class_of_[k] = -1;
}

}  // namespace mutwo::sim

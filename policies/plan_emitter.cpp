#include "policies/plan_emitter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <span>
#include <utility>

#include "ir/memory_rule.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

using ir::InstrId;
using ir::InstrKind;
using ir::Instruction;
using ir::kNoId;
using ir::Op;
using ir::OpId;
using ir::Schedule;
using ir::Tensor;
using ir::TensorId;
using ir::TensorRole;

namespace {

// Device copy of one tensor while emitting, in list order (the order validate_schedule walks).
struct TensorState {
  bool resident = false;
  InstrId maker = kNoId;  // made the device copy resident (kNoId: resident from the start)
  int32_t maker_stream = ir::kComputeStream;
  int32_t synced_stream = -1;  // a stream that already waits on `maker`
  InstrId freed_by = kNoId;    // the last free
  int32_t freed_stream = ir::kComputeStream;
  InstrId reader_main = kNoId;  // last reader on kComputeStream since `maker`
  // Last reader per other stream since `maker` (the swap_out, extra compute streams); inline, as the
  // emitter runs many times per policy.
  std::array<std::pair<int32_t, InstrId>, 3> reader_other{};
  int32_t others = 0;
  // Past three other streams (a replayed trace with an op per stream): the rest, rarely any.
  std::vector<std::pair<int32_t, InstrId>> more_others;
};

// Tensor ids per position, ascending within a position: a stable counting sort of (position, tensor)
// pairs given in ascending tensor order. Flat arrays: the emitter runs many times per policy.
class PositionBuckets {
 public:
  void build(size_t positions, const std::vector<std::pair<int32_t, TensorId>>& items) {
    start_.assign(positions + 1, 0);
    for (const auto& item : items) ++start_[static_cast<size_t>(item.first) + 1];
    for (size_t k = 0; k < positions; ++k) start_[k + 1] += start_[k];
    ids_.resize(items.size());
    fill_.assign(start_.begin(), start_.end() - 1);
    for (const auto& [pos, t] : items) ids_[static_cast<size_t>(fill_[static_cast<size_t>(pos)]++)] = t;
  }
  std::span<const TensorId> at(int32_t k) const {
    const auto uk = static_cast<size_t>(k);
    return {ids_.data() + start_[uk], ids_.data() + start_[uk + 1]};
  }

 private:
  std::vector<int32_t> start_;
  std::vector<int32_t> fill_;
  std::vector<TensorId> ids_;
};

class Emitter {
 public:
  Emitter(const Schedule& base, const ComputeOrder& order, const MemoryPlan& plan)
      : base_(base), g_(base.graph), order_(order), plan_(plan) {}

  std::vector<Instruction> run() {
    check_order();
    bucket_decisions();
    out_.instructions.reserve(base_.instructions.size() + 4 * plan_.decisions.size());
    state_.resize(g_.tensors.size());
    for (const Tensor& t : g_.tensors)
      state_[static_cast<size_t>(t.id)].resident = ir::resident_at_start(t.role);
    new_id_.assign(base_.instructions.size(), kNoId);
    compute_instr_.assign(n_, kNoId);
    stream_at_.assign(n_, ir::kComputeStream);
    for (const Instruction& b : base_.instructions) {
      if (b.kind == InstrKind::compute) stream_at_[static_cast<size_t>(order_.position_of[b.op])] = b.stream;
    }
    for (const Instruction& b : base_.instructions) {
      if (b.kind == InstrKind::compute) {
        const int32_t k = order_.position_of[static_cast<size_t>(b.op)];
        if (k > 0) after_point(k - 1);
        rebuild(k);
        emit_compute(b, k);
      } else {
        emit_base_free(b);
      }
    }
    if (n_ > 0) after_point(n_ - 1);
    return std::move(out_.instructions);
  }

 private:
  // ---- checks -------------------------------------------------------------------------------------

  std::string tensor_label(TensorId id) const {
    return fmt::format("tensor {} '{}'", id, g_.tensor(id).name);
  }
  std::string op_at_label(int32_t pos) const {
    const Op& op = g_.op(order_.op_at[static_cast<size_t>(pos)]);
    return fmt::format("op {} '{}'", op.id, op.name);
  }

  [[noreturn]] void fail(size_t index, TensorId t, const std::string& what) const {
    throw Error(fmt::format("emit_plan: plan decision {} ({}): {}", index, tensor_label(t), what));
  }

  void check_order() {
    n_ = static_cast<int32_t>(order_.op_at.size());
    if (order_.position_of.size() != g_.ops.size() || order_.op_at.size() != g_.ops.size()) {
      throw Error(fmt::format(
          "emit_plan: the compute order covers {} positions and {} ops, the base graph has {} ops",
          order_.op_at.size(), order_.position_of.size(), g_.ops.size()));
    }
  }

  void check_decision(size_t i, const TensorDecision& d) const {
    const Tensor& t = g_.tensor(d.tensor);
    if (d.action != TensorAction::swap && d.action != TensorAction::recompute) {
      fail(i, d.tensor,
           fmt::format("field 'action' = {} is not keep, swap or recompute", static_cast<int>(d.action)));
    }
    if ((t.role != TensorRole::activation && t.role != TensorRole::temporary) || t.producer == kNoId) {
      fail(i, d.tensor,
           fmt::format("field 'tensor': role {} is not evictable (only activation and temporary tensors made "
                       "by an op)",
                       ir::role_name(t.role)));
    }
    const int32_t produced = order_.position_of[static_cast<size_t>(t.producer)];
    if (d.evict_after < produced || d.evict_after >= n_) {
      fail(i, d.tensor,
           fmt::format(
               "field 'evict_after' = {} must be in [{}, {}) (from its producer's position to the end)",
               d.evict_after, produced, n_));
    }
    if (d.reload_before <= d.evict_after || d.reload_before >= n_) {
      fail(i, d.tensor,
           fmt::format("field 'reload_before' = {} must be in ({}, {}) (after evict_after, within the order)",
                       d.reload_before, d.evict_after, n_));
    }
    bool read_later =
        false;  // reloading early is allowed (one point for a whole segment), for nothing is not
    for (OpId c : t.consumers) {
      const int32_t p = order_.position_of[static_cast<size_t>(c)];
      read_later = read_later || p >= d.reload_before;
      if (p > d.evict_after && p < d.reload_before) {
        fail(i, d.tensor,
             fmt::format(
                 "fields 'evict_after' = {}, 'reload_before' = {}: the tensor is read inside the window at "
                 "position {} by {}",
                 d.evict_after, d.reload_before, p, op_at_label(p)));
      }
    }
    if (!read_later) {
      fail(i, d.tensor,
           fmt::format("field 'reload_before' = {}: the tensor is not read at or after that position",
                       d.reload_before));
    }
    if (d.action == TensorAction::swap) {
      if (d.swap_in_after != -1 && (d.swap_in_after < d.evict_after || d.swap_in_after >= d.reload_before)) {
        fail(
            i, d.tensor,
            fmt::format("field 'swap_in_after' = {} must be -1 or in [{}, {}) (evict_after to reload_before)",
                        d.swap_in_after, d.evict_after, d.reload_before));
      }
    } else {
      if (d.swap_in_after != -1) {
        fail(i, d.tensor,
             fmt::format("field 'swap_in_after' = {} applies to swap only; a recompute needs -1",
                         d.swap_in_after));
      }
      const Op& p = g_.op(t.producer);
      if (p.phase != ir::Phase::forward || !p.recomputable) {
        fail(i, d.tensor,
             fmt::format("field 'action' = recompute: its producer op {} '{}' is not recomputable (phase {}, "
                         "recomputable {})",
                         p.id, p.name, ir::phase_name(p.phase), p.recomputable));
      }
    }
  }

  void bucket_decisions() {
    const auto n = static_cast<size_t>(n_);
    std::vector<size_t> idx;
    idx.reserve(plan_.decisions.size());
    std::vector<int32_t> seen(g_.tensors.size(), -1);
    for (size_t i = 0; i < plan_.decisions.size(); ++i) {
      const TensorDecision& d = plan_.decisions[i];
      if (d.tensor < 0 || static_cast<size_t>(d.tensor) >= g_.tensors.size()) {
        throw Error(
            fmt::format("emit_plan: plan decision {}: field 'tensor' = {} refers to no tensor ({} tensors)",
                        i, d.tensor, g_.tensors.size()));
      }
      int32_t& first = seen[static_cast<size_t>(d.tensor)];
      if (first != -1) {
        fail(i, d.tensor, fmt::format("field 'tensor': the tensor already has plan decision {}", first));
      }
      first = static_cast<int32_t>(i);
      if (d.action == TensorAction::keep) continue;
      check_decision(i, d);
      idx.push_back(i);
    }
    // Ascending tensor id within every bucket.
    std::sort(idx.begin(), idx.end(),
              [&](size_t a, size_t b) { return plan_.decisions[a].tensor < plan_.decisions[b].tensor; });
    swap_in_trigger_.assign(g_.tensors.size(), -1);
    std::vector<std::pair<int32_t, TensorId>> swap_outs;
    std::vector<std::pair<int32_t, TensorId>> frees;
    std::vector<std::pair<int32_t, TensorId>> swap_ins;
    std::vector<std::pair<int32_t, TensorId>> rebuilds;
    for (size_t i : idx) {
      const TensorDecision& d = plan_.decisions[i];
      frees.emplace_back(d.evict_after, d.tensor);
      if (d.action == TensorAction::swap) {
        const OpId producer = g_.tensor(d.tensor).producer;
        swap_outs.emplace_back(order_.position_of[static_cast<size_t>(producer)], d.tensor);
        const int32_t trigger = d.swap_in_after == -1 ? d.evict_after : d.swap_in_after;
        swap_in_trigger_[static_cast<size_t>(d.tensor)] = d.swap_in_after;
        swap_ins.emplace_back(trigger, d.tensor);
      } else {
        rebuilds.emplace_back(d.reload_before, d.tensor);
      }
    }
    swap_out_after_.build(n, swap_outs);
    free_after_.build(n, frees);
    swap_in_after_.build(n, swap_ins);
    rebuild_before_.build(n, rebuilds);
  }

  // ---- residency ----------------------------------------------------------------------------------

  TensorState& st(TensorId t) { return state_[static_cast<size_t>(t)]; }

  static void add_wait(std::vector<InstrId>& waits, InstrId w) {
    if (w != kNoId && std::find(waits.begin(), waits.end(), w) == waits.end()) waits.push_back(w);
  }

  InstrId next_id() const { return static_cast<InstrId>(out_.instructions.size()); }

  InstrId push(InstrKind kind, int32_t stream, OpId op, TensorId tensor, std::vector<InstrId> waits) {
    Instruction in;
    in.id = next_id();
    in.kind = kind;
    in.stream = stream;
    in.op = op;
    in.tensor = tensor;
    in.waits = std::move(waits);
    out_.instructions.push_back(std::move(in));
    return out_.instructions.back().id;
  }

  // Waits needed for instruction `self` on `stream` to read t (its maker on another stream), and
  // records the read.
  void reading(std::vector<InstrId>& waits, TensorId t, int32_t stream, InstrId self) {
    TensorState& s = st(t);
    if (s.maker != kNoId && s.maker_stream != stream && s.synced_stream != stream) {
      add_wait(waits, s.maker);
      s.synced_stream = stream;
    }
    if (stream == ir::kComputeStream) {
      s.reader_main = self;
      return;
    }
    for (int32_t i = 0; i < s.others; ++i) {
      if (s.reader_other[static_cast<size_t>(i)].first == stream) {
        s.reader_other[static_cast<size_t>(i)].second = self;
        return;
      }
    }
    if (static_cast<size_t>(s.others) < s.reader_other.size()) {
      s.reader_other[static_cast<size_t>(s.others++)] = {stream, self};
      return;
    }
    for (auto& [rs, id] : s.more_others) {
      if (rs == stream) {
        id = self;
        return;
      }
    }
    s.more_others.emplace_back(stream, self);
  }

  void made(TensorId t, InstrId self, int32_t stream) {
    TensorState& s = st(t);
    s.resident = true;
    s.maker = self;
    s.maker_stream = stream;
    s.synced_stream = -1;
    s.reader_main = kNoId;
    s.others = 0;
    s.more_others.clear();
  }

  // A free on `stream` happens after the maker and every reader since.
  void free_waits(std::vector<InstrId>& waits, TensorId t, int32_t stream) const {
    const TensorState& s = state_[static_cast<size_t>(t)];
    if (s.maker != kNoId && s.maker_stream != stream && s.synced_stream != stream) add_wait(waits, s.maker);
    if (stream != ir::kComputeStream) add_wait(waits, s.reader_main);
    for (int32_t i = 0; i < s.others; ++i) {
      const auto& [rs, id] = s.reader_other[static_cast<size_t>(i)];
      if (rs != stream) add_wait(waits, id);
    }
    for (const auto& [rs, id] : s.more_others) {
      if (rs != stream) add_wait(waits, id);
    }
  }

  InstrId emit_free(TensorId t, int32_t stream, std::vector<InstrId> waits, const char* why) {
    if (!st(t).resident) {
      throw Error(fmt::format("emit_plan: {} frees {}, which is not resident there ({} instructions emitted)",
                              why, tensor_label(t), out_.instructions.size()));
    }
    free_waits(waits, t, stream);
    const InstrId id = push(InstrKind::free, stream, kNoId, t, std::move(waits));
    TensorState& s = st(t);
    s.resident = false;
    s.freed_by = id;
    s.freed_stream = stream;
    s.reader_main = kNoId;
    s.others = 0;
    s.more_others.clear();
    return id;
  }

  std::vector<InstrId> remap(const std::vector<InstrId>& waits) const {
    std::vector<InstrId> out;
    out.reserve(waits.size());
    for (InstrId w : waits) add_wait(out, new_id_.at(static_cast<size_t>(w)));
    return out;
  }

  // ---- emission -----------------------------------------------------------------------------------

  void emit_compute(const Instruction& b, int32_t k) {
    const Op& op = g_.op(b.op);
    std::vector<InstrId> waits = remap(b.waits);
    const InstrId self = next_id();
    for (TensorId t : op.inputs) {
      if (!st(t).resident) {
        throw Error(
            fmt::format("emit_plan: position {} ({}) reads {}, which the plan leaves off the device there", k,
                        op_at_label(k), tensor_label(t)));
      }
      reading(waits, t, b.stream, self);
    }
    push(InstrKind::compute, b.stream, b.op, kNoId, std::move(waits));
    for (TensorId t : op.outputs) made(t, self, b.stream);
    new_id_[static_cast<size_t>(b.id)] = self;
    compute_instr_[static_cast<size_t>(k)] = self;
    for (TensorId t : swap_out_after_.at(k)) {
      std::vector<InstrId> w{self};
      const InstrId id = next_id();
      reading(w, t, ir::kDeviceToHostStream, id);
      push(InstrKind::swap_out, ir::kDeviceToHostStream, kNoId, t, std::move(w));
    }
  }

  void emit_base_free(const Instruction& b) {
    new_id_[static_cast<size_t>(b.id)] =
        emit_free(b.tensor, b.stream, remap(b.waits), "the base schedule's free");
  }

  // After C(k): the plan's frees, then the swap_ins it triggers.
  void after_point(int32_t k) {
    const auto uk = static_cast<size_t>(k);
    for (TensorId t : free_after_.at(k)) emit_free(t, stream_at_[uk], {}, "a plan decision");
    for (TensorId t : swap_in_after_.at(k)) {
      const TensorState& s = st(t);
      if (s.resident) {
        throw Error(fmt::format("emit_plan: the swap_in of {} after position {} finds it resident",
                                tensor_label(t), k));
      }
      std::vector<InstrId> waits{s.freed_by};
      if (swap_in_trigger_[static_cast<size_t>(t)] != -1) add_wait(waits, compute_instr_[uk]);
      made(t, push(InstrKind::swap_in, ir::kHostToDeviceStream, kNoId, t, std::move(waits)),
           ir::kHostToDeviceStream);
    }
  }

  // Marks the ops that rebuild t (and, recursively, its missing inputs) into rebuild_ops_.
  void plan_rebuild(TensorId t, TensorId root, int32_t k) {
    if (st(t).resident || building_[static_cast<size_t>(t)]) return;
    const Tensor& tensor = g_.tensor(t);
    const Op* p = tensor.producer == kNoId ? nullptr : &g_.op(tensor.producer);
    if (p == nullptr || p->phase != ir::Phase::forward || !p->recomputable) {
      throw Error(fmt::format(
          "emit_plan: plan decision for {}: field 'reload_before' = {}: rebuilding it needs {}, which is not "
          "resident there and cannot be recomputed ({})",
          tensor_label(root), k, tensor_label(t),
          p == nullptr ? "no producer" : "producer op not recomputable"));
    }
    for (TensorId o : p->outputs) {
      if (!st(o).resident) {
        building_[static_cast<size_t>(o)] = 1;
        touched_.push_back(o);
      }
    }
    for (TensorId in : p->inputs) plan_rebuild(in, root, k);
    rebuild_ops_.push_back(p->id);
  }

  // Before C(k): recompute the tensors the plan reloads there, with any missing inputs; inputs and
  // extra outputs rebuilt only for this are freed after their last use here.
  void rebuild(int32_t k) {
    const std::span<const TensorId> wanted = rebuild_before_.at(k);
    if (wanted.empty()) return;
    if (building_.empty()) {
      building_.assign(g_.tensors.size(), 0);
      last_use_.assign(g_.tensors.size(), -1);
    }
    rebuild_ops_.clear();
    touched_.clear();
    for (TensorId t : wanted) plan_rebuild(t, t, k);
    if (rebuild_ops_.empty()) return;
    std::sort(rebuild_ops_.begin(), rebuild_ops_.end());  // program order is topological
    // Where each helper is released: after the last recompute here that reads it, else after its own.
    for (size_t j = 0; j < rebuild_ops_.size(); ++j) {
      const Op& op = g_.op(rebuild_ops_[j]);
      for (TensorId o : op.outputs) {
        if (building_[static_cast<size_t>(o)]) last_use_[static_cast<size_t>(o)] = static_cast<int32_t>(j);
      }
      for (TensorId in : op.inputs) {
        if (building_[static_cast<size_t>(in)]) last_use_[static_cast<size_t>(in)] = static_cast<int32_t>(j);
      }
    }
    for (TensorId t : wanted) last_use_[static_cast<size_t>(t)] = -1;  // C(k) reads it; kept
    std::sort(touched_.begin(), touched_.end());
    const int32_t stream = stream_at_[static_cast<size_t>(k)];
    for (size_t j = 0; j < rebuild_ops_.size(); ++j) {
      const Op& op = g_.op(rebuild_ops_[j]);
      std::vector<InstrId> waits;
      const InstrId self = next_id();
      for (TensorId in : op.inputs) reading(waits, in, stream, self);
      for (TensorId o : op.outputs) {
        const TensorState& s = st(o);
        if (!s.resident && s.freed_by != kNoId && s.freed_stream != stream) add_wait(waits, s.freed_by);
      }
      push(InstrKind::recompute, stream, op.id, kNoId, std::move(waits));
      for (TensorId o : op.outputs) {
        if (!st(o).resident) made(o, self, stream);
      }
      for (TensorId t : touched_) {
        if (last_use_[static_cast<size_t>(t)] == static_cast<int32_t>(j))
          emit_free(t, stream, {}, "a recompute helper");
      }
    }
    for (TensorId t : touched_) {
      building_[static_cast<size_t>(t)] = 0;
      last_use_[static_cast<size_t>(t)] = -1;
    }
  }

  const Schedule& base_;
  const ir::Graph& g_;
  const ComputeOrder& order_;
  const MemoryPlan& plan_;
  int32_t n_ = 0;
  PositionBuckets swap_out_after_;        // producer position
  PositionBuckets free_after_;            // evict_after
  PositionBuckets swap_in_after_;         // the prefetch trigger (evict_after when -1)
  PositionBuckets rebuild_before_;        // reload_before of recompute decisions
  std::vector<int32_t> swap_in_trigger_;  // tensor -> swap_in_after as decided (-1: after the free)
  Schedule out_;                          // only its instructions are filled
  std::vector<TensorState> state_;
  std::vector<InstrId> new_id_;         // base instruction id -> emitted id
  std::vector<InstrId> compute_instr_;  // position -> emitted compute
  std::vector<int32_t> stream_at_;      // position -> its compute stream
  std::vector<char> building_;          // scratch for rebuild(): tensor being rebuilt at this point
  std::vector<int32_t> last_use_;       // scratch: index in rebuild_ops_ after which a helper is freed
  std::vector<OpId> rebuild_ops_;
  std::vector<TensorId> touched_;
};

}  // namespace

std::vector<Instruction> emit_instructions(const Schedule& base, const ComputeOrder& order,
                                           const MemoryPlan& plan) {
  return Emitter(base, order, plan).run();
}

Schedule emit_plan(const Schedule& base, const ComputeOrder& order, const MemoryPlan& plan,
                   std::string policy_name) {
  Schedule out;
  out.instructions = emit_instructions(base, order, plan);  // first: a bad plan throws before the copy
  out.graph = base.graph;
  out.sub_arrays = base.sub_arrays;
  out.policy = std::move(policy_name);
  return out;
}

}  // namespace mutwo::policies

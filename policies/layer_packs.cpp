#include "policies/layer_packs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::policies {

using ir::Graph;
using ir::kNoId;
using ir::Op;
using ir::OpId;
using ir::Phase;
using ir::Tensor;
using ir::TensorRole;

namespace {

int64_t sum(const std::vector<LayerPack>& packs, int64_t LayerPack::*field) {
  int64_t total = 0;
  for (const LayerPack& p : packs) total += p.*field;
  return total;
}

bool is_data(TensorRole role) {
  return role == TensorRole::input || role == TensorRole::label;
}

}  // namespace

int64_t PackedModel::weight_bytes() const { return sum(packs, &LayerPack::weight_bytes); }
int64_t PackedModel::gradient_bytes() const { return sum(packs, &LayerPack::gradient_bytes); }
int64_t PackedModel::optimizer_bytes() const { return sum(packs, &LayerPack::optimizer_bytes); }
int64_t PackedModel::stash_bytes() const { return sum(packs, &LayerPack::stash_bytes); }

PackedModel pack_training_step(const Graph& step, const costmodel::OpCostModel& cost, int32_t packs) {
  std::vector<OpId> forward;
  bool has_optimizer = false;
  for (const Op& op : step.ops) {
    if (op.phase == Phase::forward) forward.push_back(op.id);
    has_optimizer = has_optimizer || op.phase == Phase::optimizer;
  }
  if (packs < 1 || static_cast<size_t>(packs) > forward.size()) {
    throw Error(fmt::format("layer packs = {} must be in [1, {}] (the forward ops of '{}')", packs, forward.size(),
                            step.name));
  }
  if (!has_optimizer) throw Error(fmt::format("'{}' has no optimizer phase: layer packs need a training step", step.name));
  const std::vector<int64_t> ns = costmodel::op_durations_ns(cost, step);

  // Forward ops to packs: pack k ends once the running forward time reaches (k + 1) / packs of the
  // total, leaving at least one op for each later pack.
  std::vector<int32_t> pack_of(step.ops.size(), -1);
  int64_t total = 0;
  for (const OpId id : forward) total += ns[static_cast<size_t>(id)];
  PackedModel model;
  model.model = step.name;
  model.micro_batch_samples = step.batch_size;
  model.packs.resize(static_cast<size_t>(packs));
  int64_t running = 0;
  int32_t k = 0;
  for (size_t i = 0; i < forward.size(); ++i) {
    const OpId id = forward[i];
    pack_of[static_cast<size_t>(id)] = k;
    running += ns[static_cast<size_t>(id)];
    const size_t ops_left = forward.size() - i - 1;
    const auto packs_left = static_cast<size_t>(packs - k - 1);
    const bool reached = static_cast<double>(running) * packs >= static_cast<double>(total) * (k + 1);
    if (packs_left > 0 && (ops_left == packs_left || (reached && ops_left >= packs_left))) ++k;
  }
  for (size_t i = 0; i < forward.size(); ++i) {
    LayerPack& p = model.packs[static_cast<size_t>(pack_of[static_cast<size_t>(forward[i])])];
    if (p.end_forward == 0) p.first_forward = forward[i];
    p.end_forward = forward[i] + 1;
  }

  // Weights to the pack of their first forward reader; backward ops to their forward op's pack;
  // optimizer ops to their weight's pack.
  std::vector<int32_t> tensor_pack(step.tensors.size(), -1);
  for (const Tensor& t : step.tensors) {
    if (t.role != TensorRole::weight) continue;
    for (const OpId c : t.consumers) {
      if (step.op(c).phase == Phase::forward) {
        tensor_pack[static_cast<size_t>(t.id)] = pack_of[static_cast<size_t>(c)];
        break;
      }
    }
  }
  for (const Op& op : step.ops) {
    int32_t& p = pack_of[static_cast<size_t>(op.id)];
    if (op.phase == Phase::backward) {
      p = op.forward_of != kNoId ? pack_of[static_cast<size_t>(op.forward_of)] : packs - 1;
    } else if (op.phase == Phase::optimizer) {
      p = packs - 1;
      for (const auto in : op.inputs) {
        if (step.tensor(in).role == TensorRole::weight && tensor_pack[static_cast<size_t>(in)] >= 0) {
          p = tensor_pack[static_cast<size_t>(in)];
        }
      }
    }
    LayerPack& pack = model.packs[static_cast<size_t>(p)];
    const int64_t d = ns[static_cast<size_t>(op.id)];
    (op.phase == Phase::forward ? pack.forward_ns : op.phase == Phase::backward ? pack.backward_ns : pack.update_ns) += d;
    if (op.phase == Phase::optimizer) {
      for (const auto in : op.inputs) {
        const Tensor& t = step.tensor(in);
        int32_t& owner = tensor_pack[static_cast<size_t>(in)];
        if (owner >= 0 && t.role != TensorRole::weight) continue;  // counted at an earlier update
        if (t.role == TensorRole::gradient) pack.gradient_bytes += t.bytes;
        if (t.role == TensorRole::optimizer_state) pack.optimizer_bytes += t.bytes;
        if (t.role == TensorRole::gradient || t.role == TensorRole::optimizer_state) owner = p;
      }
    }
  }
  for (const Tensor& t : step.tensors) {
    if (t.role == TensorRole::weight && tensor_pack[static_cast<size_t>(t.id)] >= 0) {
      model.packs[static_cast<size_t>(tensor_pack[static_cast<size_t>(t.id)])].weight_bytes += t.bytes;
    }
  }

  // Stash and pack boundaries, from forward-produced tensors.
  for (const Tensor& t : step.tensors) {
    if (t.producer == kNoId || step.op(t.producer).phase != Phase::forward || is_data(t.role)) continue;
    const int32_t made = pack_of[static_cast<size_t>(t.producer)];
    bool saved = false;
    int32_t last_reader = made;
    for (const OpId c : t.consumers) {
      const Op& reader = step.op(c);
      saved = saved || reader.phase == Phase::backward;
      if (reader.phase == Phase::forward) last_reader = std::max(last_reader, pack_of[static_cast<size_t>(c)]);
    }
    if (saved) model.packs[static_cast<size_t>(made)].stash_bytes += t.bytes;
    for (int32_t b = made; b < last_reader; ++b) model.packs[static_cast<size_t>(b)].output_bytes += t.bytes;
  }
  return model;
}

}  // namespace mutwo::policies

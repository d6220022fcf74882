#include "policies/plain_schedule.hpp"

#include <utility>

namespace mutwo::policies {

using profiles::Graph;
using profiles::InstrKind;
using profiles::Instruction;
using profiles::kNoId;
using profiles::OpId;
using profiles::Schedule;
using profiles::Tensor;

namespace {

// Position of a tensor's free: after op `release`, or before every op when release == kNoId.
struct Release {
  bool freed = false;
  OpId after = kNoId;
};

Release release_point(const Tensor& t) {
  Release r;
  if (profiles::is_persistent(t.role)) return r;
  r.freed = true;
  r.after = t.consumers.empty() ? t.producer : t.consumers.back();
  return r;
}

void emit(Schedule& s, InstrKind kind, OpId op, profiles::TensorId tensor) {
  Instruction in;
  in.id = static_cast<profiles::InstrId>(s.instructions.size());
  in.kind = kind;
  in.stream = profiles::kComputeStream;
  in.op = op;
  in.tensor = tensor;
  s.instructions.push_back(std::move(in));
}

}  // namespace

Schedule build_plain_schedule(std::vector<Graph> parts, std::string policy) {
  Schedule s;
  s.graph = profiles::concat_graphs(parts, &s.sub_arrays);
  s.policy = std::move(policy);
  const Graph& g = s.graph;

  // frees_after[op + 1]: tensors freed right after op (slot 0: before the first op), ascending ids.
  std::vector<std::vector<profiles::TensorId>> frees_after(g.ops.size() + 1);
  for (const Tensor& t : g.tensors) {
    const Release r = release_point(t);
    if (r.freed) frees_after[static_cast<size_t>(r.after + 1)].push_back(t.id);
  }
  s.instructions.reserve(g.ops.size() + g.tensors.size());
  for (profiles::TensorId t : frees_after[0]) emit(s, InstrKind::free, kNoId, t);
  for (const profiles::Op& op : g.ops) {
    emit(s, InstrKind::compute, op.id, kNoId);
    for (profiles::TensorId t : frees_after[static_cast<size_t>(op.id + 1)])
      emit(s, InstrKind::free, kNoId, t);
  }
  profiles::validate_schedule(s);
  return s;
}

}  // namespace mutwo::policies

#include "transforms/lean_ops.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ir/kind_rules.hpp"
#include "support/error.hpp"

namespace mutwo::transforms {
namespace {

// Re-derives an op's FLOPs and bytes from its (new) kind's rule and checks its outputs against it.
void reinfer(ir::Graph& g, ir::Op& op) {
  std::vector<const ir::Tensor*> in;
  for (ir::TensorId id : op.inputs) in.push_back(&g.tensor(id));
  const ir::InferResult r = ir::kind_rules(op.kind)->infer(ir::InferContext{op.name, in, op.attrs, op.width});
  if (r.outputs.size() != op.outputs.size()) {
    throw GraphError(fmt::format("lean ops: op '{}' ({}) has {} outputs, its kind gives {}", op.name,
                                 ir::kind_name(op.kind), op.outputs.size(), r.outputs.size()));
  }
  op.flops = r.flops;
  op.workspace_bytes = r.workspace_bytes;
  op.bytes_read = 0;
  op.bytes_written = 0;
  for (const ir::Tensor* t : in) op.bytes_read += t->bytes;
  for (ir::TensorId id : op.outputs) op.bytes_written += g.tensor(id).bytes;
}

ir::TensorId add_mask(ir::Graph& g, const ir::Tensor& like, const std::string& name) {
  ir::Tensor mask;
  mask.id = static_cast<ir::TensorId>(g.tensors.size());
  mask.name = name;
  mask.shape = like.shape;
  mask.dtype = ir::DType::boolean;
  mask.bytes = ir::element_count(like.shape) * ir::dtype_size_bytes(ir::DType::boolean);
  mask.role = ir::TensorRole::activation;
  mask.width = like.width;
  g.tensors.push_back(std::move(mask));
  return g.tensors.back().id;
}

// Drops the marked ops and the tensors no op reads or writes any more; renumbers both.
ir::Graph compacted(const ir::Graph& g, const std::vector<uint8_t>& drop_op) {
  std::vector<uint8_t> used(g.tensors.size(), 0);
  for (const ir::Op& op : g.ops) {
    if (drop_op[static_cast<size_t>(op.id)] != 0) continue;
    for (ir::TensorId id : op.inputs) used[static_cast<size_t>(id)] = 1;
    for (ir::TensorId id : op.outputs) used[static_cast<size_t>(id)] = 1;
  }
  ir::Graph out = g;
  out.tensors.clear();
  out.ops.clear();
  std::vector<ir::TensorId> new_id(g.tensors.size(), ir::kNoId);
  for (const ir::Tensor& t : g.tensors) {
    if (used[static_cast<size_t>(t.id)] == 0 && t.producer != ir::kNoId) continue;  // an orphaned activation
    new_id[static_cast<size_t>(t.id)] = static_cast<ir::TensorId>(out.tensors.size());
    out.tensors.push_back(t);
    out.tensors.back().id = new_id[static_cast<size_t>(t.id)];
  }
  for (const ir::Op& op : g.ops) {
    if (drop_op[static_cast<size_t>(op.id)] != 0) continue;
    ir::Op o = op;
    o.id = static_cast<ir::OpId>(out.ops.size());
    for (ir::TensorId& id : o.inputs) id = new_id[static_cast<size_t>(id)];
    for (ir::TensorId& id : o.outputs) id = new_id[static_cast<size_t>(id)];
    out.ops.push_back(std::move(o));
  }
  ir::link(out);
  return out;
}

}  // namespace

LeanOps parse_lean_ops(std::string_view text) {
  LeanOps lean;
  if (text == "none") return lean;
  if (text == "tempo") return LeanOps{true, true, true};
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    if (item == "gelu") {
      lean.gelu = true;
    } else if (item == "layernorm") {
      lean.layernorm = true;
    } else if (item == "attention") {
      lean.attention = true;
    } else {
      throw UnknownNameError(
          fmt::format("unknown lean ops '{}' (in '{}'); valid: none, tempo, or a list of gelu, "
                      "layernorm, attention",
                      item, text));
    }
    start = comma + 1;
  }
  return lean;
}

std::string lean_ops_name(const LeanOps& lean) {
  if (!lean.any()) return "none";
  if (lean.gelu && lean.layernorm && lean.attention) return "tempo";
  std::string out;
  for (const auto& [on, name] :
       {std::pair{lean.gelu, "gelu"}, {lean.layernorm, "layernorm"}, {lean.attention, "attention"}}) {
    if (!on) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

ir::Graph apply_lean_ops(const ir::Graph& forward, const LeanOps& lean) {
  if (!lean.any()) return forward;
  ir::Graph g = forward;
  for (const ir::Op& op : g.ops) {
    if (op.phase != ir::Phase::forward) {
      throw GraphError(fmt::format("lean ops rewrite a forward graph; op {} '{}' is a {} op", op.id, op.name,
                                   ir::phase_name(op.phase)));
    }
  }
  std::vector<uint8_t> drop(g.ops.size(), 0);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    ir::Op& op = g.ops[i];
    if (lean.gelu && op.kind == ir::OpKind::gelu) {
      op.kind = ir::OpKind::gelu_lean;
      const ir::Tensor& y = g.tensor(op.outputs.at(0));
      op.outputs.push_back(add_mask(g, y, op.name + ".mask"));
      reinfer(g, op);
    } else if (lean.layernorm && op.kind == ir::OpKind::layernorm) {
      op.kind = ir::OpKind::layernorm_lean;
      reinfer(g, op);
    } else if (lean.attention && op.kind == ir::OpKind::attn_context) {
      // The dropout that feeds it, when nothing else reads the dropped probabilities or the mask.
      const ir::Tensor& p = g.tensor(op.inputs.at(0));
      if (p.producer == ir::kNoId) continue;
      const ir::Op& dropout = g.op(p.producer);
      if (dropout.kind != ir::OpKind::dropout || p.consumers.size() != 1 || dropout.outputs.size() != 2 ||
          !g.tensor(dropout.outputs[1]).consumers.empty()) {
        continue;
      }
      drop[static_cast<size_t>(dropout.id)] = 1;
      op.kind = ir::OpKind::attn_dropout_context;
      op.name = dropout.name;  // the same dropout mask (exec draws it by op name)
      op.attrs = dropout.attrs;
      op.inputs[0] = dropout.inputs.at(0);
      op.outputs.push_back(dropout.outputs[1]);
      reinfer(g, op);
    }
  }
  ir::Graph out = compacted(g, drop);
  ir::validate(out);
  return out;
}

}  // namespace mutwo::transforms

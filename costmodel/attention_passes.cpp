#include "costmodel/attention_passes.hpp"

#include <string>

#include "ir/attributes.hpp"
#include "ir/needs_grad.hpp"

namespace mutwo::costmodel {
namespace {

// An element-wise helper pass over tensors the size of `t`.
OpKernel pass(std::string name, const ir::Tensor& t, double passes) {
  OpKernel k = pass_kernel(std::move(name), ir::KindCategory::elementwise, passes, t);
  k.helper = true;
  return k;
}

}  // namespace

std::vector<OpKernel> attention_passes(const ir::Graph& graph, const ir::Op& op) {
  std::vector<OpKernel> out;
  const auto input = [&](size_t i) -> const ir::Tensor& { return graph.tensor(op.inputs[i]); };
  const auto needs = [&](size_t i) { return ir::needs_grad(op, i); };
  const auto causal = [&] { return ir::attr_int_or(op.attrs, "causal", 0, op.name) != 0; };
  switch (op.kind) {
    case ir::OpKind::attn_scores: {
      if (op.inputs.size() < 2 || op.outputs.empty()) return out;
      const ir::Tensor& scores = graph.tensor(op.outputs.front());
      out.push_back(pass("copy", input(0), 2));
      out.push_back(pass("copy", input(1), 2));
      out.push_back(pass("mul", scores, 2));
      if (causal()) out.push_back(pass("masked_fill", scores, 2));
      return out;
    }
    case ir::OpKind::attn_scores_backward: {  // inputs [dS, q, k]
      if (op.inputs.size() < 3) return out;
      out.push_back(pass("mul", input(0), 2));
      if (causal()) out.push_back(pass("masked_fill", input(0), 2));
      for (size_t g = 0; g < 2; ++g) {
        if (!needs(g)) continue;
        out.push_back(pass("copy", input(2 - g), 2));  // dq reads k, dk reads q
        out.push_back(pass("copy", input(2 - g), 2));  // the merge of heads
      }
      return out;
    }
    case ir::OpKind::attn_context: {  // inputs [p, v]
      if (op.inputs.size() < 2) return out;
      out.push_back(pass("copy", input(1), 2));
      out.push_back(pass("copy", input(1), 2));
      return out;
    }
    case ir::OpKind::attn_context_backward: {  // inputs [dO, p, v]
      if (op.inputs.size() < 3) return out;
      if (needs(0)) {
        out.push_back(pass("copy", input(0), 2));
        out.push_back(pass("copy", input(2), 2));
      }
      if (needs(1)) {
        out.push_back(pass("copy", input(0), 2));
        out.push_back(pass("copy", input(0), 2));
      }
      return out;
    }
    default:
      return out;
  }
}

}  // namespace mutwo::costmodel

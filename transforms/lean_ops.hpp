#pragma once
// Tempo's memory-lean layers as a graph rewrite (Andoorveedu et al., NeurIPS 2022, arXiv:2210.10246),
// opt-in per op kind: a forward graph's
//   gelu       -> gelu_lean             (§3.1 in-place GELU: keeps y and a 1-byte mask, not x)
//   layernorm  -> layernorm_lean        (§3.2 in-place LayerNorm: keeps y and rstd, not x and mean)
//   dropout(p) read only by attn_context
//              -> attn_dropout_context  (§3.3 attention: keeps softmax's p and the mask, not dropout(p))
// The kinds are recorded in the graph (a trace written from it says which ops are lean). The
// forward result and the gradients are the plain graph's (the executor's kernels, exec/kernels/
// lean.cpp); what changes is what the backward keeps, and a little recomputation in backward.
// The fused attention op takes the dropout op's name, so it draws the same dropout mask.
#include <string>
#include <string_view>

#include "ir/graph.hpp"

namespace mutwo::transforms {

struct LeanOps {
  bool gelu = false;
  bool layernorm = false;
  bool attention = false;

  bool any() const { return gelu || layernorm || attention; }
  bool operator==(const LeanOps&) const = default;
};

// "none"; "tempo" (all three); or a comma-separated list of gelu, layernorm, attention. Throws
// UnknownNameError naming the value and the valid ones.
LeanOps parse_lean_ops(std::string_view text);
// "none", "tempo", or the list ("gelu,layernorm").
std::string lean_ops_name(const LeanOps& lean);

// The rewritten forward graph (any width). Throws GraphError for a graph with backward or optimizer
// ops (rewrite the forward, then build the step).
ir::Graph apply_lean_ops(const ir::Graph& forward, const LeanOps& lean);

}  // namespace mutwo::transforms

#pragma once
// The element-wise passes the attention products run beside their batched GEMMs, as eager PyTorch
// (Hugging Face's attention: view, transpose, torch.matmul, then scale) and exec/kernels/dense.cpp
// run them. torch.matmul folds a [.., h, T, d] view of a [.., T, H] tensor into a 3-D batch by
// copying it (the head and batch dims do not merge), its [.., h, T, d] result merges back into
// [.., T, H] by another copy, and the scores are scaled, and masked when causal, in passes of
// their own. Counted with the profiler on ATen's matmul (aten::clone per copy) at these shapes.
// Q: the bytes of one [.., T, H] operand; S: the bytes of the [.., h, T, T] scores:
//   attn_scores:           copies of q and k (2Q each), scale (2S), causal mask (2S);
//   attn_scores_backward:  dS * scale (2S), causal mask (2S); dq: k's copy and the merge (2Q each);
//                          dk: q's copy and the merge (2Q each);
//   attn_context:          v's copy and the merge (2Q each);
//   attn_context_backward: dp: dO's and v's copies (2Q each); dv: dO's copy and the merge (2Q each).
// The cost sources add them to the op's GEMMs (op_kernels, as `helper` kernels).
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "ir/graph.hpp"

namespace mutwo::costmodel {

// The passes above for an attention product (attn_scores, attn_context and their backward); empty
// for any other op.
std::vector<OpKernel> attention_passes(const ir::Graph& graph, const ir::Op& op);

}  // namespace mutwo::costmodel

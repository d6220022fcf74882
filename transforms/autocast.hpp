#pragma once
// The precision rewrite: a forward Graph in fp32 -> the same model trained in a precision mode, as
// PyTorch runs it. Applied to the forward graph before autodiff (build_training_step then derives
// the casts' backward, the gradients' dtypes and, for amp-fp16, GradScaler's unscale ops).
//
//   fp32, tf32  the graph is unchanged; its precision field records the mode (tf32 changes only the
//               math the cost model prices matmuls on).
//   bf16        model.to(torch.bfloat16): every floating leaf (weights, inputs) becomes bf16, so do
//               the activations, gradients and optimizer state; norm statistics stay f32 (ATen's
//               accumulate type, ir/kinds/norm.cpp).
//   amp-fp16,   torch.autocast(device_type="cuda", dtype=...): weights, their gradients and optimizer
//   amp-bf16    state stay f32; each op runs as autocast's CUDA cast policy for its ATen op says
//               (aten/src/ATen/autocast_mode.cpp, PyTorch 1.13, TORCH_LIBRARY_IMPL(aten, Autocast);
//               the same for these ops in PyTorch 2.x's AT_FORALL_* lists, autocast_mode.h):
//     lower_precision_fp  linear (addmm/linear), conv2d, attn_scores and attn_context (matmul/bmm),
//                         dot_interaction (bmm): every floating input is cast to the half dtype;
//     fp32                layernorm (layer_norm, native_layer_norm), bce_with_logits
//                         (binary_cross_entropy_with_logits): inputs cast to f32;
//     fp32_set_opt_dtype  softmax and cross_entropy (cross_entropy_loss is in no CUDA list and
//                         decomposes to log_softmax, fp32_set_opt_dtype, + nll_loss, fp32): run in
//                         f32. An f16 input is read in the kernel on CUDA (ATen's softmax /
//                         log_softmax(x, dim, dtype=float) -> half_to_float; attr dtype f32 on the
//                         op, no cast op); a bf16 one is cast up first, as ATen copies it;
//     no policy           everything else runs in its input's dtype: activations, dropout, pooling,
//                         batchnorm2d (cuDNN takes half x with f32 gamma/beta, stats f32), embeddings
//                         (f32 weights -> f32 rows); add and mul promote mixed operands inside the
//                         kernel (TensorIterator, no cast op); concat, concat_channels and
//                         class_token_concat (torch.cat promotes) get an explicit cast of the
//                         narrower operands to the wider dtype.
//   A cast is a `cast` op (aten::_to_copy). cached_cast() keeps one cast per f32 weight (a leaf that
//   requires grad) per forward, so a weight read by several half ops is cast once, at first use;
//   activations are cast at every use (three casts of a layer norm output feeding q, k, v).
//   Integer tensors are never cast (is_eligible: floating point only).
#include "ir/graph.hpp"
#include "ir/precision.hpp"

namespace mutwo::transforms {

// Returns the forward graph in `precision` (graph.precision records it). Throws GraphError if the
// graph is not a forward-only fp32 graph (phase, dtype of its weights, an earlier rewrite) or holds
// an op whose kind has no rules (opaque ops of imported traces).
ir::Graph apply_precision(const ir::Graph& forward, ir::Precision precision);

// Tensors and ops the rewrite added: `cast` ops and their outputs.
int64_t cast_op_count(const ir::Graph& graph);

}  // namespace mutwo::transforms

#pragma once
// The closed set of op kinds of the Graph IR, their phase and cost category.
//
// Each forward kind states its PyTorch meaning and its fused layout at width k (HFTA):
//   "stack"   per-model tensors get a leading model dim: [B,T,H] -> [k,B,T,H], W[out,in] -> [k,out,in]
//   "channel" per-model tensors are concatenated on the channel dim: x[B,C,H,W] -> [B,k*C,H,W],
//             conv W[Co,Ci/g,kh,kw] -> [k*Co,Ci/g,kh,kw] with groups*k, BN gamma[C] -> [k*C]
// Width-1 shapes are exactly PyTorch's. Backward kinds are "<forward>_backward"; their inputs are
// [grad of forward output 0 (absent for loss kinds)] ++ [saved tensors, in the kind's rule order]
// and their outputs the gradients of the forward inputs whose needs_grad flag is set, in input order.
#include <cstdint>
#include <string_view>

namespace mutwo::ir {

enum class Phase : uint8_t { forward, backward, optimizer };

// What bounds an op's speed; costmodel/ keeps one efficiency per category.
enum class KindCategory : uint8_t {
  matmul,         // GEMM-like: linear, attention products, interaction
  conv,           // convolutions
  norm,           // batch / layer norm
  elementwise,    // activations, add, mul, dropout, accumulation
  reduction,      // softmax, pooling, losses
  data_movement,  // concat, flatten, token select, embedding gathers
  optimizer,      // per-parameter update
  opaque,         // imported op of unknown semantics (traces): cost from measurement only
};

// X(enum, "name", phase, category). Forward kinds first; each documents (PyTorch op; fused layout).
// clang-format off
#define MUTWO_OP_KINDS(X)                                                                                   \
  /* y = x W^T + b (nn.Linear; inputs x, W, [b]; stack: baddbmm over k) */                                 \
  X(linear, "linear", forward, matmul)                                                                     \
  /* nn.Conv2d (inputs x, W, [b]; attrs stride, padding, dilation [2], groups; channel: groups*k) */        \
  X(conv2d, "conv2d", forward, conv)                                                                       \
  /* training-mode nn.BatchNorm2d (inputs x, gamma, beta; attr eps; outputs y, save_mean, save_invstd) */  \
  X(batchnorm2d, "batchnorm2d", forward, norm)                                                             \
  /* nn.LayerNorm over the last dim (inputs x, gamma, beta; attr eps; outputs y, mean, rstd) */           \
  X(layernorm, "layernorm", forward, norm)                                                                 \
  X(relu, "relu", forward, elementwise)                                                                    \
  X(relu6, "relu6", forward, elementwise)                                                                  \
  /* attr approximate: 0 = erf (BERT, ViT), 1 = tanh (GPT-2 gelu_new) */                                  \
  X(gelu, "gelu", forward, elementwise)                                                                    \
  X(tanh, "tanh", forward, elementwise)                                                                    \
  X(sigmoid, "sigmoid", forward, elementwise)                                                              \
  X(hardswish, "hardswish", forward, elementwise)                                                          \
  X(hardsigmoid, "hardsigmoid", forward, elementwise)                                                      \
  /* x * sigmoid(x) (SiLU, Swish-1: EfficientNet, RegNet-Y's heads) */                                       \
  X(silu, "silu", forward, elementwise)                                                                    \
  /* native_dropout (attr p; outputs y, mask bool) */                                                      \
  X(dropout, "dropout", forward, elementwise)                                                              \
  /* a + b with broadcasting of b (residuals, position embeddings) */                                     \
  X(add, "add", forward, elementwise)                                                                      \
  /* a * b with broadcasting of b (squeeze-excitation scale) */                                           \
  X(mul, "mul", forward, elementwise)                                                                      \
  /* softmax over the last dim */                                                                          \
  X(softmax, "softmax", forward, reduction)                                                                \
  /* nn.Embedding (inputs indices int64, W[V,H]; stack: W[k,V,H], indices [k,...]) */                      \
  X(embedding, "embedding", forward, data_movement)                                                        \
  /* nn.EmbeddingBag mode=sum (inputs indices [B,L] int64, W[V,H]) -> [B,H]; stack */                       \
  X(embedding_bag, "embedding_bag", forward, data_movement)                                                \
  /* scores = (q k^T) * scale per head, causal mask if attr causal (inputs q, k [B,T,H]; attr heads)      \
     -> [B,heads,T,T]; stack */                                                                            \
  X(attn_scores, "attn_scores", forward, matmul)                                                           \
  /* context = p v merged over heads (inputs p [B,h,T,T], v [B,T,H]) -> [B,T,H]; stack */                 \
  X(attn_context, "attn_context", forward, matmul)                                                         \
  /* max_pool2d_with_indices (attrs kernel, stride, padding, ceil_mode; outputs y, indices int64); channel */\
  X(max_pool2d, "max_pool2d", forward, reduction)                                                          \
  /* adaptive_avg_pool2d to 1x1 -> [B,C,1,1]; channel */                                                   \
  X(adaptive_avg_pool2d, "adaptive_avg_pool2d", forward, reduction)                                        \
  /* avg_pool2d (attrs kernel, stride, padding, ceil_mode, count_include_pad); channel */                  \
  X(avg_pool2d, "avg_pool2d", forward, reduction)                                                          \
  /* flatten(1) of [B,C,H,W] -> [B,C*H*W]; at width k: [B,k*C,H,W] -> [k,B,C*H*W] (channel to stack) */    \
  X(flatten, "flatten", forward, data_movement)                                                            \
  /* torch.cat on dim 1 of [B,C_i,H,W] (DenseNet, Inception); channel: each model's channels together */   \
  X(concat_channels, "concat_channels", forward, data_movement)                                            \
  /* x[:, start:start+length] of [B,C,H,W] written as a copy (attrs start, length; torch.chunk's pieces,  \
     ShuffleNet); channel: each model's slice */                                                           \
  X(slice_channels, "slice_channels", forward, data_movement)                                              \
  /* ShuffleNet's channel_shuffle: view [B,g,C/g,H,W], transpose(1,2), view back (attr groups); channel */ \
  X(channel_shuffle, "channel_shuffle", forward, data_movement)                                            \
  /* x.permute(dims).contiguous() between NCHW and NHWC (attr dims [0,2,3,1] or [0,3,1,2]; ConvNeXt);     \
     at width k: [B,k*C,H,W] <-> [k,B,H,W,C] (channel to stack and back) */                                \
  X(permute, "permute", forward, data_movement)                                                            \
  /* ViT: patches [B,C,h,w] (conv output) -> tokens, class token W[1,1,C] prepended -> [B,1+h*w,C];     \
     at width k: patches [B,k*C,h,w], W [k,1,1,C] -> [k,B,1+h*w,C] (channel to stack) */                 \
  X(class_token_concat, "class_token_concat", forward, data_movement)                                      \
  /* x[:, index] of [B,T,C] -> [B,C] (attr index); stack */                                                \
  X(select_token, "select_token", forward, data_movement)                                                  \
  /* torch.cat on the last dim; stack */                                                                   \
  X(concat, "concat", forward, data_movement)                                                              \
  /* DLRM dot interaction: inputs dense [B,d], sparse_i [B,d] (n in all) -> [B, d + n(n-1)/2]        \
     (dense ++ strictly-lower-triangular pairwise dots of the n vectors); stack */                         \
  X(dot_interaction, "dot_interaction", forward, matmul)                                                   \
  /* mean cross entropy (inputs logits [...,C], labels [...] int64; outputs loss [] (stack: [k]),        \
     log_probs saved for backward) */                                                                      \
  X(cross_entropy, "cross_entropy", forward, reduction)                                                    \
  /* mean BCE with logits (inputs logits, labels same shape; outputs loss) */                              \
  X(bce_with_logits, "bce_with_logits", forward, reduction)                                                \
  /* tensor.to(dtype) (aten::_to_copy), attr dtype: the target dtype's name; autocast's casts            \
     (transforms/autocast.hpp); layout of its input */                                                       \
  X(cast, "cast", forward, elementwise)                                                                    \
  /* Tempo's memory-lean layers (Andoorveedu et al., NeurIPS 2022; transforms/lean_ops.hpp), each a drop-in \
     for the plain kind with the same forward result and gradients but less kept for backward:            \
     in-place GELU (attr approximate; outputs y, mask bool [x >= argmin gelu]; backward from y, mask) */  \
  X(gelu_lean, "gelu_lean", forward, elementwise)                                                          \
  /* in-place LayerNorm (inputs x, gamma, beta; attr eps; outputs y, mean, rstd; backward from y, rstd,  \
     gamma, beta: xhat = (y - beta) / gamma) */                                                             \
  X(layernorm_lean, "layernorm_lean", forward, norm)                                                       \
  /* attention's dropout and context product in one (inputs p [B,h,T,T] softmax output, v [B,T,H];       \
     attr p; outputs context [B,T,H], mask bool [B,h,T,T]); backward recomputes dropout(p) from p, mask;  \
     stack */                                                                                               \
  X(attn_dropout_context, "attn_dropout_context", forward, matmul)                                         \
  /* an imported op whose semantics mutwo does not know (DTR / Kineto traces) */                          \
  X(opaque, "opaque", forward, opaque)                                                                     \
  X(linear_backward, "linear_backward", backward, matmul)                                                  \
  X(conv2d_backward, "conv2d_backward", backward, conv)                                                    \
  X(batchnorm2d_backward, "batchnorm2d_backward", backward, norm)                                          \
  X(layernorm_backward, "layernorm_backward", backward, norm)                                              \
  X(relu_backward, "relu_backward", backward, elementwise)                                                 \
  X(relu6_backward, "relu6_backward", backward, elementwise)                                               \
  X(gelu_backward, "gelu_backward", backward, elementwise)                                                 \
  X(tanh_backward, "tanh_backward", backward, elementwise)                                                 \
  X(sigmoid_backward, "sigmoid_backward", backward, elementwise)                                           \
  X(hardswish_backward, "hardswish_backward", backward, elementwise)                                       \
  X(hardsigmoid_backward, "hardsigmoid_backward", backward, elementwise)                                   \
  X(silu_backward, "silu_backward", backward, elementwise)                                                 \
  X(dropout_backward, "dropout_backward", backward, elementwise)                                           \
  X(mul_backward, "mul_backward", backward, elementwise)                                                   \
  X(softmax_backward, "softmax_backward", backward, reduction)                                             \
  X(embedding_backward, "embedding_backward", backward, data_movement)                                     \
  X(embedding_bag_backward, "embedding_bag_backward", backward, data_movement)                             \
  X(attn_scores_backward, "attn_scores_backward", backward, matmul)                                        \
  X(attn_context_backward, "attn_context_backward", backward, matmul)                                      \
  X(max_pool2d_backward, "max_pool2d_backward", backward, reduction)                                       \
  X(adaptive_avg_pool2d_backward, "adaptive_avg_pool2d_backward", backward, reduction)                     \
  X(avg_pool2d_backward, "avg_pool2d_backward", backward, reduction)                                       \
  X(flatten_backward, "flatten_backward", backward, data_movement)                                         \
  X(concat_channels_backward, "concat_channels_backward", backward, data_movement)                         \
  X(permute_backward, "permute_backward", backward, data_movement)                                         \
  X(slice_channels_backward, "slice_channels_backward", backward, data_movement)                           \
  X(channel_shuffle_backward, "channel_shuffle_backward", backward, data_movement)                         \
  X(class_token_concat_backward, "class_token_concat_backward", backward, data_movement)                   \
  X(select_token_backward, "select_token_backward", backward, data_movement)                               \
  X(concat_backward, "concat_backward", backward, data_movement)                                           \
  X(dot_interaction_backward, "dot_interaction_backward", backward, matmul)                                \
  X(cross_entropy_backward, "cross_entropy_backward", backward, reduction)                                 \
  X(bce_with_logits_backward, "bce_with_logits_backward", backward, reduction)                             \
  X(gelu_lean_backward, "gelu_lean_backward", backward, elementwise)                                       \
  X(layernorm_lean_backward, "layernorm_lean_backward", backward, norm)                                    \
  X(attn_dropout_context_backward, "attn_dropout_context_backward", backward, matmul)                      \
  /* the gradient cast back to the forward input's dtype (_to_copy's backward) */                         \
  X(cast_backward, "cast_backward", backward, elementwise)                                                 \
  /* gradient of a broadcast add operand: sum the output gradient down to the operand's shape */          \
  X(sum_to_shape, "sum_to_shape", backward, reduction)                                                     \
  /* sum of two partial gradients of one tensor read by several ops */                                    \
  X(accumulate_grad, "accumulate_grad", backward, elementwise)                                             \
  X(opaque_backward, "opaque_backward", backward, opaque)                                                  \
  /* in-place updates; inputs param, grad, state...; no outputs; per-model hyper-parameters as lists */   \
  X(sgd_step, "sgd_step", optimizer, optimizer)                                                            \
  X(adam_step, "adam_step", optimizer, optimizer)                                                          \
  X(adamw_step, "adamw_step", optimizer, optimizer)                                                        \
  /* GradScaler.unscale_ of one fp16-autocast gradient, in place (input grad; attr scale), before the    \
     optimizer steps (torch/cuda/amp/grad_scaler.py, _amp_foreach_non_finite_check_and_unscale_) */       \
  X(amp_unscale, "amp_unscale", optimizer, elementwise)                                                    \
  /* an imported optimizer-phase op whose semantics mutwo does not know (execution traces) */             \
  X(opaque_optimizer, "opaque_optimizer", optimizer, opaque)
// clang-format on

enum class OpKind : uint16_t {
#define MUTWO_X(e, name, phase, category) e,
  MUTWO_OP_KINDS(MUTWO_X)
#undef MUTWO_X
};

inline constexpr int kOpKindCount = 0
#define MUTWO_X(e, name, phase, category) +1
    MUTWO_OP_KINDS(MUTWO_X)
#undef MUTWO_X
    ;

std::string_view kind_name(OpKind kind);
// The per-parameter optimizer updates (sgd_step, adam_step, adamw_step): what a host optimizer runs.
inline constexpr bool is_optimizer_update(OpKind kind) {
  return kind == OpKind::sgd_step || kind == OpKind::adam_step || kind == OpKind::adamw_step;
}
Phase kind_phase(OpKind kind);
KindCategory kind_category(OpKind kind);
// Throws UnknownNameError listing every valid kind.
OpKind parse_kind(std::string_view name);

std::string_view phase_name(Phase phase);
Phase parse_phase(std::string_view name);  // throws UnknownNameError
std::string_view category_name(KindCategory category);

}  // namespace mutwo::ir

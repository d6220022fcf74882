// Loss kinds: cross entropy. (BCE with logits lives with the DLRM kinds in recsys.cpp.)
#include <fmt/format.h>

#include "ir/kind_rules.hpp"

namespace mutwo::ir {
namespace {

// log_softmax (max, subtract, exp, sum, log, subtract) then the NLL gather and mean.
constexpr int64_t kCrossEntropyFlopsPerElement = 6;
// grad = (softmax - onehot) / n: exp, subtract, scale.
constexpr int64_t kCrossEntropyBackwardFlopsPerElement = 3;

// Mean cross entropy over every position: logits [..., C], labels [...] int64.
// Outputs the loss ([] per model, [k] at width k) and log_probs (what backward reads, as
// log_softmax + nll_loss save it). Width k ("stack"): logits [k,...,C], labels [k,...].
InferResult infer_cross_entropy(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& logits = *ctx.inputs[0];
  const Tensor& labels = *ctx.inputs[1];
  std::vector<int64_t> expected_labels(logits.shape.begin(),
                                       logits.shape.end() - (logits.shape.empty() ? 0 : 1));
  if (logits.shape.size() < 2 || labels.shape != expected_labels || labels.dtype != DType::i64) {
    infer_error(ctx, fmt::format("input 1 '{}' (labels) is {} {}, expected int64 {} for logits {}",
                                 labels.name, shape_string(labels.shape), dtype_name(labels.dtype),
                                 shape_string(expected_labels), shape_string(logits.shape)));
  }
  // Attr dtype "fp32" on f16 logits: autocast's log_softmax(x, dim, dtype=float) on CUDA, one kernel
  // reading half and writing float (softmax's rule, elementwise.cpp); the logits' gradient is half.
  DType out = logits.dtype;
  if (ctx.attrs.contains("dtype")) {
    out = parse_dtype(attr_string(ctx.attrs, "dtype", "op '" + std::string(ctx.op_name) + "'"));
    if (logits.dtype != DType::f16 || out != DType::f32) {
      infer_error(ctx,
                  fmt::format("attribute 'dtype' = {} on input 0 '{}' of dtype {}: the fused log_softmax "
                              "converts f16 to f32 only (cast other dtypes first)",
                              dtype_name(out), logits.name, dtype_name(logits.dtype)));
    }
  }
  InferResult r;
  std::vector<int64_t> loss_shape;
  if (ctx.width > 1) loss_shape.push_back(ctx.width);
  r.outputs.push_back({"", loss_shape, out, TensorRole::loss});
  r.outputs.push_back({".log_probs", logits.shape, out, TensorRole::activation});
  r.flops = kCrossEntropyFlopsPerElement * element_count(logits.shape);
  return r;
}

int64_t cross_entropy_backward_flops(const BackwardContext& ctx) {
  return kCrossEntropyBackwardFlopsPerElement * element_count(ctx.inputs[0]->shape);
}

}  // namespace

void register_loss_kinds(KindRulesTable& table) {
  // derivatives.yaml: log_softmax saves result, nll_loss saves target: backward reads log_probs, labels.
  KindRules ce;
  ce.infer = infer_cross_entropy;
  ce.is_loss = true;
  ce.backward_kind = OpKind::cross_entropy_backward;
  ce.saved = {{SavedRef::From::output, 1}, {SavedRef::From::input, 1}};
  ce.backward_flops = cross_entropy_backward_flops;
  table[static_cast<size_t>(OpKind::cross_entropy)] = ce;
}

}  // namespace mutwo::ir

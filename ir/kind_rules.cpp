#include "ir/kind_rules.hpp"

#include "support/error.hpp"

namespace mutwo::ir {

const KindRules* kind_rules(OpKind kind) {
  static const KindRulesTable table = [] {
    KindRulesTable t(static_cast<size_t>(kOpKindCount));
    register_dense_kinds(t);
    register_conv_kinds(t);
    register_norm_kinds(t);
    register_elementwise_kinds(t);
    register_data_kinds(t);
    register_loss_kinds(t);
    register_recsys_kinds(t);
    register_lean_kinds(t);  // after the plain kinds whose shape rules it reuses
    return t;
  }();
  const KindRules& rules = table[static_cast<size_t>(kind)];
  return rules.infer ? &rules : nullptr;
}

void infer_error(const InferContext& ctx, const std::string& what) {
  throw GraphError("op '" + std::string(ctx.op_name) + "': " + what);
}

void expect_inputs(const InferContext& ctx, size_t min_count, size_t max_count) {
  if (ctx.inputs.size() < min_count || ctx.inputs.size() > max_count) {
    infer_error(ctx,
                "field 'inputs' has " + std::to_string(ctx.inputs.size()) + " tensors, expected " +
                    (min_count == max_count ? std::to_string(min_count)
                                            : std::to_string(min_count) + ".." + std::to_string(max_count)));
  }
}

void expect_rank(const InferContext& ctx, size_t input, size_t rank) {
  const Tensor& t = *ctx.inputs[input];
  if (t.shape.size() != rank) {
    infer_error(ctx, "input " + std::to_string(input) + " '" + t.name + "' has shape " +
                         shape_string(t.shape) + ", expected rank " + std::to_string(rank));
  }
}

InferResult same_as_input(const InferContext& ctx, int64_t flops_per_element) {
  const Tensor& x = *ctx.inputs[0];
  InferResult r;
  r.outputs.push_back({"", x.shape, x.dtype, TensorRole::activation});
  r.flops = flops_per_element * element_count(x.shape);
  return r;
}

int64_t no_backward_flops(const BackwardContext&) {
  return 0;
}

}  // namespace mutwo::ir

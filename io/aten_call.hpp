#pragma once
// The mutwo op kind of one aten operator call recorded in a PyTorch trace (an execution trace's
// node: its name, argument values, shapes and types), so an imported op is priced and planned like
// the zoo's: its FLOPs come from the kind's own rule (ir/kinds), its cost category from the
// kind, and its backward's FLOPs from the kind's autodiff rule.
//
// Typed: linear, addmm, mm, matmul, bmm (GEMMs, as a linear of the same shapes); conv2d,
// convolution, _convolution (not transposed); batch_norm (4-d input, affine); layer_norm (last
// dim, affine); relu, hardtanh(0, 6) as relu6, gelu, tanh, sigmoid, hardswish, hardsigmoid, silu
// (and their in-place forms); dropout, native_dropout; add, mul of two floating tensors; softmax and
// _softmax over the last dim (a half input read into float, dtype Float or half_to_float, as attr
// dtype fp32); cross_entropy_loss (no class weights, no label smoothing);
// max_pool2d(_with_indices) and avg_pool2d (ceil_mode too; no divisor override), adaptive_avg_pool2d
// to 1x1; flatten of [B, C, H, W] from dim 1; embedding.
// A call whose arguments do not fit its kind's rule stays untyped.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ir/attributes.hpp"
#include "ir/op_kind.hpp"
#include "ir/tensor.hpp"

namespace mutwo::io {

// One call as a trace records it: per argument its value, its shape (empty for a non-tensor) and
// its type ("Tensor(float)", "Int", "GenericList[Int,Int]", ...).
struct AtenArguments {
  const nlohmann::json* values = nullptr;  // an array, one value per argument
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> types;
  std::vector<std::vector<int64_t>> output_shapes;  // the kind's first output must have the first's
};

struct TypedCall {
  ir::OpKind kind = ir::OpKind::opaque;
  std::vector<ir::Tensor> inputs;   // the kind's inputs in its rule's order, shapes and dtypes of the call
  std::vector<size_t> arg_of;       // per kind input: the call argument it came from
  std::vector<ir::Tensor> outputs;  // as the kind's rule infers them
  ir::Attributes attrs;
  int64_t flops = 0;  // by the kind's rule
};

// The call's kind, or nullopt when it has none (or its arguments do not fit the kind's rule).
std::optional<TypedCall> type_aten_call(std::string_view name, const AtenArguments& args);

// FLOPs of the call's backward by its kind's autodiff rule; needs_grad per kind input.
int64_t typed_backward_flops(const TypedCall& call, const std::vector<bool>& needs_grad);

// The dtype an aten argument type names ("Tensor(float)" f32, "Tensor(long int)" i64, ...); nullopt
// for a type mutwo has no dtype for.
std::optional<ir::DType> aten_tensor_dtype(std::string_view type);

}  // namespace mutwo::io

#pragma once
// Per-kind semantics the IR needs beyond a name: shape inference (forward kinds) and the
// autodiff rule (which tensors the backward saves, its FLOPs). One file per kind family under
// ir/kinds/ fills the table; see op_kind.hpp for each kind's meaning and fused layout.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attributes.hpp"
#include "ir/dtype.hpp"
#include "ir/op.hpp"
#include "ir/op_kind.hpp"
#include "ir/tensor.hpp"

namespace mutwo::ir {

struct OutputSpec {
  std::string suffix;  // appended to the op name to name the tensor ("" for output 0)
  std::vector<int64_t> shape;
  DType dtype = DType::f32;
  TensorRole role = TensorRole::activation;
};

struct InferResult {
  std::vector<OutputSpec> outputs;
  int64_t flops = 0;
  int64_t workspace_bytes = 0;
  // Attributes the kind derives from its inputs, which GraphBuilder records on a new op (how a
  // convolution runs: ir/conv_lowering.hpp). Checking a built graph ignores them: an op read from a
  // file keeps the attributes it was built with.
  Attributes derived_attrs;
};

struct InferContext {
  std::string_view op_name;  // for error messages
  std::span<const Tensor* const> inputs;
  const Attributes& attrs;
  int32_t width = 1;  // models fused into the op
};
// Throws GraphError naming the op, the input and the field on inconsistent inputs.
using InferFn = InferResult (*)(const InferContext&);

// A tensor the backward op reads besides the output gradient.
struct SavedRef {
  enum class From : uint8_t { input, output };
  From from = From::input;
  int index = 0;
};

struct BackwardContext {
  const Op& forward;
  std::span<const Tensor* const> inputs;   // the forward op's inputs
  std::span<const Tensor* const> outputs;  // the forward op's outputs
  const std::vector<bool>& needs_grad;     // per forward input
};
using BackwardFlopsFn = int64_t (*)(const BackwardContext&);
// Bytes the backward op holds while it runs beyond its inputs and outputs (its temporaries).
using BackwardWorkspaceFn = int64_t (*)(const BackwardContext&);

struct KindRules {
  InferFn infer = nullptr;
  // Autodiff. `differentiable` false: no gradient flows through (e.g. integer outputs only).
  bool differentiable = true;
  bool is_loss = false;      // backward starts here (d loss / d loss = 1), no output gradient input
  bool passthrough = false;  // add: operand gradients alias the output gradient (sum_to_shape if broadcast)
  OpKind backward_kind = OpKind::opaque_backward;
  std::vector<SavedRef> saved;  // what PyTorch's derivatives.yaml saves for this op
  BackwardFlopsFn backward_flops = nullptr;
  BackwardWorkspaceFn backward_workspace = nullptr;  // nullptr: none
  bool recomputable = true;  // forward op may be re-run in backward to rebuild its outputs
};

// nullptr for kinds without rules (backward and optimizer kinds, opaque).
const KindRules* kind_rules(OpKind kind);

// Filled by one function per family (ir/kinds/*.cpp); called once by kind_rules().
using KindRulesTable = std::vector<KindRules>;  // indexed by OpKind
void register_dense_kinds(KindRulesTable& table);
void register_conv_kinds(KindRulesTable& table);
void register_norm_kinds(KindRulesTable& table);
void register_elementwise_kinds(KindRulesTable& table);
void register_data_kinds(KindRulesTable& table);
void register_loss_kinds(KindRulesTable& table);
void register_recsys_kinds(KindRulesTable& table);
void register_lean_kinds(KindRulesTable& table);  // Tempo's lean variants (reuses the plain kinds')

// Helpers shared by the family files.
[[noreturn]] void infer_error(const InferContext& ctx, const std::string& what);
void expect_inputs(const InferContext& ctx, size_t min_count, size_t max_count);
void expect_rank(const InferContext& ctx, size_t input, size_t rank);
// Shape of output 0 when it equals input 0 (activations).
InferResult same_as_input(const InferContext& ctx, int64_t flops_per_element);
// The backward of a kind that only moves data (views, copies, lookups): no arithmetic.
int64_t no_backward_flops(const BackwardContext& ctx);

}  // namespace mutwo::ir

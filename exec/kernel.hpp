#pragma once
// The op-kernel interface: one ATen implementation per op kind (forward kinds, their explicit
// backward kinds, the optimizer steps), shared by the interpreter and the profiler.
//
// A kernel reads its inputs (in Op::inputs order) and returns its outputs (in Op::outputs order),
// shaped as the Graph says. Optimizer kernels update their parameter and state inputs in place
// and return nothing. Kernels are pure functions of their inputs and the context: the dropout
// mask of an op is drawn from a generator seeded by (run seed, model, op name), so a recompute
// rebuilds bit-identical outputs and a fused op draws each model's mask as the unfused op would.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include "exec/model_layout.hpp"
#include "ir/graph.hpp"

namespace mutwo::exec {

// What an op's run needs beyond its inputs; the interpreter fills one per op.
struct OpRuntime {
  int32_t first_model = 0;                       // global index of the op's first model in the model array
  std::string_view base_name;                    // op name without the "s<i>/" sub-array prefix
  uint64_t seed = 0;                             // the run's seed
  int64_t optimizer_step = 1;                    // 1-based training step (Adam's bias correction)
  const std::vector<ModelAxis>* axes = nullptr;  // model_axes(graph)
  // Per-op constants a kernel builds once (per-model hyper-parameter tensors); owned by the caller.
  std::vector<at::Tensor>* cache = nullptr;
  // While a CUDA graph is captured, random numbers come from the device's default generator, the
  // one capture registers with the graph (a seeded clone cannot advance inside a capture): replays
  // then draw fresh masks, as an eager training loop does, instead of the seeded ones.
  bool capturing = false;
};

// An op's input tensors, in Op::inputs order. Indexing past the end throws Error (run_kernel names
// the op): a schedule file's op may list fewer inputs than its kind reads, and reading past them
// crashed.
class KernelInputs {
 public:
  template <class Tensors>
  KernelInputs(const Tensors& tensors) : tensors_(tensors) {}  // NOLINT: as the span it replaces
  const at::Tensor& operator[](size_t i) const;
  size_t size() const { return tensors_.size(); }
  bool empty() const { return tensors_.empty(); }
  auto begin() const { return tensors_.begin(); }
  auto end() const { return tensors_.end(); }

 private:
  std::span<const at::Tensor> tensors_;
};

struct KernelContext {
  const ir::Graph& graph;
  const ir::Op& op;
  KernelInputs inputs;
  const OpRuntime& runtime;

  int32_t width() const { return op.width; }
  bool fused() const { return op.width > 1; }
  const ir::Tensor& input_ir(size_t i) const { return graph.tensor(op.inputs.at(i)); }
  const ir::Tensor& output_ir(size_t i) const { return graph.tensor(op.outputs.at(i)); }
  ModelAxis axis(ir::TensorId id) const { return runtime.axes->at(static_cast<size_t>(id)); }
  // needs_grad flag of forward input i (backward kinds; attribute set by autodiff).
  bool needs_grad(size_t i) const;
  // The forward op a backward op differentiates.
  const ir::Op& forward() const { return graph.op(op.forward_of); }
  double attr_double(std::string_view key, double fallback) const;
  int64_t attr_int(std::string_view key, int64_t fallback) const;
  // A generator on the inputs' device, seeded for (run seed, model, op, stream of numbers `salt`).
  at::Generator generator(int32_t model_in_op, uint64_t salt = 0) const;
  // The device and dtype options of input i.
  at::TensorOptions options(size_t i) const;
};

using KernelFn = std::vector<at::Tensor> (*)(const KernelContext&);

// Fused per-model affine parameters [k,H] broadcast over x [k,...,H]: [k,1,...,1,H] (layer norms).
at::Tensor per_model_affine(const at::Tensor& p, int64_t x_dim);
using KernelTable = std::array<KernelFn, ir::kOpKindCount>;

// The built-in kernels, one family per file under exec/kernels/; built once.
const KernelTable& builtin_kernels();
// Runs op's kernel; throws mutwo::Error naming the op when its kind has none (opaque ops of imported
// traces) and checks the outputs against the Graph's shapes and dtypes.
std::vector<at::Tensor> run_kernel(const KernelContext& context);

void register_dense_kernels(KernelTable& table);        // linear, attention products
void register_conv_kernels(KernelTable& table);         // conv2d, pooling, flatten
void register_norm_kernels(KernelTable& table);         // layer norm, batch norm
void register_elementwise_kernels(KernelTable& table);  // activations, dropout, add, mul, softmax, grads
void register_data_kernels(KernelTable& table);         // embedding, class token, select token
void register_recsys_kernels(KernelTable& table);       // embedding bag, concat, dot interaction, BCE
void register_loss_kernels(KernelTable& table);         // cross entropy
void register_optimizer_kernels(KernelTable& table);    // SGD, Adam, AdamW
void register_lean_kernels(KernelTable& table);         // Tempo's lean GELU, layer norm, attention

// A fresh generator of the device's kind (CPU, or CUDA Philox) seeded with `seed`: a clone of the
// device's default generator, so no device-specific header is needed.
at::Generator seeded_generator(const at::Device& device, uint64_t seed);

// 64-bit FNV-1a of a string and a SplitMix64 combination: seeds that do not depend on the platform.
uint64_t fnv1a(std::string_view text);
uint64_t mix_seed(uint64_t a, uint64_t b);

}  // namespace mutwo::exec

#pragma once
// An independent reference for exec/'s numerics suites: a width-1 forward Graph evaluated with
// LibTorch's differentiable high-level ATen ops (at::linear, at::conv2d, at::batch_norm, ...),
// differentiated by autograd and stepped by torch::optim, so that nothing of exec/'s explicit
// backward kernels, fused layouts or optimizer kernels is reused. The one thing taken from exec/
// is the randomness: a dropout op's keep mask is drawn by exec's own dropout kernel for the same
// run seed, model and step (the mask is the data, not the computation under test).
//
// Also the helpers the suites share: running a Schedule on exec's CPU backend, slicing one model
// out of a fused tensor, finding a weight's gradient tensor.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "exec/device_backend.hpp"
#include "exec/interpreter.hpp"
#include "exec/model_layout.hpp"
#include "ir/graph.hpp"
#include "ir/schedule.hpp"
#include "transforms/autodiff.hpp"

namespace mutwo::test {

// Which run of exec/ the reference reproduces: its dropout masks depend on these.
struct ReferenceRun {
  uint64_t seed = 0;        // exec::InterpreterOptions::seed
  int32_t first_model = 0;  // exec::InterpreterOptions::first_model (the model's global index)
  int64_t steps = 1;        // training steps to take (each draws its own dropout masks)
};

struct ReferenceResult {
  std::vector<double> losses;  // per step: the sum of the graph's loss tensors
  // Per weight of the forward graph (by tensor id): d loss / d weight of the last step, and the
  // weight after the last optimizer step. A weight no loss depends on has no entry in `gradients`.
  std::map<ir::TensorId, at::Tensor> gradients;
  std::map<ir::TensorId, at::Tensor> parameters;
};

// Runs `steps` training steps of a width-1 forward graph (ending in its losses) from `leaves`
// (indexed by tensor id; every tensor without a producer defined: weights, inputs, labels) with
// autograd and torch::optim (SGD with momentum, Adam, AdamW, from the config's single values).
// Throws mutwo::Error naming the op for a kind it does not know, a fused graph, or per-model lists.
ReferenceResult autograd_reference(const ir::Graph& forward, const std::vector<at::Tensor>& leaves,
                                   const transforms::OptimizerConfig& optimizer, const ReferenceRun& run);

// Throws mutwo::Error naming the first difference unless `step` (a training-step or width-1
// schedule graph) begins with every tensor and op of `forward` under the same ids, names, shapes,
// roles, kinds and inputs (build_training_step appends after the forward graph).
void check_forward_prefix(const ir::Graph& forward, const ir::Graph& step);

// ---- Running exec/ -----------------------------------------------------------------------------

// A Schedule, exec's CPU backend and an Interpreter on them, kept together (the interpreter holds
// references to both).
class ExecRun {
 public:
  ExecRun(ir::Schedule schedule, exec::InterpreterOptions options);
  // The plain schedule (policies::build_plain_schedule) of one training-step graph.
  static std::unique_ptr<ExecRun> of_step(ir::Graph step, exec::InterpreterOptions options);

  exec::Interpreter& interpreter() { return *interpreter_; }
  const ir::Graph& graph() const { return schedule_->graph; }
  const exec::InterpreterOptions& options() const { return options_; }
  const std::vector<exec::ModelAxis>& axes() const { return axes_; }

  // The value a leaf of the schedule's graph starts with (for inputs and labels, which the
  // interpreter keeps off the device until a step starts): exec::initial_leaf_value with the
  // interpreter's seed and first model, unless set_tensor replaced a persistent one.
  at::Tensor starting_value(ir::TensorId id) const;

 private:
  std::unique_ptr<ir::Schedule> schedule_;
  std::unique_ptr<exec::DeviceBackend> backend_;
  std::unique_ptr<exec::Interpreter> interpreter_;
  exec::InterpreterOptions options_;
  std::vector<exec::ModelAxis> axes_;
};

// The starting leaves of a width-1 forward graph for autograd_reference, from a run of its
// training step (call before the run's first step): weights as the interpreter holds them,
// inputs and labels as it will upload them. Checks the forward graph is the step's prefix.
std::vector<at::Tensor> starting_leaves(const ir::Graph& forward, const ExecRun& run);

// Model m's part of a tensor of a width-`width` graph laid out along `axis` (a view): stack:
// select(0, m); dim0 / dim1: chunk m of `width` along dim 0 / 1; single: the tensor itself.
at::Tensor model_slice(const at::Tensor& t, exec::ModelAxis axis, int32_t width, int32_t m);

// Weight id -> its gradient tensor's id, from the optimizer ops (inputs param, grad, state...).
std::map<ir::TensorId, ir::TensorId> weight_gradients(const ir::Graph& step);

// Tensor id by name; throws mutwo::Error when absent.
ir::TensorId tensor_named(const ir::Graph& graph, const std::string& name);

// "max |a - b| = 3.1e-17 (max |b| = 0.82)", or the shapes when they differ: for failure messages.
std::string difference(const at::Tensor& a, const at::Tensor& b);

// at::allclose(a, b, rtol, atol) with equal shapes and dtypes.
bool all_close(const at::Tensor& a, const at::Tensor& b, double rtol, double atol);

}  // namespace mutwo::test

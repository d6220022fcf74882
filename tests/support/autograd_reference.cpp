#include "tests/support/autograd_reference.hpp"

#include <cmath>
#include <limits>
#include <span>
#include <string_view>

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "exec/kernel.hpp"
#include "exec/leaf_init.hpp"
#include "exec/torch_types.hpp"
#include "policies/plain_schedule.hpp"
#include "support/error.hpp"
#include "tests/support/bert_adam_reference.hpp"

namespace mutwo::test {
namespace {

using ir::Graph;
using ir::Op;
using ir::OpKind;
using ir::TensorId;
using ir::TensorRole;

std::vector<int64_t> ints(const Op& op, std::string_view key, std::vector<int64_t> fallback) {
  return ir::attr_ints_or(op.attrs, key, std::move(fallback), op.name);
}
int64_t attr_int(const Op& op, std::string_view key, int64_t fallback) {
  return ir::attr_int_or(op.attrs, key, fallback, op.name);
}
double attr_double(const Op& op, std::string_view key, double fallback) {
  return ir::attr_double_or(op.attrs, key, fallback, op.name);
}

// torch.finfo(dtype).min, which transformers' GPT-2 writes above the diagonal before its softmax.
double lowest(at::ScalarType type) {
  return type == at::kDouble ? std::numeric_limits<double>::lowest() : std::numeric_limits<float>::lowest();
}

// [B,T,H] -> [B,heads,T,H/heads], as transformers' _split_heads (view, then permute).
at::Tensor split_heads(const at::Tensor& t, int64_t heads) {
  return t.view({t.size(0), t.size(1), heads, t.size(2) / heads}).permute({0, 2, 1, 3});
}

// [B,heads,T,d] -> [B,T,heads*d], as transformers' _merge_heads.
at::Tensor merge_heads(const at::Tensor& t) {
  return t.permute({0, 2, 1, 3}).contiguous().view({t.size(0), t.size(2), t.size(1) * t.size(3)});
}

// The keep mask exec's dropout kernel draws for this op in this run (model run.first_model, step
// `step`): the same call the interpreter makes, on a width-1 graph.
at::Tensor executor_dropout_mask(const Graph& graph, const Op& op, const std::vector<at::Tensor>& in,
                                 const std::vector<exec::ModelAxis>& axes, const ReferenceRun& run,
                                 int64_t step) {
  std::vector<at::Tensor> cache;
  exec::OpRuntime runtime;
  runtime.first_model = run.first_model;
  runtime.base_name = exec::base_name(op.name);
  runtime.seed = run.seed;
  runtime.optimizer_step = step;
  runtime.axes = &axes;
  runtime.cache = &cache;
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& x : in) inputs.push_back(x.detach());
  const exec::KernelContext context{graph, op, inputs, runtime};
  return exec::run_kernel(context).at(1);
}

// DLRM's interact_features (dlrm_s_pytorch.py, arch_interaction_op "dot", no self-interaction):
// T = cat([x] + ly).view(B, -1, d); Z = bmm(T, T^T); Zflat = Z[:, li, lj] with
// li, lj = [i for i in range(n) for j in range(i)], [j for i in range(n) for j in range(i)];
// R = cat([x, Zflat], dim=1).
at::Tensor interact_features(const std::vector<at::Tensor>& features) {
  const at::Tensor& x = features[0];
  const int64_t batch = x.size(0), d = x.size(1), n = static_cast<int64_t>(features.size());
  const at::Tensor t = at::cat(features, 1).view({batch, -1, d});
  const at::Tensor z = at::bmm(t, t.transpose(1, 2));
  std::vector<int64_t> li, lj;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      li.push_back(i);
      lj.push_back(j);
    }
  }
  const auto long_tensor = [](const std::vector<int64_t>& v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong));
  };
  const at::Tensor zflat = z.index({at::indexing::Slice(), long_tensor(li), long_tensor(lj)});
  return at::cat({x, zflat}, 1);
}

// Output 0 of a forward op from its inputs, with differentiable high-level ops.
at::Tensor evaluate(const Graph& graph, const Op& op, const std::vector<at::Tensor>& in,
                    const std::vector<exec::ModelAxis>& axes, const ReferenceRun& run, int64_t step) {
  const auto optional_input = [&in](size_t i) {
    return in.size() > i ? c10::optional<at::Tensor>(in[i]) : c10::optional<at::Tensor>();
  };
  switch (op.kind) {
    case OpKind::linear:
      return at::linear(in[0], in[1], optional_input(2));
    case OpKind::conv2d:
      return at::conv2d(in[0], in[1], optional_input(2), ints(op, "stride", {1, 1}),
                        ints(op, "padding", {0, 0}), ints(op, "dilation", {1, 1}), attr_int(op, "groups", 1));
    case OpKind::batchnorm2d:
      // nn.BatchNorm2d in training mode without running statistics: batch statistics.
      return at::batch_norm(in[0], in[1], in[2], {}, {}, /*training=*/true, /*momentum=*/0.1,
                            attr_double(op, "eps", 1e-5), /*cudnn_enabled=*/false);
    case OpKind::layernorm:
      return at::layer_norm(in[0], {in[0].size(-1)}, in[1], in[2], attr_double(op, "eps", 1e-5));
    case OpKind::relu:
      return at::relu(in[0]);
    case OpKind::relu6:
      return at::hardtanh(in[0], 0.0, 6.0);  // nn.ReLU6 is Hardtanh(0, 6)
    case OpKind::gelu:
      return at::gelu(in[0], attr_int(op, "approximate", 0) != 0 ? "tanh" : "none");
    case OpKind::tanh:
      return at::tanh(in[0]);
    case OpKind::sigmoid:
      return at::sigmoid(in[0]);
    case OpKind::hardswish:
      return at::hardswish(in[0]);
    case OpKind::hardsigmoid:
      return at::hardsigmoid(in[0]);
    case OpKind::silu:
      return at::silu(in[0]);
    case OpKind::dropout: {
      const double p = attr_double(op, "p", 0.5);
      const at::Tensor mask = executor_dropout_mask(graph, op, {in[0]}, axes, run, step);
      return in[0] * mask * (1.0 / (1.0 - p));
    }
    // Tempo's lean layers (ir/kinds/lean.cpp): the plain ops they stand in for.
    case OpKind::gelu_lean:
      return at::gelu(in[0], attr_int(op, "approximate", 0) != 0 ? "tanh" : "none");
    case OpKind::layernorm_lean:
      return at::layer_norm(in[0], {in[0].size(-1)}, in[1], in[2], attr_double(op, "eps", 1e-5));
    case OpKind::attn_dropout_context: {  // dropout of the softmax output, then the context product
      const double p = attr_double(op, "p", 0.5);
      const at::Tensor mask = executor_dropout_mask(graph, op, {in[0], in[1]}, axes, run, step);
      const at::Tensor dropped = in[0] * mask * (1.0 / (1.0 - p));
      return merge_heads(at::matmul(dropped, split_heads(in[1], in[0].size(1))));
    }
    case OpKind::add:
      return in[0] + in[1];
    case OpKind::mul:
      return in[0] * in[1];
    case OpKind::softmax:  // attr dtype: softmax(x, dim, dtype), autocast's call for a half input
      return at::softmax(in[0], -1, exec::scalar_type(graph.tensor(op.outputs[0]).dtype));
    case OpKind::embedding:
      return at::embedding(in[1], in[0]);
    case OpKind::embedding_bag: {
      // F.embedding_bag with 2-D input [B,L]: flattened indices, one bag every L, mode "sum".
      const at::Tensor& indices = in[0];
      const int64_t bag = indices.size(-1);
      const at::Tensor offsets = at::arange(0, indices.numel(), bag, indices.options());
      return std::get<0>(at::embedding_bag(in[1], indices.reshape({-1}), offsets, false, /*mode sum=*/0));
    }
    case OpKind::attn_scores: {
      const int64_t heads = attr_int(op, "heads", 1);
      const double scale =
          attr_double(op, "scale", 1.0 / std::sqrt(static_cast<double>(in[0].size(-1) / heads)));
      at::Tensor scores =
          at::matmul(split_heads(in[0], heads), split_heads(in[1], heads).transpose(-1, -2)) * scale;
      if (attr_int(op, "causal", 0) != 0) {
        const int64_t seq = in[0].size(1);
        const at::Tensor above = at::ones({seq, seq}, in[0].options().dtype(at::kBool)).triu(1);
        scores = scores.masked_fill(above, lowest(scores.scalar_type()));
      }
      return scores;
    }
    case OpKind::attn_context: {
      const int64_t heads = in[0].size(1);
      return merge_heads(at::matmul(in[0], split_heads(in[1], heads)));
    }
    case OpKind::max_pool2d: {
      const auto kernel = ir::attr_ints(op.attrs, "kernel", op.name);
      return at::max_pool2d(in[0], kernel, ints(op, "stride", kernel), ints(op, "padding", {0, 0}), {1, 1},
                            attr_int(op, "ceil_mode", 0) != 0);
    }
    case OpKind::avg_pool2d: {
      const auto kernel = ir::attr_ints(op.attrs, "kernel", op.name);
      return at::avg_pool2d(in[0], kernel, ints(op, "stride", kernel), ints(op, "padding", {0, 0}),
                            attr_int(op, "ceil_mode", 0) != 0, attr_int(op, "count_include_pad", 1) != 0);
    }
    case OpKind::concat_channels:
      return at::cat(in, 1);
    case OpKind::slice_channels:
      return in[0].narrow(1, attr_int(op, "start", 0), attr_int(op, "length", 1));
    case OpKind::channel_shuffle: {
      // torchvision.models.shufflenetv2.channel_shuffle
      const at::Tensor& x = in[0];
      const int64_t groups = attr_int(op, "groups", 1);
      return x.view({x.size(0), groups, x.size(1) / groups, x.size(2), x.size(3)})
          .transpose(1, 2)
          .contiguous()
          .view(x.sizes());
    }
    case OpKind::permute:
      return in[0].permute(ir::attr_ints(op.attrs, "dims", op.name));
    case OpKind::adaptive_avg_pool2d:
      return at::adaptive_avg_pool2d(in[0], {1, 1});
    case OpKind::flatten:
      return in[0].flatten(1);
    case OpKind::class_token_concat: {
      // torchvision VisionTransformer._process_input + forward: reshape, permute, cat the token.
      const at::Tensor& x = in[0];
      const int64_t n = x.size(0), c = x.size(1);
      const at::Tensor tokens = x.reshape({n, c, -1}).permute({0, 2, 1});
      return at::cat({in[1].expand({n, -1, -1}), tokens}, 1);
    }
    case OpKind::select_token:
      return in[0].select(1, attr_int(op, "index", 0));
    case OpKind::concat:
      return at::cat(in, -1);
    case OpKind::dot_interaction:
      return interact_features(in);
    case OpKind::cross_entropy: {
      const int64_t classes = in[0].size(-1);
      // attr dtype (autocast on CUDA): log_softmax(x, dim, dtype=float) then nll_loss, as
      // cross_entropy_loss decomposes there.
      const at::ScalarType to = exec::scalar_type(graph.tensor(op.outputs[0]).dtype);
      return at::nll_loss(at::log_softmax(in[0].reshape({-1, classes}), -1, to), in[1].reshape({-1}));
    }
    case OpKind::bce_with_logits:
      return at::binary_cross_entropy_with_logits(in[0], in[1]);
    case OpKind::cast:  // tensor.to(dtype): autograd's _to_copy backward casts the gradient back
      return in[0].to(exec::scalar_type(graph.tensor(op.outputs[0]).dtype));
    default:
      throw Error(
          fmt::format("autograd reference: op {} '{}' has kind '{}', which the reference does not know",
                      op.id, op.name, ir::kind_name(op.kind)));
  }
}

double single(const std::vector<double>& values, std::string_view field) {
  if (values.size() != 1) {
    throw Error(
        fmt::format("autograd reference: optimizer field '{}' has {} values; a width-1 step takes one", field,
                    values.size()));
  }
  return values[0];
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const transforms::OptimizerConfig& config,
                                                        std::vector<at::Tensor> params) {
  const double lr = single(config.lr, "lr");
  const double decay = single(config.weight_decay, "weight_decay");
  if (config.kind == transforms::OptimizerKind::bert_adam ||
      config.kind == transforms::OptimizerKind::bert_adam_hf) {
    // pytorch-pretrained-bert's clips each gradient to its max_grad_norm default, 1.
    return std::make_unique<BertAdamReference>(
        std::move(params),
        torch::optim::AdamWOptions(lr)
            .betas({single(config.beta1, "beta1"), single(config.beta2, "beta2")})
            .eps(single(config.eps, "eps"))
            .weight_decay(decay),
        config.kind == transforms::OptimizerKind::bert_adam_hf ? 1.0 : 0.0);
  }
  // A fused kind computes its unfused kind's update (libtorch's C++ optimizers have no fused form).
  switch (transforms::unfused(config.kind)) {
    case transforms::OptimizerKind::sgd:
      return std::make_unique<torch::optim::SGD>(
          std::move(params),
          torch::optim::SGDOptions(lr).momentum(single(config.momentum, "momentum")).weight_decay(decay));
    case transforms::OptimizerKind::adam:
      return std::make_unique<torch::optim::Adam>(
          std::move(params), torch::optim::AdamOptions(lr)
                                 .betas({single(config.beta1, "beta1"), single(config.beta2, "beta2")})
                                 .eps(single(config.eps, "eps"))
                                 .weight_decay(decay));
    case transforms::OptimizerKind::adamw:
      return std::make_unique<torch::optim::AdamW>(
          std::move(params), torch::optim::AdamWOptions(lr)
                                 .betas({single(config.beta1, "beta1"), single(config.beta2, "beta2")})
                                 .eps(single(config.eps, "eps"))
                                 .weight_decay(decay));
    default:
      break;
  }
  throw Error("autograd reference: unknown optimizer");
}

}  // namespace

ReferenceResult autograd_reference(const Graph& forward, const std::vector<at::Tensor>& leaves,
                                   const transforms::OptimizerConfig& optimizer, const ReferenceRun& run) {
  if (forward.width != 1) {
    throw Error(fmt::format("autograd reference: graph '{}' has width {}; it runs width-1 graphs",
                            forward.name, forward.width));
  }
  if (leaves.size() != forward.tensors.size()) {
    throw Error(fmt::format("autograd reference: {} leaf values for {} tensors", leaves.size(),
                            forward.tensors.size()));
  }
  const std::vector<exec::ModelAxis> axes = exec::model_axes(forward);
  std::vector<at::Tensor> base(forward.tensors.size());
  std::vector<at::Tensor> params;
  std::vector<TensorId> param_ids;
  for (const ir::Tensor& t : forward.tensors) {
    if (t.producer != ir::kNoId) continue;
    const at::Tensor& value = leaves[static_cast<size_t>(t.id)];
    if (!value.defined()) {
      throw Error(fmt::format("autograd reference: leaf {} '{}' has no value", t.id, t.name));
    }
    if (t.role == TensorRole::weight && ir::is_floating(t.dtype)) {
      base[static_cast<size_t>(t.id)] = value.detach().clone().requires_grad_(true);
      params.push_back(base[static_cast<size_t>(t.id)]);
      param_ids.push_back(t.id);
    } else {
      base[static_cast<size_t>(t.id)] = value.detach();
    }
  }
  const std::unique_ptr<torch::optim::Optimizer> opt = make_optimizer(optimizer, params);

  ReferenceResult result;
  for (int64_t step = 1; step <= run.steps; ++step) {
    opt->zero_grad();
    std::vector<at::Tensor> values = base;
    at::Tensor loss;
    std::vector<at::Tensor> in;
    for (const Op& op : forward.ops) {
      in.clear();
      for (TensorId id : op.inputs) {
        const at::Tensor& v = values[static_cast<size_t>(id)];
        if (!v.defined()) {
          throw Error(
              fmt::format("autograd reference: op {} '{}' reads tensor {} '{}', which it does not compute "
                          "(only output 0 of an op is evaluated)",
                          op.id, op.name, id, forward.tensor(id).name));
        }
        in.push_back(v);
      }
      const at::Tensor out = evaluate(forward, op, in, axes, run, step);
      values[static_cast<size_t>(op.outputs.at(0))] = out;
      if (forward.tensor(op.outputs[0]).role == TensorRole::loss) loss = loss.defined() ? loss + out : out;
    }
    if (!loss.defined()) throw Error(fmt::format("autograd reference: graph '{}' has no loss", forward.name));
    result.losses.push_back(loss.item<double>());
    loss.backward();
    opt->step();
    // After the step, as the executor's are read: an optimizer that clips in place (BertAdam's
    // pytorch-pretrained-bert form) leaves the clipped gradient; the others leave it as backward did.
    if (step == run.steps) {
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].grad().defined()) result.gradients[param_ids[i]] = params[i].grad().detach().clone();
      }
    }
  }
  for (size_t i = 0; i < params.size(); ++i) result.parameters[param_ids[i]] = params[i].detach().clone();
  return result;
}

void check_forward_prefix(const Graph& forward, const Graph& step) {
  if (step.tensors.size() < forward.tensors.size() || step.ops.size() < forward.ops.size()) {
    throw Error(fmt::format("graph '{}' ({} tensors, {} ops) is smaller than its forward graph '{}' ({}, {})",
                            step.name, step.tensors.size(), step.ops.size(), forward.name,
                            forward.tensors.size(), forward.ops.size()));
  }
  for (size_t i = 0; i < forward.tensors.size(); ++i) {
    const ir::Tensor& a = forward.tensors[i];
    const ir::Tensor& b = step.tensors[i];
    if (a.name != b.name || a.shape != b.shape || a.dtype != b.dtype || a.role != b.role ||
        a.width != b.width) {
      throw Error(fmt::format("tensor {}: forward graph has '{}' {} {}, step graph '{}' {} {}", i, a.name,
                              ir::shape_string(a.shape), ir::role_name(a.role), b.name,
                              ir::shape_string(b.shape), ir::role_name(b.role)));
    }
  }
  for (size_t k = 0; k < forward.ops.size(); ++k) {
    const Op& a = forward.ops[k];
    const Op& b = step.ops[k];
    if (a.name != b.name || a.kind != b.kind || a.inputs != b.inputs || a.outputs != b.outputs) {
      throw Error(fmt::format("op {}: forward graph has '{}' ({}), step graph '{}' ({}) or other operands", k,
                              a.name, ir::kind_name(a.kind), b.name, ir::kind_name(b.kind)));
    }
  }
}

// ---- Running exec/ -----------------------------------------------------------------------------

ExecRun::ExecRun(ir::Schedule schedule, exec::InterpreterOptions options)
    : schedule_(std::make_unique<ir::Schedule>(std::move(schedule))),
      backend_(exec::make_backend("cpu")),
      options_(options) {
  interpreter_ = std::make_unique<exec::Interpreter>(*schedule_, *backend_, options_);
  axes_ = exec::model_axes(schedule_->graph);
}

std::unique_ptr<ExecRun> ExecRun::of_step(ir::Graph step, exec::InterpreterOptions options) {
  std::vector<ir::Graph> parts;
  parts.push_back(std::move(step));
  return std::make_unique<ExecRun>(policies::build_plain_schedule(std::move(parts)), options);
}

at::Tensor ExecRun::starting_value(TensorId id) const {
  const ir::Tensor& t = graph().tensor(id);
  if (t.producer != ir::kNoId) {
    throw Error(fmt::format("tensor {} '{}' is produced by an op, not a leaf", id, t.name));
  }
  if (ir::is_persistent(t.role)) return interpreter_->tensor(id).clone();
  // As the interpreter does: the global index of the first model of the sub-array of the first reader.
  const ir::OpId reader = t.consumers.empty() ? ir::kNoId : t.consumers.front();
  int32_t first_model = options_.first_model;
  for (const ir::SubArray& s : schedule_->sub_arrays) {
    if (reader >= s.first_op && reader < s.end_op) break;
    first_model += s.width;
  }
  if (reader == ir::kNoId) first_model = options_.first_model;
  return exec::initial_leaf_value(graph(), id, axes_, first_model, options_.seed, at::Device(at::kCPU));
}

std::vector<at::Tensor> starting_leaves(const Graph& forward, const ExecRun& run) {
  check_forward_prefix(forward, run.graph());
  std::vector<at::Tensor> leaves(forward.tensors.size());
  for (const ir::Tensor& t : forward.tensors) {
    if (t.producer == ir::kNoId) leaves[static_cast<size_t>(t.id)] = run.starting_value(t.id);
  }
  return leaves;
}

at::Tensor model_slice(const at::Tensor& t, exec::ModelAxis axis, int32_t width, int32_t m) {
  switch (axis) {
    case exec::ModelAxis::single:
      return t;
    case exec::ModelAxis::stack:
      return t.select(0, m);
    case exec::ModelAxis::dim0:
      return t.chunk(width, 0).at(static_cast<size_t>(m));
    case exec::ModelAxis::dim1:
      return t.chunk(width, 1).at(static_cast<size_t>(m));
  }
  return t;
}

std::map<TensorId, TensorId> weight_gradients(const Graph& step) {
  std::map<TensorId, TensorId> grads;
  for (const Op& op : step.ops) {
    if (op.phase == ir::Phase::optimizer) grads[op.inputs.at(0)] = op.inputs.at(1);
  }
  return grads;
}

TensorId tensor_named(const Graph& graph, const std::string& name) {
  for (const ir::Tensor& t : graph.tensors) {
    if (t.name == name) return t.id;
  }
  throw Error(fmt::format("graph '{}' has no tensor '{}'", graph.name, name));
}

std::string difference(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() ? "second tensor undefined" : "first tensor undefined";
  if (a.sizes() != b.sizes()) {
    return fmt::format("shapes differ: [{}] vs [{}]", fmt::join(a.sizes(), ","), fmt::join(b.sizes(), ","));
  }
  const at::Tensor da = a.to(at::kDouble), db = b.to(at::kDouble);
  const double max_diff = a.numel() == 0 ? 0.0 : (da - db).abs().max().item<double>();
  const double max_b = b.numel() == 0 ? 0.0 : db.abs().max().item<double>();
  return fmt::format("max |a - b| = {:.3g} (max |b| = {:.3g})", max_diff, max_b);
}

bool all_close(const at::Tensor& a, const at::Tensor& b, double rtol, double atol) {
  return a.defined() && b.defined() && a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         at::allclose(a, b, rtol, atol);
}

}  // namespace mutwo::test

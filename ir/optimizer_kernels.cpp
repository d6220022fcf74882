#include "ir/optimizer_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ir/attributes.hpp"
#include "support/error.hpp"

namespace mutwo::ir {
namespace {

bool any_nonzero(const Op& op, std::string_view key) {
  if (op.attrs.find(std::string(key)) == op.attrs.end()) return false;
  const std::vector<double>& values = attr_doubles(op.attrs, key, "op '" + op.name + "'");
  return std::any_of(values.begin(), values.end(), [](double v) { return v != 0.0; });
}

}  // namespace

bool uniform_hyper(const Op& op, std::string_view key) {
  if (op.attrs.find(std::string(key)) == op.attrs.end()) return true;
  const std::vector<double>& values = attr_doubles(op.attrs, key, "op '" + op.name + "'");
  return std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
}

bool is_fused_update(const Op& op) {
  // Looked up before the message is built: the search prices every step many times.
  if ((op.kind != OpKind::adam_step && op.kind != OpKind::adamw_step) || !op.attrs.contains("fused"))
    return false;
  const int64_t fused = attr_int_or(op.attrs, "fused", 0, "op '" + op.name + "'");
  if (fused != 0 && fused != 1) {
    throw GraphError(fmt::format("op '{}': attribute 'fused' = {}; expected 0 or 1", op.name, fused));
  }
  return fused == 1;
}

int64_t bert_adam_form(const Op& op) {
  if (!op.attrs.contains("bert_adam")) return 0;  // looked up first: the search prices every step
  const int64_t bert = attr_int_or(op.attrs, "bert_adam", 0, "op '" + op.name + "'");
  if (bert < 0 || bert > 2) {
    throw GraphError(fmt::format("op '{}': attribute 'bert_adam' = {}; expected 0, 1 or 2", op.name, bert));
  }
  if (bert != 0 && op.kind != OpKind::adamw_step) {
    throw GraphError(fmt::format("op '{}': attribute 'bert_adam' = {} on a {} op; BertAdam is an adamw_step",
                                 op.name, bert, kind_name(op.kind)));
  }
  if (bert != 0 && is_fused_update(op)) {
    throw GraphError(fmt::format(
        "op '{}': attributes 'bert_adam' = {} and 'fused' = 1; BertAdam is not fused", op.name, bert));
  }
  if (bert == 2 && op.attrs.contains("max_grad_norm")) {
    const double max_norm = attr_double(op.attrs, "max_grad_norm", "op '" + op.name + "'");
    if (!(max_norm > 0.0) || !std::isfinite(max_norm)) {
      throw GraphError(fmt::format("op '{}': attribute 'max_grad_norm' = {}; expected a finite value > 0",
                                   op.name, max_norm));
    }
  }
  return bert;
}

bool is_bert_adam(const Op& op) {
  return bert_adam_form(op) != 0;
}

OptimizerKernels optimizer_kernels(const Op& op) {
  if (is_fused_update(op)) return {1, 7};
  const bool decay = any_nonzero(op, "weight_decay");
  if (const int64_t form = bert_adam_form(op); form != 0) {
    const int64_t clip_norms = form == 2 ? 1 : 0;  // its own norm per gradient, in place of the global one
    return decay ? OptimizerKernels{12 + clip_norms, 30} : OptimizerKernels{10 + clip_norms, 25};
  }
  switch (op.kind) {
    case OpKind::adam_step:
      return decay ? OptimizerKernels{8, 21} : OptimizerKernels{7, 18};
    case OpKind::adamw_step:
      return decay ? OptimizerKernels{8, 20} : OptimizerKernels{7, 18};
    case OpKind::sgd_step: {
      OptimizerKernels k{1, 3};
      if (any_nonzero(op, "momentum")) k = {k.kernels + 2, k.passes + 5};
      if (decay) k = {k.kernels + 1, k.passes + 3};
      return k;
    }
    default:
      return {};
  }
}

int64_t optimizer_temporaries(const Op& op) {
  const bool decay = any_nonzero(op, "weight_decay");
  switch (op.kind) {
    case OpKind::adam_step:
    case OpKind::adamw_step: {
      const bool l2 = decay && op.kind == OpKind::adam_step;  // AdamW's decay is in place
      const bool scalars = uniform_hyper(op, "lr") && uniform_hyper(op, "beta1") &&
                           uniform_hyper(op, "beta2") && uniform_hyper(op, "eps") &&
                           uniform_hyper(op, "weight_decay");
      if (scalars && is_fused_update(op)) return 0;
      if (is_bert_adam(op)) return 3;
      return (scalars ? 2 : 3) + (l2 ? 1 : 0);
    }
    case OpKind::sgd_step: {
      const bool scalar_decay = uniform_hyper(op, "weight_decay");
      const int64_t decay_peak = decay ? (scalar_decay ? 1 : 2) : 0;
      // The decayed direction is dropped once momentum takes over (d = buf).
      const bool direction_held = decay && !any_nonzero(op, "momentum");
      const int64_t lr_peak = uniform_hyper(op, "lr") ? 0 : 1 + (direction_held ? 1 : 0);
      return std::max(decay_peak, lr_peak);
    }
    default:
      return 0;
  }
}

void check_optimizer_attributes(const Op& op) {
  for (const auto& [key, below] : std::initializer_list<std::pair<std::string_view, double>>{
           {"lr", 0}, {"momentum", 0}, {"beta1", 1}, {"beta2", 1}, {"eps", 0}, {"weight_decay", 0}}) {
    if (!op.attrs.contains(key)) continue;
    const std::vector<double>& values = attr_doubles(op.attrs, key, "op '" + op.name + "'");
    if (values.size() != 1 && values.size() != static_cast<size_t>(op.width)) {
      throw GraphError(fmt::format("op '{}': attribute '{}' has {} values; expected 1 or one per model ({})",
                                   op.name, key, values.size(), op.width));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      const double v = values[i];
      if (!std::isfinite(v) || v < 0.0 || (below > 0.0 && v >= below)) {
        throw GraphError(
            fmt::format("op '{}': attribute '{}' = {} for model {}; expected a finite value >= 0{}", op.name,
                        key, v, i, below > 0.0 ? fmt::format(" and < {}", below) : ""));
      }
    }
  }
}

}  // namespace mutwo::ir

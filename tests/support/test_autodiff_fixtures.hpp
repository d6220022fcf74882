#pragma once
// Fixtures shared by tests/test_autodiff.cpp and tests/test_autodiff_steps.cpp.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::transforms;
using namespace mutwo::zoo;
using mutwo::GraphError;

namespace {

using Ids = std::vector<TensorId>;
using Shape = std::vector<int64_t>;

inline const Op* find_op(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

inline TensorId find_tensor(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors) {
    if (t.name == name) return t.id;
  }
  return kNoId;
}

inline int count_kind(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Op& op : g.ops) n += op.kind == kind ? 1 : 0;
  return n;
}

inline int count_role(const Graph& g, TensorRole role) {
  int n = 0;
  for (const Tensor& t : g.tensors) n += t.role == role ? 1 : 0;
  return n;
}

// Structural rules every training step must satisfy; returns the backward FLOPs.
inline void check_training_step(const Graph& fwd, const Graph& step) {
  validate(step);
  // Every weight: exactly one role-gradient tensor (named "<w>.grad"), read by exactly one optimizer op
  // whose inputs are (param, grad, ...).
  std::map<TensorId, int> updates;
  for (const Op& op : step.ops) {
    if (op.phase != Phase::optimizer) continue;
    REQUIRE(op.inputs.size() >= 2);
    ++updates[op.inputs[0]];
    const Tensor& grad = step.tensor(op.inputs[1]);
    CHECK(grad.role == TensorRole::gradient);
    CHECK(grad.name == step.tensor(op.inputs[0]).name + ".grad");
  }
  int weights = 0;
  for (const Tensor& t : fwd.tensors) {
    if (t.role != TensorRole::weight) continue;
    ++weights;
    INFO("weight " << t.name);
    CHECK(updates[t.id] == 1);
  }
  CHECK(count_role(step, TensorRole::gradient) == weights);
  CHECK(static_cast<int>(updates.size()) == weights);
  // Every forward-produced tensor no forward op reads (saved statistics, masks, log-probs) is read by a
  // backward op, except the losses; and every saved tensor of a differentiated op has a backward reader.
  for (const Tensor& t : step.tensors) {
    if (t.producer == kNoId || step.op(t.producer).phase != Phase::forward || t.role == TensorRole::loss)
      continue;
    bool forward_reader = false;
    bool backward_reader = false;
    for (OpId c : t.consumers) {
      forward_reader = forward_reader || step.op(c).phase == Phase::forward;
      backward_reader = backward_reader || step.op(c).phase == Phase::backward;
    }
    INFO("tensor " << t.name);
    if (!forward_reader) CHECK(backward_reader);
  }
  // Backward ops of non-passthrough kinds read exactly the gradient plus the kind's saved tensors.
  for (const Op& op : step.ops) {
    if (op.phase != Phase::backward || op.forward_of == kNoId) continue;
    const Op& f = step.op(op.forward_of);
    if (op.kind != kind_rules(f.kind)->backward_kind) continue;
    INFO("op " << op.name);
    CHECK(op.name == f.name + ".backward");
    CHECK(op.width == f.width);
    CHECK_FALSE(op.recomputable);
  }
}

// x[4,8] (input) -> fc1 (W1[16,8], b1[16]) -> relu -> fc2 (W2[3,16], b2[3]) -> cross_entropy(labels[4]).
inline Graph mlp(int32_t width) {
  GraphBuilder b("mlp", DType::f32, width, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w1 = b.add_weight("fc1.weight", {16, 8}, FuseAxis::stack);
  TensorId b1 = b.add_weight("fc1.bias", {16}, FuseAxis::stack);
  TensorId w2 = b.add_weight("fc2.weight", {3, 16}, FuseAxis::stack);
  TensorId b2 = b.add_weight("fc2.bias", {3}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc1", {x, w1, b1});
  TensorId a = b.op(OpKind::relu, "relu", {h});
  TensorId logits = b.op(OpKind::linear, "fc2", {a, w2, b2});
  b.add_op(OpKind::cross_entropy, "loss", {logits, labels});
  return std::move(b).finish();
}

}  // namespace

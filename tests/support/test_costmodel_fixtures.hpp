#pragma once
// Fixtures shared by tests/test_costmodel.cpp and tests/test_costmodel_catalog.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "costmodel/op_cost_model.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"

using namespace mutwo::costmodel;
using namespace mutwo::ir;

namespace {

// y = x W^T on a per-model x[rows, in] and W[out, in], no bias.
inline Graph linear_graph(DType dtype, int64_t rows, int64_t in, int64_t out, int32_t width = 1) {
  GraphBuilder b("linear", dtype, width, rows);
  TensorId x = b.add_input("x", {rows, in}, TensorRole::input, FuseAxis::stack);
  TensorId w = b.add_weight("w", {out, in}, FuseAxis::stack);
  b.op(OpKind::linear, "fc", {x, w});
  return std::move(b).finish();
}

inline Graph relu_graph(std::vector<int64_t> shape) {
  GraphBuilder b("relu", DType::f32, 1, shape[0]);
  TensorId x = b.add_input("x", shape, TensorRole::input, FuseAxis::stack);
  b.op(OpKind::relu, "relu", {x});
  return std::move(b).finish();
}

// The first conv of ResNet: x[2,3,224,224], W[64,3,7,7], stride 2, padding 3 -> [2,64,112,112].
inline Graph conv_graph() {
  GraphBuilder b("conv", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 3, 224, 224}, TensorRole::input, FuseAxis::dim1);
  TensorId w = b.add_weight("conv1.weight", {64, 3, 7, 7}, FuseAxis::dim0);
  b.op(OpKind::conv2d, "conv1", {x, w},
       {{"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{3, 3}}});
  return std::move(b).finish();
}

}  // namespace

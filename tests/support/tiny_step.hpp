#pragma once
// The tiny training step the schedule, multiplexing and offload suites derive their figures from
// by hand: x[4,8] -> fc (linear, no bias) -> relu -> cross-entropy, with SGD (momentum).
//   ops      0 fc, 1 relu, 2 ce (forward); 3 ce.backward, 4 relu.backward, 5 fc.backward
//            (backward); 6 fc.weight.sgd_step (optimizer)
//   tensors  0 x (input, 128 B), 1 fc.weight (512 B), 2 labels (32 B), 3 fc, 4 relu (256 B each),
//            5 ce (loss, 4 B), 6 ce.log_probs (256 B), 7 relu.grad, 8 fc.grad (256 B each),
//            9 fc.weight.grad (512 B), 10 momentum (512 B)
// Concatenated, sub-array p's ids are these + 7p (ops), + 11p (tensors).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ir/graph_builder.hpp"
#include "ir/schedule.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "transforms/autodiff.hpp"

namespace mutwo::test {

inline constexpr int64_t kMs = 1'000'000;  // ns

// The forward graph alone (ops 0-2, tensors 0-6).
inline ir::Graph tiny_forward(const std::string& name = "tiny") {
  using namespace ir;
  using namespace transforms;
  GraphBuilder b(name, DType::f32, 1, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId w = b.add_weight("fc.weight", {16, 8}, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId h = b.op(OpKind::linear, "fc", {x, w});
  TensorId a = b.op(OpKind::relu, "relu", {h});
  b.add_op(OpKind::cross_entropy, "ce", {a, labels});
  return std::move(b).finish();
}

inline ir::Graph tiny_step() {
  transforms::OptimizerConfig sgd;
  sgd.kind = transforms::OptimizerKind::sgd;
  return transforms::build_training_step(tiny_forward(), sgd);
}

// Two tiny sub-arrays: ops 1 ms, except op 3 (BW_1's first, 3 ms) and op 9 (FW_2's last, 2 ms);
// copies 1 B/ns (a 512 B tensor in 512 ns).
inline FixedCostModel two_part_costs() {
  std::map<ir::OpId, int64_t> d;
  for (ir::OpId id = 0; id < 14; ++id) d[id] = kMs;
  d[3] = 3 * kMs;
  d[9] = 2 * kMs;
  return FixedCostModel(d);
}

// A schedule as short labels: "c5" compute op 5, "r2" recompute op 2, "f3" free tensor 3, "o1"
// swap_out tensor 1, "i1" swap_in tensor 1.
inline std::vector<std::string> instruction_trace(const ir::Schedule& s) {
  std::vector<std::string> out;
  for (const ir::Instruction& in : s.instructions) {
    switch (in.kind) {
      case ir::InstrKind::compute:
        out.push_back(fmt::format("c{}", in.op));
        break;
      case ir::InstrKind::recompute:
        out.push_back(fmt::format("r{}", in.op));
        break;
      case ir::InstrKind::free:
        out.push_back(fmt::format("f{}", in.tensor));
        break;
      case ir::InstrKind::swap_out:
        out.push_back(fmt::format("o{}", in.tensor));
        break;
      case ir::InstrKind::swap_in:
        out.push_back(fmt::format("i{}", in.tensor));
        break;
    }
  }
  return out;
}

}  // namespace mutwo::test

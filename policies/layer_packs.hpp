#pragma once
// A training step cut into layer packs, the unit Harmony (Li et al., HotOS 2021; PVLDB 2022)
// schedules, swaps and places: contiguous ranges of forward ops, each with the backward ops of its
// forward ops and the optimizer updates of its weights, priced by a cost model.
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/graph.hpp"

namespace mutwo::policies {

struct LayerPack {
  ir::OpId first_forward = 0;  // forward ops [first_forward, end_forward) in program order
  ir::OpId end_forward = 0;
  int64_t weight_bytes = 0;     // W: weights first read by the pack's forward ops
  int64_t gradient_bytes = 0;   // dW: their gradients
  int64_t optimizer_bytes = 0;  // K: their optimizer state
  int64_t stash_bytes = 0;      // X, per micro-batch: the pack's forward outputs a backward op reads
  int64_t output_bytes = 0;     // per micro-batch: activations this pack or an earlier one made that a later pack's forward reads
  int64_t forward_ns = 0;
  int64_t backward_ns = 0;
  int64_t update_ns = 0;
};

struct PackedModel {
  std::string model;               // the graph's name
  int64_t micro_batch_samples = 0;  // the graph's batch: one micro-batch
  std::vector<LayerPack> packs;

  int64_t weight_bytes() const;
  int64_t gradient_bytes() const;
  int64_t optimizer_bytes() const;
  int64_t stash_bytes() const;
};

// Cuts `step` (a width-1 training step: forward, backward, optimizer) into `packs` packs of about
// equal forward time (greedy on the running sum), every pack at least one forward op. Backward ops
// go to their forward_of's pack (the loss seed and others without one to the last), optimizer ops
// to their weight's pack; data tensors (inputs, labels) are loaded where needed, never passed on.
// Throws Error when packs < 1 or exceeds the forward ops, or the step has no optimizer phase.
PackedModel pack_training_step(const ir::Graph& step, const costmodel::OpCostModel& cost, int32_t packs);

}  // namespace mutwo::policies

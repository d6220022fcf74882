#pragma once
// The Graph IR: tensors and ops in program order (a topological order), validated on construction.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/op.hpp"
#include "ir/precision.hpp"
#include "ir/tensor.hpp"

namespace mutwo::ir {

// The largest tensor a graph may hold: 1 PiB (2^50 bytes), beyond any device's or host's memory;
// an input file claiming more is refused before anything is sized from it.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 50;
// The longest one op or kernel may take: 1000 s. No kernel takes that long; a larger measured time is a
// unit error or a corrupt file, and the bound keeps every sum of a step's durations within 64 bits.
inline constexpr int64_t kMaxOpNs = 1'000'000'000'000;

struct Graph {
  std::string name;                       // e.g. "bert-base" or "bert-base x4"
  int32_t width = 1;                      // models fused into this graph
  int64_t batch_size = 0;                 // samples per model per step (0 when unknown, e.g. imported traces)
  Precision precision = Precision::fp32;  // the training precision mode (transforms/autocast.hpp)
  std::vector<Tensor> tensors;            // tensors[i].id == i
  std::vector<Op> ops;                    // ops[i].id == i, program order

  const Tensor& tensor(TensorId id) const { return tensors.at(static_cast<size_t>(id)); }
  const Op& op(OpId id) const { return ops.at(static_cast<size_t>(id)); }
};

// Appends a tensor known only by its size (imported traces): shape {bytes}, uint8. Returns its id.
TensorId add_byte_tensor(Graph& graph, std::string name, int64_t bytes, TensorRole role);

// Recomputes every tensor's producer and consumers from the ops. Throws GraphError on an id out of
// range or a tensor produced twice.
void link(Graph& graph);

// Checks every invariant of the IR; throws GraphError naming the first offending op or tensor and
// the field: ids, references, program order (no cycles), sizes consistent with shapes and dtypes,
// roles, phases, forward_of, and output shapes against the kind's shape inference.
void validate(const Graph& graph);

// Each forward op of a kind with rules holds the FLOPs its kind does on its inputs, as every graph
// mutwo builds does; throws GraphError naming the op, the field and both counts. Schedule files are
// held to it (a hand-edited 10^15 priced a linear at 80 minutes); not part of validate, as an
// exported model's file leaves its FLOPs to be derived.
void check_forward_flops(const Graph& graph);

// Summary figures used by `mutwo models` and tests.
int64_t parameter_count(const Graph& graph);  // elements of weight tensors
int64_t parameter_bytes(const Graph& graph);
int64_t flops_in_phase(const Graph& graph, Phase phase);
// Bytes of forward-produced tensors (activations, saved statistics, losses).
int64_t activation_bytes(const Graph& graph);
// Bytes of forward-produced tensors a backward op reads: what a training step keeps for backward.
int64_t saved_for_backward_bytes(const Graph& graph);

}  // namespace mutwo::ir

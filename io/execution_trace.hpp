#pragma once
// PyTorch execution traces (torch.profiler.ExecutionTraceObserver; ExecutionGraphObserver in
// PyTorch 1.13; schema "1.0.x"), the graph record of a training step that Chakra, ASTRA-sim and HTA
// consume: nodes with ids, parents, record-function ids (rf_id), autograd sequence numbers (seq_id),
// and inputs/outputs whose tensors are [tensor_id, storage_id, offset, numel, element_size, device].
//
// Import into a mutwo Graph:
// - ops: the outermost operators of the step, in start (node id) order: each aten operator called
//   from the training loop (its callees fold into it), each autograd function evaluated in
//   backward ("autograd::engine::evaluate_function: AddmmBackward0"), each operator inside an
//   optimizer step ("Optimizer.step#Adam.step"); record functions around them (user annotations,
//   "[param|...]") are walked through. Optimizer.zero_grad is left out (it runs before the forward
//   and, with set_to_none, touches nothing the step needs).
// - tensors are storages, not views: every view of a storage (same storage_id) is that storage's
//   tensor; its size is the largest (offset + numel) x element_size any view reached. An op whose
//   output storage is not one of its inputs allocates a new tensor (a recycled storage_id after a
//   free is a new tensor); an output on an input's storage is a view or an in-place write.
// - roles: a storage the step reads before any op made it existed before the step: updated in
//   place by an optimizer op and read by the forward, a weight; updated by the optimizer only, an
//   optimizer state; updated in place by the forward (batch-norm statistics), a weight; else an
//   input (the batch). Tensors made in the forward are activations, later ones temporaries.
// - phases: forward until the first autograd function, backward from it, optimizer inside
//   Optimizer.step; forward_of pairs an autograd function with the forward op holding the node of
//   its sequence number (seq_id).
// Ops are opaque (op_kind "opaque", "opaque_backward", "opaque_optimizer") with the bytes they read
// and write, FLOPs from the argument shapes where the aten call is a GEMM, a convolution (or its
// backward) or a pointwise op (an autograd function: the sum over the known calls inside it), the aten name
// in attrs "source_op", the node's rf_id in "rf_id" (how a Kineto trace of the same step names it: its
// cpu_op's "External id") and its nodes' in "rf_ids". The trace has no durations: op_duration_ns is empty
// until joined with a profiler trace of the same step (io/execution_trace_join.hpp).
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "io/trace_import_result.hpp"

namespace mutwo::io {

// Whether the document is an execution trace: an object with "schema" and a "nodes" array.
bool is_execution_trace_document(const nlohmann::json& doc);

// Imports it. Throws FormatError naming `source`, the node id and the field for malformed nodes
// (a tensor that is not [id, storage, offset, numel, element_size, device], a negative size, an
// overflowing byte count), and for a trace without any operator.
TraceImport import_execution_trace(const nlohmann::json& doc, std::string_view source);

// How much of an imported step has a mutwo kind, per phase: ops, and where the trace has
// durations, time ("forward 60/62 (99.2 % of its time); ...").
std::string typed_coverage(const ir::Trace& trace);

}  // namespace mutwo::io

#pragma once
// Importer of PyTorch profiler traces: the Chrome-trace JSON (or .json.gz) that torch.profiler's
// export_chrome_trace writes (Kineto), and the legacy array trace of a PyTorch built without
// Kineto (Debian's 1.13), into a mutwo Trace: a Graph with measured per-op durations.
//
// Input. A Kineto trace is an object {"traceEvents": [...], "deviceProperties": [...], ...}; a
// legacy trace is a bare array of {"name", "ph": "X", "ts", "dur", "tid", "pid": "CPU functions",
// "args": {}}. Times are microseconds (doubles); start = round(ts * 1000) ns and duration =
// round(dur * 1000) ns, each to the nearest ns (a duration never comes from a difference of two
// timestamps: at 1.7e15 us a timestamp's ulp is 0.25 us). Events used:
//   CPU ops      "X" events of cat "cpu_op" / "Operator", or with no "cat" (legacy), plus the
//                "Optimizer.step#..." / "Optimizer.zero_grad#..." annotations; "Input Dims",
//                "Input type", "Sequence number", "Fwd thread id", "External id" from "args".
//   steps        "X" events named "ProfilerStep#N" (not the GPU-side copies).
//   launches     "X" events of a "*runtime" / "*driver" cat with "correlation" (cudaLaunchKernel,
//                hipLaunchKernel, cudaMemcpyAsync, ...).
//   GPU work     "X" events of cat "kernel", "gpu_memcpy", "gpu_memset" (any case) with
//                "correlation".
//   memory       events named "[memory]" (whatever their category or phase) with "Bytes" (> 0
//                allocation, < 0 free), "Addr", optional "Device Type", "Device Id",
//                "Total Allocated".
// Everything else (flows, metadata, python functions, other annotations) is ignored.
//
// Graph construction rules:
// - Step: the last ProfilerStep#N whose window holds an autograd backward op; else the last step
//   holding any CPU op; without steps, the whole trace. A warning names the step taken.
// - Ops: one per top-level CPU op of the step (a CPU op not nested in time in another CPU op of
//   the same pid/tid), in start order (ties by thread, then position in the file). Ops of
//   concurrent threads are thereby serialised. Nesting and enclosure allow the timestamps' quantum:
//   2 ulps of the largest timestamp (0.5 us at 1.7e15 us), or 1 us when every ts and dur is a
//   whole number of microseconds (legacy and sampled traces truncate both, so a child can end
//   1 us after its parent); of events with equal spans the earlier in the file is the parent.
//   Op name = the profiler's name; attributes "source_op" (the name again) and "trace_event" (the
//   event's index in traceEvents), which make every op's signature unique, so the measured cost
//   model (which matches by name-free signature and takes medians) replays each op's own
//   duration; with "Input Dims" also "input_shapes" ("float[8, 16], float[32, 16]").
// - Phases and kinds: "Optimizer.step#<Class>.step" -> optimizer phase, kind sgd_step (SGD),
//   adam_step (Adam), adamw_step (AdamW); another class -> opaque (forward) with a warning.
//   "autograd::engine::evaluate_function: ..." ops, ops with "Fwd thread id" > 0, and any other op
//   starting between the first backward op's start and the last one's end (DDP hooks, gradient
//   accumulation) -> opaque_backward. Everything else -> opaque (forward).
// - forward_of: a backward op's "Sequence number" is matched against the forward CPU events (any
//   depth, "Fwd thread id" absent or 0) of the step with that number; the latest one starting
//   before the backward op created the autograd node (every op records the current number and
//   the node's creator is the last to do so). forward_of = the graph op enclosing it. Ambiguous
//   matches (the number on several threads) and unmatched ops are counted in a warning.
// - Durations: when the trace has GPU work, an op's duration is the sum of the durations of the
//   kernels, memcpys and memsets launched inside it (GPU event -> "correlation" -> launch event ->
//   its "External id" CPU op, or the top-level op enclosing the launch in time); ops launching
//   nothing get 0 ns. Without GPU work, the op's own CPU duration (children included).
//   Trace::device = deviceProperties' name of the GPU most of the step's kernels ran on ("" if
//   the trace does not carry it, with a warning); "cpu" without GPU work.
// - Input sizes: "Input Dims" x element size of "Input type" (float, double, c10::Half,
//   c10::BFloat16, long int, int, short int, signed char, unsigned char, bool, complex, float8,
//   quantized types) summed into Op::bytes_read; tensor lists and unknown types are left out and
//   counted in a warning. They are not made into tensors: nothing says which op produced them.
// - Dataflow: a Kineto trace has none. Each op outputs a 0-byte "order" tensor that the next op
//   reads, so every replay keeps the trace's order. With [memory] events of the traced device
//   (Device Type != 0 when the trace has GPU work, 0 otherwise) inside the step, each block
//   (keyed by "Addr") becomes a uint8 tensor of its "Bytes": produced by the op that allocated it
//   (the top-level op enclosing the event on its thread, else the next op), read by the op that
//   freed it (enclosing op, else the previous op). A block freed in the op that allocated it is
//   that op's workspace (Op::workspace_bytes = the peak of such blocks live at once). A block not
//   freed in the step is read by the last op (it outlives the step). A block freed in the step
//   but allocated before it is an input tensor (resident at the start). "Total Allocated" before
//   the first event, less those, becomes one weight tensor "resident before the step". Tensor
//   roles: activation when produced by a forward op, temporary otherwise. Without [memory]
//   events the graph has no sized tensors, and a warning says memory use is unknown.
//
// Host timeline (a trace with GPU work; kineto/host_timeline.cpp): Trace::op_host_ns, op_streams,
// profiled_step_ns and the op attributes host_sync / device_sync, for a replay of the step
// (policies/trace_replay.hpp) on the engine's host timeline:
// - One host timeline for all threads. The main thread issues the forward and the optimizer, the
//   autograd engine's thread the backward (while the main thread waits in backward()); the ops
//   of both, merged in start order (the graph's order), are issued one after another. At each
//   point the host is the thread issuing the step's next kernels.
// - Issue points: an op's GPU work per stream is one part; a part's issue point is the end of the
//   runtime call that launched the last of its kernels/memcpys/memsets; an op launching nothing
//   has its end as issue point. Parts are ordered by issue point, every point clamped to be no
//   earlier than the one before (threads overlap).
// - Host time: each part (or op without GPU work) gets the time from the previous issue point (the
//   step's start for the first) to its own: its CPU span up to the launch and the Python time
//   before it. The time after the last issue point, up to the step's end, goes to the last op.
//   An op's host time is the sum over its parts. op_streams lists, per op, each part's stream
//   ("args.stream"), GPU time and host share in issue order.
// - Taken out of the host time (of the interval the call ends in), because the engine reproduces
//   it from the GPU side: the whole duration of a synchronising runtime call (cuda/hip
//   DeviceSynchronize, StreamSynchronize, EventSynchronize, the synchronous cudaMemcpy/hipMemcpy,
//   hipMemcpyWithStream, and a cudaMemcpyAsync whose copy is "DtoH (Device -> Pageable)"), and
//   the excess over its name's median duration in the step of any other runtime call that
//   returned while GPU work launched before it was still queued (the launch queue was full: the
//   V100 trace's launches wait with 1,020 kernels pending).
// - A synchronising call marks the op of the last issue point at or before the call's end
//   host_sync = 1 (the host waits for that op's GPU work after issuing it), and device_sync = 1
//   as well for a device-wide one.
// - profiled_step_ns = the chosen ProfilerStep's duration (0 for a whole-trace import).
// CPU traces (no GPU work) have no host side: their op durations are host time already.
//
// Errors: a document that is not a trace, no events, an event that is not an object, or an event
// the importer uses with a field missing or of the wrong type or value (no "ts", a negative or
// non-numeric "dur", "Input Dims" not a list, ...) throws mutwo::FormatError naming the source,
// the event's index and name, the field and its value.
#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "io/trace_import_result.hpp"

namespace mutwo::io {

// Content-based: an object with a "traceEvents" array, or a non-empty array whose first element
// is an object with a string "ph" (a Chrome-trace event).
bool is_kineto_document(const nlohmann::json& doc);

// Builds the Trace by the rules above. source_name names the input in messages and the graph.
TraceImport import_kineto_trace(const nlohmann::json& doc, const std::string& source_name);

// Reads (gunzipping if needed, read_text_file), parses and imports a file; FormatError on text
// that is not JSON (naming the byte offset) or not a Chrome trace.
TraceImport read_kineto_trace(const std::filesystem::path& path);

}  // namespace mutwo::io

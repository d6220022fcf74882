#pragma once
// A PyTorch profiler trace read at the level of the CUDA runtime, for the runtime replay
// (ir/runtime_trace.hpp, sim/runtime_replay.hpp). Rules:
// - The step: the ProfilerStep#N annotation asked for (`step` = N), by default the last complete
//   one (the last at least half as long as the median step: the final annotation is often cut).
//   The window runs from the first ProfilerStep of its thread to the end of that step, every step
//   in it listed (the earlier ones warm the replay up). A trace without ProfilerStep annotations is
//   one window from its first to its last event, and says so (annotated = false). The main thread
//   is the annotation's (or the one with most runtime calls).
// - Calls: every cuda_runtime / cuda_driver event (hip too) that starts in the window, on any thread.
//   Device work: every kernel, gpu_memcpy and gpu_memset whose launch is one of those calls (by
//   "correlation"), and work launched before the window that runs in it (call = -1): with a full
//   launch queue, much of a step's work runs during the next step.
// - Kinds by name: *DeviceSynchronize, *StreamSynchronize, *EventSynchronize, *EventRecord,
//   *StreamWaitEvent; a call that launched work is a launch; anything else is `other`. A launch is
//   blocking when the call is a synchronous cudaMemcpy / hipMemcpy, or its copy is to or from
//   pageable memory ("Pageable" in the copy's name) and the call returned only once the copy had
//   ended (within 2 us: a small host-to-device copy is staged and returns at once).
// - Which stream a sync or a wait is about, and which record it waits for, come from the trace's
//   cuda_sync events (PyTorch 2.3 on: "stream", "wait_on_stream",
//   "wait_on_cuda_event_record_corr_id"); without them stream_sync waits for the device and waits
//   are left unknown (-1).
// - Collectives: device work whose name holds "nccl" or "rccl".
// - A kernel's launch geometry: its thread blocks (the product of args "grid") and, from args "block",
//   "registers per thread", "shared memory" and the GPU's deviceProperties, the blocks one SM holds at
//   once (its occupancy; runtime_events.cpp has the rule); 0 when the trace does not say.
// Errors: a document that is not a trace, or a field of wrong type in an event used (a
// correlation or a device stream that is not an integer >= 0), throw FormatError naming the source,
// the event's index, the field and its value; so do a trace that breaks a rule of consistency
// (io/kineto/runtime_checks.hpp: work before its launch, two kernels of one kernel launch, a sync
// that returned before the work it waited for ended, two calls sharing a correlation) and a window
// of no length (a ProfilerStep whose dur is 0); a step that is not in the trace throws Error
// listing those that are.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ir/runtime_trace.hpp"

namespace mutwo::io {

// The ProfilerStep numbers the trace holds, in time order.
std::vector<int64_t> kineto_step_numbers(const nlohmann::json& doc, const std::string& source);

ir::RuntimeTrace read_kineto_runtime(const nlohmann::json& doc, const std::string& source,
                                     std::optional<int64_t> step = std::nullopt);

}  // namespace mutwo::io

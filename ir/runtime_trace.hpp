#pragma once
// A profiled step at the level of the CUDA runtime (docs/ARCHITECTURE.md "Trace replay"): each host
// thread's runtime calls in order, with the CPU time between them, and the device work each call
// launched, on its stream. io/ fills it from a PyTorch profiler trace (io/kineto_runtime.hpp);
// sim/runtime_replay.hpp replays it, with what-ifs. Times are ns from the window's start.
#include <cstdint>
#include <string>
#include <vector>

namespace mutwo::ir {

enum class RuntimeCallKind : uint8_t {
  launch,             // launches device work (a kernel, a copy, a memset, a graph)
  device_sync,        // cudaDeviceSynchronize: the host waits for all work launched before it
  stream_sync,        // cudaStreamSynchronize: ... for the stream's work launched before it
  event_sync,         // cudaEventSynchronize: ... for the work before the event's record
  event_record,       // cudaEventRecord on a stream: marks the stream's work launched so far
  stream_wait_event,  // cudaStreamWaitEvent: the stream's later work waits for the record
  other,              // any other runtime call: its measured time, nothing more
};

struct RuntimeCall {
  RuntimeCallKind kind = RuntimeCallKind::other;
  std::string name;  // "cudaLaunchKernel"
  int32_t thread = 0;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  // stream_sync: the stream waited for; event_record: the stream recorded; stream_wait_event: the
  // stream that waits. -1 when the trace does not say.
  int32_t stream = -1;
  // event_sync, stream_wait_event: the event_record call waited for (index into calls); -1 when the
  // trace does not say (older traces: the replay infers cross-stream waits from the timing).
  int32_t record = -1;
  // A launch that holds the host until its work has ended: a copy to or from pageable host memory,
  // or a synchronous cudaMemcpy.
  bool blocking = false;
  std::vector<int32_t> work;  // launch: the device work it launched (a graph launch: many)
};

struct DeviceWork {
  std::string name;
  int32_t stream = 0;  // index into RuntimeTrace::streams
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  int32_t call = -1;        // the launch; -1: launched before the window, still running in it
  bool collective = false;  // an NCCL (or RCCL) collective: its time includes waiting for other ranks
  bool copy = false;        // gpu_memcpy or gpu_memset
  int64_t event = -1;       // its index in the trace's events (joins the trace's shaped ops); -1: none
  // A kernel's launch geometry, for moving it to another GPU (costmodel/kernel_transfer.hpp): its
  // thread blocks, and how many of them one SM of the traced GPU holds at once (occupancy); 0: the
  // trace does not say.
  int64_t blocks = 0;
  int32_t resident_blocks_per_sm = 0;
};

// A step of the main thread in the window (times from the window's start).
struct RuntimeStep {
  std::string name;  // "ProfilerStep#6"
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct RuntimeTrace {
  std::string source;
  std::string window;     // the step replayed ("ProfilerStep#6"), or "whole trace" without ProfilerStep
  bool annotated = true;  // false: no ProfilerStep; the window is the whole trace
  int64_t window_ns = 0;  // the profiled step: the annotation's length
  // The steps the window holds, in order: the earlier ones warm the replay up (work still queued,
  // collectives' floors), the last is the one replayed. Without ProfilerStep: the whole trace.
  std::vector<RuntimeStep> steps;
  int32_t main_thread = 0;           // the thread that ran the ProfilerStep (or the one with most calls)
  std::string device;                // deviceProperties' name of the GPU most work ran on ("" if absent)
  std::vector<std::string> threads;  // "pid/tid"
  std::vector<int64_t> streams;      // the traced stream ids
  std::vector<RuntimeCall> calls;    // by thread, each thread's in start order
  std::vector<DeviceWork> work;      // by stream, each stream's in launch order
};

}  // namespace mutwo::ir

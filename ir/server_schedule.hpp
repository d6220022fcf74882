#pragma once
// A training step on a multi-GPU server (Harmony, Li et al., HotOS 2021): tasks placed on the GPUs'
// streams, compute tasks with their durations and copies between the host and the GPUs or between
// GPUs, ordered like the single-GPU Schedule: within one (GPU, stream) in list order, across streams
// only by the listed waits. The server simulator (sim/server_simulator.hpp) runs it with every link
// of the server shared by the copies crossing it. Tasks are coarse (a layer pack's forward over one
// micro-batch, one weight pack's swap) as Harmony's are; a single-GPU Schedule lifts into it
// instruction by instruction (policies/server_lift.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.hpp"

namespace mutwo::ir {

enum class ServerTaskKind : uint8_t { compute, transfer };

// What a copy moves, for the swap and peer volume tables (Harmony's W, dW, K, X).
enum class Payload : uint8_t {
  none,                  // compute tasks
  weights,               // W
  weight_gradients,      // dW (swapped; an all-reduce moves gradient_reduce)
  optimizer_state,       // K
  stashed_activations,   // X: tensors kept for backward
  boundary_activations,  // a pipeline's activations (forward) or their gradients (backward) between GPUs
  gradient_reduce,       // a ring all-reduce's chunk of dW between GPUs
  tensor,                // a single-GPU Schedule's swapped tensor (lifted)
};
std::string_view payload_name(Payload payload);
inline constexpr int32_t kPayloadCount = 8;

// Per-GPU streams: compute, copies to the host, copies from the host, copies to peers, a
// bookkeeping stream whose tasks take 0 ns and order no other stream, and the host CPU work of the
// GPU's process (a host-placed optimizer's updates: ZeRO-Offload's CPU Adam, on cores of its own).
// A 0 ns compute task (a marker, as a lifted Schedule's frees are) may also sit on any other
// stream, ordering it.
inline constexpr int32_t kServerComputeStream = 0;
inline constexpr int32_t kServerToHostStream = 1;
inline constexpr int32_t kServerFromHostStream = 2;
inline constexpr int32_t kServerPeerStream = 3;
inline constexpr int32_t kServerMarkerStream = 4;
inline constexpr int32_t kServerHostCpuStream = 5;
inline constexpr int32_t kServerStreams = 6;
inline constexpr int32_t kHostSide = -1;  // a copy's endpoint: the host, or a GPU index

struct ServerTask {
  int32_t id = 0;
  ServerTaskKind kind = ServerTaskKind::compute;
  int32_t gpu = 0;  // whose stream runs it (a copy: the GPU whose copy engine drives it)
  int32_t stream = kServerComputeStream;
  int64_t duration_ns = 0;   // compute
  int64_t bytes = 0;         // transfer
  int32_t from = kHostSide;  // transfer endpoints
  int32_t to = kHostSide;
  Payload payload = Payload::none;
  // Device memory: alloc_bytes taken when it starts (compute: on gpu; a copy: on `to`), free_bytes
  // released when it ends (compute: on gpu; a copy: on `from`, the source copy dropped).
  int64_t alloc_bytes = 0;
  int64_t free_bytes = 0;
  std::vector<int32_t> waits;  // earlier tasks that must finish first
  std::string label;           // "fwd pack 3 mb 1", for reports and errors
  // The host that drives this task's GPU (one process per GPU; sim/host_plan.hpp's rule): it issues
  // its GPU's tasks with issue_ns >= 0 in list order, issue_ns each, and a task starts no earlier
  // than its issue; after a host_sync task it waits for the task to finish. -1: not issued (the
  // host is not modelled for it).
  int64_t issue_ns = -1;
  bool host_sync = false;
};

struct ServerSchedule {
  std::string server;     // catalog name (costmodel/server_catalog.hpp)
  int32_t gpu_count = 0;  // GPUs the tasks may use (<= the server's)
  std::string scheme;     // "dp-swap", "harmony-pp", "mutwo", ...
  int32_t micro_batches = 1;
  int64_t samples_per_step = 0;
  std::vector<int64_t> initial_bytes;  // per GPU: device memory held at the start (resident state)
  std::vector<ServerTask> tasks;       // tasks[i].id == i
  // Per GPU's host: issued tasks not yet started it may have outstanding before it waits (the
  // launch queue); 0: unbounded.
  int32_t launch_queue_depth = 0;
};

// A task a server simulator or a back end cannot run: names the task and the field.
class ServerScheduleError : public Error {
 public:
  using Error::Error;
};

// Checks ids, GPUs (0 <= gpu < gpu_count), streams (compute tasks of > 0 ns on the compute or host
// CPU stream, 0 ns markers on any; a copy from the host on its receiver's from-host stream, to the host on
// its sender's to-host stream, between GPUs on the sender's peer stream), endpoints (distinct, -1 or
// a GPU), non-negative durations, bytes and memory, waits pointing backwards, issue_ns >= -1 (host_sync
// only on an issued task), launch_queue_depth >= 0, initial_bytes one per GPU. Throws ServerScheduleError
// naming the first offending task and field.
void validate_server_schedule(const ServerSchedule& schedule);

}  // namespace mutwo::ir

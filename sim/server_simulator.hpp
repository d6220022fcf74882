#pragma once
// simulate_server(): discrete-event replay of a ServerSchedule on a multi-GPU server.
//
// - Each GPU has the streams of ir/server_schedule.hpp; each stream is an engine that runs its
//   tasks one at a time in list order; a task starts when its stream's previous task has finished
//   and every task it waits on has finished.
// - A compute task takes its duration_ns. A copy of B > 0 bytes takes the server's copy latency,
//   then moves its bytes over its route (costmodel/server_routes.hpp) at the max-min fair rate
//   (sim/link_sharing.hpp) of the copies moving at that moment, re-shared whenever one starts or
//   ends; it ends at the first whole ns by which its bytes have moved. A copy of 0 bytes takes 0 ns.
//   Two copies that cross one link alone each take twice as long as one of them alone would.
// - Memory per GPU: initial_bytes at t = 0, a task's alloc_bytes when it starts, its free_bytes when
//   it ends (no allocator rounding at this granularity). Over the limit is recorded, not fatal.
// - Host per GPU (tasks with issue_ns >= 0; sim/host_plan.hpp's rule, as the single-GPU engine):
//   the GPU's host issues them in list order, issue_ns each; a task starts no earlier than its
//   issue; at most launch_queue_depth issued tasks wait to start; after a host_sync task the host
//   waits for it to finish. The step ends when the tasks and the hosts are done.
// - At one instant: copies and compute that end are finished first (memory released), then every
//   stream starts what is ready, GPUs and streams in index order. Deterministic.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/server_spec.hpp"
#include "ir/server_schedule.hpp"

namespace mutwo::sim {

struct ServerGpuFigures {
  int64_t end_ns = 0;            // when its last task ended
  int64_t compute_busy_ns = 0;   // compute tasks' durations
  int64_t compute_stall_ns = 0;  // compute stream idle before a compute task, waiting on its waits
  int64_t peak_bytes = 0;
  int64_t bytes_to_host = 0;
  int64_t bytes_from_host = 0;
  int64_t bytes_to_peers = 0;
  int64_t bytes_from_peers = 0;
  bool oom = false;  // peak_bytes over the limit
  int64_t host_busy_ns = 0;  // its host issuing tasks (tasks with issue_ns >= 0)
  int64_t host_end_ns = 0;   // when its host last finished issuing or waiting
};

struct ServerTaskSpan {
  int32_t task = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct ServerPrediction {
  int64_t step_time_ns = 0;  // end of the last task
  std::vector<ServerGpuFigures> gpus;
  // Bytes by payload (ir::Payload) over all GPUs: copies to or from the host (swaps), and
  // copies between GPUs.
  std::array<int64_t, ir::kPayloadCount> swap_bytes{};
  std::array<int64_t, ir::kPayloadCount> peer_bytes{};
  std::vector<int64_t> resource_bytes;    // per ServerRoutes resource: bytes that crossed it
  std::vector<int64_t> resource_busy_ns;  // per resource: time some copy was crossing it
  // per resource: bytes / (capacity x step time), its share of what it could have carried (0: none)
  std::vector<double> resource_utilisation;
  int64_t compute_stall_ns = 0;           // the largest GPU's compute_stall_ns
  int64_t memory_limit_bytes = 0;         // per GPU; 0: none
  bool oom = false;
  std::string oom_message;  // the first task that took a GPU over the limit
  std::vector<ServerTaskSpan> spans;  // per task, with ServerSimOptions::record_spans
};

struct ServerSimOptions {
  int64_t memory_limit_bytes = 0;  // per GPU; 0: the server GPU's memory; < 0: none
  bool record_spans = false;
};

// Validates the schedule (ir::validate_server_schedule) and the server (its gpu_count must
// cover the schedule's), then replays it. Throws ServerScheduleError / mutwo::Error.
ServerPrediction simulate_server(const ir::ServerSchedule& schedule, const costmodel::ServerSpec& server,
                                 const ServerSimOptions& options = {});

}  // namespace mutwo::sim

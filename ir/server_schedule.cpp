#include "ir/server_schedule.hpp"

#include <array>

#include <fmt/format.h>

namespace mutwo::ir {

std::string_view payload_name(Payload payload) {
  static constexpr std::array<std::string_view, kPayloadCount> kNames{"none",
                                                                      "weights",
                                                                      "weight_gradients",
                                                                      "optimizer_state",
                                                                      "stashed_activations",
                                                                      "boundary_activations",
                                                                      "gradient_reduce",
                                                                      "tensor"};
  return kNames[static_cast<size_t>(payload)];
}

void validate_server_schedule(const ServerSchedule& s) {
  if (s.gpu_count < 1)
    throw ServerScheduleError(fmt::format("server schedule: gpu_count = {} must be >= 1", s.gpu_count));
  if (s.initial_bytes.size() != static_cast<size_t>(s.gpu_count)) {
    throw ServerScheduleError(
        fmt::format("server schedule: initial_bytes has {} entries, expected one per GPU ({})",
                    s.initial_bytes.size(), s.gpu_count));
  }
  for (size_t g = 0; g < s.initial_bytes.size(); ++g) {
    if (s.initial_bytes[g] < 0) {
      throw ServerScheduleError(
          fmt::format("server schedule: initial_bytes[{}] = {} must be >= 0", g, s.initial_bytes[g]));
    }
  }
  if (s.launch_queue_depth < 0) {
    throw ServerScheduleError(
        fmt::format("server schedule: launch_queue_depth = {} must be >= 0", s.launch_queue_depth));
  }
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const ServerTask& t = s.tasks[i];
    auto fail = [&](std::string_view field, auto value, std::string_view rule) {
      throw ServerScheduleError(
          fmt::format("task {} ('{}'): field '{}' = {} must be {}", i, t.label, field, value, rule));
    };
    if (t.id != static_cast<int32_t>(i)) fail("id", t.id, fmt::format("{} (its index)", i));
    if (t.gpu < 0 || t.gpu >= s.gpu_count) fail("gpu", t.gpu, fmt::format("in [0, {})", s.gpu_count));
    if (t.stream < 0 || t.stream >= kServerStreams)
      fail("stream", t.stream, fmt::format("in [0, {})", kServerStreams));
    if (t.alloc_bytes < 0) fail("alloc_bytes", t.alloc_bytes, ">= 0");
    if (t.issue_ns < -1) fail("issue_ns", t.issue_ns, ">= 0, or -1 (not issued by the host)");
    if (t.host_sync && t.issue_ns < 0)
      fail("host_sync", "true", "false on a task the host does not issue (issue_ns -1)");
    if (t.free_bytes < 0) fail("free_bytes", t.free_bytes, ">= 0");
    for (const int32_t w : t.waits) {
      if (w < 0 || w >= t.id) fail("waits", w, "an earlier task");
    }
    if (t.kind == ServerTaskKind::compute) {
      if (t.duration_ns < 0) fail("duration_ns", t.duration_ns, ">= 0");
      // A 0 ns task is a marker (a lifted free): it may order any stream.
      if (t.duration_ns > 0 && t.stream != kServerComputeStream && t.stream != kServerHostCpuStream) {
        fail("stream", t.stream,
             "the compute (0) or host CPU (5) stream for a compute task of > 0 ns (0 ns markers may sit on "
             "any stream)");
      }
      if (t.stream == kServerHostCpuStream && t.alloc_bytes != 0) {
        fail("alloc_bytes", t.alloc_bytes, "0 on the host CPU stream (its work holds no device memory)");
      }
      if (t.stream == kServerHostCpuStream && t.free_bytes != 0) {
        fail("free_bytes", t.free_bytes, "0 on the host CPU stream (its work holds no device memory)");
      }
      if (t.bytes != 0) fail("bytes", t.bytes, "0 for a compute task");
      continue;
    }
    if (t.bytes < 0) fail("bytes", t.bytes, ">= 0");
    if (t.duration_ns != 0) fail("duration_ns", t.duration_ns, "0 for a transfer (the links price it)");
    for (const auto& [field, end] : {std::pair<std::string_view, int32_t>{"from", t.from}, {"to", t.to}}) {
      if (end < kHostSide || end >= s.gpu_count)
        fail(field, end, fmt::format("-1 (host) or a GPU in [0, {})", s.gpu_count));
    }
    if (t.from == t.to) fail("to", t.to, "different from 'from'");
    if (t.from == kHostSide) {
      if (t.gpu != t.to || t.stream != kServerFromHostStream) {
        fail("stream", t.stream, "the receiver's from-host stream (2) for a copy from the host");
      }
    } else if (t.to == kHostSide) {
      if (t.gpu != t.from || t.stream != kServerToHostStream) {
        fail("stream", t.stream, "the sender's to-host stream (1) for a copy to the host");
      }
    } else if (t.gpu != t.from || t.stream != kServerPeerStream) {
      fail("stream", t.stream, "the sender's peer stream (3) for a copy between GPUs");
    }
  }
}

}  // namespace mutwo::ir

#pragma once
// Hand-made PyTorch profiler traces for the runtime replay's tests (tests/test_runtime_replay.cpp,
// tests/test_runtime_other_gpu.cpp): a Chrome trace built event by event.
#include <string>

#include <nlohmann/json.hpp>

#include "io/kineto_runtime.hpp"
#include "ir/runtime_trace.hpp"

namespace mutwo::test {

using nlohmann::json;

constexpr int64_t kUs = 1'000;

// A Chrome trace built event by event, on host thread (1, 1).
struct TraceBuilder {
  json events = json::array();
  void step(const std::string& name, double ts, double dur) {
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", name},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", ts},
                      {"dur", dur}});
  }
  int last_corr = 0;
  void call(const std::string& name, double ts, double dur, int corr) {
    last_corr = corr;
    events.push_back({{"ph", "X"},
                      {"cat", "cuda_runtime"},
                      {"name", name},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", ts},
                      {"dur", dur},
                      {"args", {{"correlation", corr}}}});
  }
  void work(const std::string& cat, const std::string& name, int stream, double ts, double dur, int corr) {
    events.push_back({{"ph", "X"},
                      {"cat", cat},
                      {"name", name},
                      {"pid", 0},
                      {"tid", stream},
                      {"ts", ts},
                      {"dur", dur},
                      {"args", {{"correlation", corr}, {"stream", stream}, {"device", 0}}}});
  }
  // Launched by the last call unless corr says otherwise.
  void kernel(const std::string& name, int stream, double ts, double dur, int corr = -1) {
    work("kernel", name, stream, ts, dur, corr < 0 ? last_corr : corr);
  }
  void sync(const std::string& kind, int corr, int stream, int wait_on_stream = -1, int record_corr = -1) {
    events.push_back({{"ph", "X"},
                      {"cat", "cuda_sync"},
                      {"name", kind},
                      {"pid", 0},
                      {"tid", stream},
                      {"ts", 0},
                      {"dur", 0},
                      {"args",
                       {{"cuda_sync_kind", kind},
                        {"correlation", corr},
                        {"stream", stream},
                        {"wait_on_stream", wait_on_stream},
                        {"wait_on_cuda_event_record_corr_id", record_corr}}}});
  }
  // The last event's launch geometry (a kernel's args "grid", "block", ...).
  void geometry(int grid_x, int grid_y, int block_x, int registers, int shared_bytes) {
    json& args = events.back()["args"];
    args["grid"] = {grid_x, grid_y, 1};
    args["block"] = {block_x, 1, 1};
    args["registers per thread"] = registers;
    args["shared memory"] = shared_bytes;
  }
  json properties = json::array();  // deviceProperties; empty: none
  json document() const {
    json doc{{"traceEvents", events}};
    if (!properties.empty()) doc["deviceProperties"] = properties;
    return doc;
  }
  ir::RuntimeTrace read() const { return io::read_kineto_runtime(document(), "hand.json"); }
};

}  // namespace mutwo::test

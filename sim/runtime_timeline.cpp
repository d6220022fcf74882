#include "sim/runtime_timeline.hpp"

#include <nlohmann/json.hpp>

namespace mutwo::sim {

std::string runtime_chrome_trace_json(const ir::RuntimeTrace& t, const RuntimeReplay& r) {
  using nlohmann::ordered_json;
  ordered_json events = ordered_json::array();
  auto us = [](int64_t ns) { return static_cast<double>(ns) / 1000.0; };
  auto name_track = [&](int pid, size_t tid, const std::string& name) {
    events.push_back(
        {{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  };
  events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", "host (" + r.label + ")"}}}});
  events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", 2}, {"args", {{"name", "GPU (" + r.label + ")"}}}});
  for (size_t th = 0; th < t.threads.size(); ++th) name_track(1, th, "thread " + t.threads[th]);
  for (size_t s = 0; s < t.streams.size(); ++s) name_track(2, s, "stream " + std::to_string(t.streams[s]));
  for (size_t c = 0; c < t.calls.size() && c < r.call_start_ns.size(); ++c) {
    const ir::RuntimeCall& call = t.calls[c];
    events.push_back({{"ph", "X"},
                      {"name", call.name},
                      {"pid", 1},
                      {"tid", call.thread},
                      {"ts", us(r.call_start_ns[c])},
                      {"dur", us(r.call_end_ns[c] - r.call_start_ns[c])}});
  }
  for (size_t w = 0; w < t.work.size() && w < r.work_start_ns.size(); ++w) {
    const ir::DeviceWork& d = t.work[w];
    events.push_back({{"ph", "X"},
                      {"name", d.name},
                      {"pid", 2},
                      {"tid", d.stream},
                      {"ts", us(r.work_start_ns[w])},
                      {"dur", us(r.work_end_ns[w] - r.work_start_ns[w])},
                      {"args", {{"collective", d.collective}}}});
  }
  for (const RuntimeReplay::Step& st : r.steps) {
    events.push_back({{"ph", "i"},
                      {"s", "p"},
                      {"name", st.name + " start"},
                      {"pid", 1},
                      {"tid", t.main_thread},
                      {"ts", us(st.start_ns)}});
    events.push_back({{"ph", "i"},
                      {"s", "p"},
                      {"name", st.name + " end"},
                      {"pid", 1},
                      {"tid", t.main_thread},
                      {"ts", us(st.end_ns)}});
  }
  ordered_json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ns";
  return doc.dump();
}

}  // namespace mutwo::sim

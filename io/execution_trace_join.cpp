#include "io/execution_trace_join.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/execution_trace.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::io {
namespace {

using nlohmann::json;

struct Span {
  std::string name;
  std::string category;
  std::string thread;  // pid/tid
  double ts_us = 0;
  double dur_us = 0;
  int64_t external_id = -1;
  int64_t correlation = -1;
};

bool is_device_work(std::string_view category) {
  return category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset";
}

int64_t to_ns(double us) {
  return static_cast<int64_t>(std::llround(us * 1000.0));
}

template <typename T>
T attr(const ir::Op& op, const char* key, T fallback) {
  const auto it = op.attrs.find(key);
  if (it == op.attrs.end()) return fallback;
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return fallback;
}

}  // namespace

void join_profiler_trace(TraceImport& et, const nlohmann::json& profile, std::string_view et_source,
                         std::string_view profile_source) {
  const json* events = &profile;
  if (profile.is_object()) {
    const auto it = profile.find("traceEvents");
    if (it == profile.end() || !it->is_array()) {
      throw FormatError(fmt::format("{}: not a profiler trace (no \"traceEvents\" array)", profile_source));
    }
    events = &*it;
  } else if (!profile.is_array()) {
    throw FormatError(
        fmt::format("{}: not a profiler trace (neither an object nor an event array)", profile_source));
  }
  std::vector<Span> spans;
  for (const json& e : *events) {
    if (!e.is_object() || e.value("ph", "") != "X" || !e.contains("name") || !e["name"].is_string()) continue;
    Span s;
    s.name = e["name"].get<std::string>();
    s.category = e.value("cat", "");
    if (!e.contains("ts") || !e["ts"].is_number() || !e.contains("dur") || !e["dur"].is_number()) {
      throw FormatError(fmt::format("{}: event '{}' needs numeric 'ts' and 'dur'", profile_source, s.name));
    }
    s.ts_us = e["ts"].get<double>();
    s.dur_us = e["dur"].get<double>();
    if (s.dur_us < 0) {
      throw FormatError(fmt::format("{}: event '{}' has 'dur' = {} < 0", profile_source, s.name, s.dur_us));
    }
    s.thread = e.value("pid", json()).dump() + "/" + e.value("tid", json()).dump();
    if (const auto a = e.find("args"); a != e.end() && a->is_object()) {
      if (const auto x = a->find("External id"); x != a->end() && x->is_number_integer()) {
        s.external_id = x->get<int64_t>();
      }
      if (const auto x = a->find("correlation"); x != a->end() && x->is_number_integer()) {
        s.correlation = x->get<int64_t>();
      }
    }
    spans.push_back(std::move(s));
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span& a, const Span& b) { return a.ts_us < b.ts_us; });

  ir::Trace& trace = et.trace;
  const ir::Graph& g = trace.graph;
  const size_t n = g.ops.size();
  trace.op_duration_ns.assign(n, 0);
  auto mismatch = [&](const ir::Op& op, const std::string& why) {
    return FormatError(
        fmt::format("{} and {} are not traces of the same step: op {} '{}' (execution trace node {}) {}",
                    et_source, profile_source, op.id, op.name, attr<int64_t>(op, "et_node", -1), why));
  };

  std::map<int64_t, const Span*> cpu_op;                          // External id -> its cpu_op span
  std::map<std::string, std::vector<const Span*>> ops_of_thread;  // cpu_ops by start
  std::map<int64_t, double> device_by_correlation;
  for (const Span& s : spans) {
    if (is_device_work(s.category) && s.correlation >= 0) {
      device_by_correlation[s.correlation] += s.dur_us;
    } else if ((s.category == "cpu_op" || s.category == "Operator") && s.external_id >= 0) {
      cpu_op.emplace(s.external_id, &s);
      ops_of_thread[s.thread].push_back(&s);
    }
  }
  // GPU work -> its launch (same correlation) -> the innermost cpu_op around the launch on its
  // thread -> that op's External id (the record-function id).
  std::map<int64_t, double> device_us;  // External id -> GPU time of what it launched
  for (const Span& launch : spans) {
    if (launch.category != "cuda_runtime" || launch.correlation < 0) continue;
    const auto work = device_by_correlation.find(launch.correlation);
    if (work == device_by_correlation.end()) continue;
    const auto thread = ops_of_thread.find(launch.thread);
    if (thread == ops_of_thread.end()) continue;
    const std::vector<const Span*>& ops = thread->second;
    auto it = std::upper_bound(ops.begin(), ops.end(), launch.ts_us,
                               [](double ts, const Span* op) { return ts < op->ts_us; });
    while (it != ops.begin()) {
      const Span* op = *--it;
      if (launch.ts_us <= op->ts_us + op->dur_us) {
        device_us[op->external_id] += work->second;
        break;
      }
    }
  }
  if (!cpu_op.empty()) {
    // Kineto: by record-function id.
    const bool gpu = !device_us.empty();
    if (gpu) trace.op_host_ns.assign(n, 0);
    for (const ir::Op& op : g.ops) {
      const int64_t rf = attr<int64_t>(op, "rf_id", -1);
      const auto host = cpu_op.find(rf);
      if (host == cpu_op.end())
        throw mismatch(op, fmt::format("has rf_id {}, which no cpu_op's External id is", rf));
      if (host->second->name != op.name) {
        throw mismatch(op, fmt::format("is cpu_op '{}' in the profiler trace", host->second->name));
      }
      if (!gpu) {
        trace.op_duration_ns[static_cast<size_t>(op.id)] = to_ns(host->second->dur_us);
        continue;
      }
      double us = 0;
      for (int64_t id : attr<std::vector<int64_t>>(op, "rf_ids", {})) {
        if (const auto d = device_us.find(id); d != device_us.end()) us += d->second;
      }
      trace.op_duration_ns[static_cast<size_t>(op.id)] = to_ns(us);
      trace.op_host_ns[static_cast<size_t>(op.id)] = to_ns(host->second->dur_us);
    }
    trace.device = gpu ? "cuda" : "cpu";
    // The GPU's product name, as the Kineto trace records it (device 0: the kernels' device).
    if (gpu && profile.is_object()) {
      if (const auto d = profile.find("deviceProperties");
          d != profile.end() && d->is_array() && !d->empty() && (*d)[0].is_object() &&
          (*d)[0].contains("name") && (*d)[0]["name"].is_string()) {
        trace.device = (*d)[0]["name"].get<std::string>();
      }
    }
    et.warnings.push_back(
        fmt::format("{}: durations from {} by record-function id ({})", et_source, profile_source,
                    gpu ? "GPU time of each op's kernels and copies" : "each op's CPU span"));
    return;
  }

  // The legacy profiler: by name and occurrence among outermost operators, as the execution trace's
  // ops are: events with "::" in their name not inside another such event on their thread, nor
  // inside Optimizer.zero_grad (which the import leaves out).
  std::map<std::string, std::vector<const Span*>> by_thread;
  for (const Span& s : spans) by_thread[s.thread].push_back(&s);
  std::map<std::string, std::vector<const Span*>, std::less<>> by_name;
  for (auto& [thread, list] : by_thread) {
    std::stable_sort(list.begin(), list.end(), [](const Span* a, const Span* b) {
      return a->ts_us != b->ts_us ? a->ts_us < b->ts_us : a->dur_us > b->dur_us;
    });
    std::vector<const Span*> open;
    for (const Span* x : list) {
      while (!open.empty() && open.back()->ts_us + open.back()->dur_us <= x->ts_us) open.pop_back();
      const bool inside = std::any_of(open.begin(), open.end(), [](const Span* o) {
        return o->name.find("::") != std::string::npos || o->name.rfind("Optimizer.zero_grad", 0) == 0;
      });
      if (!inside && x->name.find("::") != std::string::npos) by_name[x->name].push_back(x);
      open.push_back(x);
    }
  }
  for (auto& [name, list] : by_name) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Span* a, const Span* b) { return a->ts_us < b->ts_us; });
  }
  std::map<std::string, size_t, std::less<>> seen;
  std::map<std::string, size_t, std::less<>> ops_of_name;
  for (const ir::Op& op : g.ops) ++ops_of_name[op.name];
  for (const ir::Op& op : g.ops) {
    const size_t k = seen[op.name]++;
    const auto it = by_name.find(op.name);
    const size_t events_of_name = it == by_name.end() ? 0 : it->second.size();
    if (events_of_name != ops_of_name[op.name]) {
      throw mismatch(op, fmt::format("is one of {} outermost '{}' ops; the profiler trace has {}",
                                     ops_of_name[op.name], op.name, events_of_name));
    }
    trace.op_duration_ns[static_cast<size_t>(op.id)] = to_ns(it->second[k]->dur_us);
  }
  trace.device = "cpu";
  et.warnings.push_back(
      fmt::format("{}: durations from {} (a legacy profiler trace, no record-function ids) by name and "
                  "occurrence: each op's "
                  "CPU span",
                  et_source, profile_source));
}

void join_profiler_file(TraceImport& et, const std::filesystem::path& profile_path,
                        std::string_view et_source) {
  const json profile = json::parse(support::read_text_file(profile_path, "profiler trace"), nullptr, false);
  if (profile.is_discarded()) throw FormatError(fmt::format("{}: not JSON", profile_path.string()));
  join_profiler_trace(et, profile, et_source, profile_path.filename().string());
  // The execution trace's "no durations" note no longer applies.
  std::erase_if(et.warnings, [](const std::string& w) {
    return w.find("has no durations") != std::string::npos || w.find(": typed ops (") != std::string::npos;
  });
  et.warnings.push_back(fmt::format("{}: {}", et_source, typed_coverage(et.trace)));  // now with time
  et.needs_profile = false;
}

TraceImport import_execution_trace_pair(const std::filesystem::path& et_path,
                                        const std::filesystem::path& profile_path) {
  const json et_doc = json::parse(support::read_text_file(et_path, "execution trace"), nullptr, false);
  if (et_doc.is_discarded() || !is_execution_trace_document(et_doc)) {
    throw FormatError(fmt::format(
        "{}: not a PyTorch execution trace (an object with \"schema\" and \"nodes\")", et_path.string()));
  }
  TraceImport out = import_execution_trace(et_doc, et_path.filename().string());
  join_profiler_file(out, profile_path, et_path.filename().string());
  return out;
}

}  // namespace mutwo::io

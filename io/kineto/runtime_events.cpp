// The runtime-level reading of a PyTorch profiler trace (io/kineto_runtime.hpp has the rules).
#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "io/kineto/events.hpp"
#include "io/kineto/runtime_checks.hpp"
#include "io/kineto_runtime.hpp"
#include "support/error.hpp"

namespace mutwo::io {
namespace {

using Json = nlohmann::json;

// Kineto's timestamps are whole microseconds: a call that returns within this of its copy's end
// waited for it.
constexpr int64_t kBlockingSlackNs = 2'000;
constexpr double kMaxAbsTsUs = 2e15;
constexpr double kMaxDurUs = 8.64e10;

using kineto::lower;

struct Raw {
  size_t index = 0;
  std::string name;
  std::string cat;
  std::string thread;  // "pid/tid"
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  const Json* args = nullptr;
};

class Reader {
 public:
  Reader(const Json& doc, std::string source) : source_(std::move(source)) {
    const Json* list = &doc;
    if (doc.is_object()) {
      if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
        throw FormatError(fmt::format("{}: not a PyTorch profiler trace (no 'traceEvents' array)", source_));
      list = &doc["traceEvents"];
    } else if (!doc.is_array()) {
      throw FormatError(fmt::format("{}: not a PyTorch profiler trace", source_));
    }
    for (size_t i = 0; i < list->size(); ++i) read((*list)[i], i);
  }

  [[noreturn]] void fail(size_t i, const Json& e, const std::string& what) const {
    const std::string name = e.is_object() && e.contains("name") && e["name"].is_string()
                                 ? e["name"].get<std::string>()
                                 : std::string("?");
    throw FormatError(fmt::format("{}: event {} ('{}'): {}", source_, i, name, what));
  }

  std::optional<int64_t> int_arg(const Raw& r, const char* key) const {
    if (r.args == nullptr || !r.args->contains(key)) return std::nullopt;
    const Json& v = (*r.args)[key];
    if (!v.is_number_integer()) return std::nullopt;
    return v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ? -1
                                                                                          : v.get<int64_t>();
  }
  // A launch dimension ("grid", "block": [x, y, z]) as its product; nullopt when absent. Throws
  // FormatError for a value that is not three integers within CUDA's limits (x < 2^31, y and z < 2^16).
  std::optional<int64_t> dims_arg(const Raw& r, const char* key) const {
    if (r.args == nullptr || !r.args->contains(key)) return std::nullopt;
    const Json& v = (*r.args)[key];
    bool ok = v.is_array() && v.size() == 3;
    int64_t n = 1;
    for (size_t i = 0; ok && i < 3; ++i) {
      ok = v[i].is_number_integer() && v[i].get<int64_t>() >= 1 &&
           v[i].get<int64_t>() <= (i == 0 ? int64_t{2147483647} : int64_t{65535});
      if (ok) n *= v[i].get<int64_t>();
    }
    if (!ok)
      throw FormatError(
          fmt::format("{}: event {} ('{}'): field 'args.{}' = {}, expected [x, y, z], x < 2^31, "
                      "y and z < 2^16, each >= 1",
                      source_, r.index, r.name, key, v.dump()));
    return n;
  }
  std::string str_arg(const Raw& r, const char* key) const {
    if (r.args == nullptr || !r.args->contains(key) || !(*r.args)[key].is_string()) return "";
    return (*r.args)[key].get<std::string>();
  }

  std::vector<Raw> steps, calls, gpu, syncs;

 private:
  double number(size_t i, const Json& e, const char* field) const {
    if (!e.contains(field)) fail(i, e, fmt::format("field '{}' is missing", field));
    const Json& v = e[field];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(i, e, fmt::format("field '{}' = {}, expected a finite number", field, v.dump()));
    return v.get<double>();
  }

  void read(const Json& e, size_t i) {
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string() || e["ph"].get<std::string>() != "X")
      return;
    if (!e.contains("name") || !e["name"].is_string()) return;
    Raw r;
    r.index = i;
    r.name = e["name"].get<std::string>();
    if (e.contains("cat") && e["cat"].is_string()) r.cat = lower(e["cat"].get<std::string>());
    const bool step = (r.cat.empty() || r.cat == "cpu_op" || r.cat == "user_annotation") &&
                      r.name.starts_with(kineto::kStepPrefix);
    const bool call = r.cat.ends_with("runtime") || r.cat.ends_with("driver");
    const bool device = r.cat == "kernel" || r.cat == "gpu_memcpy" || r.cat == "gpu_memset";
    const bool sync = r.cat == "cuda_sync";
    if (!step && !call && !device && !sync) return;
    const double ts = number(i, e, "ts");
    const double dur = number(i, e, "dur");
    if (dur < 0) fail(i, e, fmt::format("field 'dur' = {}, must be >= 0", e["dur"].dump()));
    // Epoch microseconds until 2033, events up to a day: every sum of the replay stays in int64 ns.
    if (std::fabs(ts) > kMaxAbsTsUs)
      fail(i, e, fmt::format("field 'ts' = {}, beyond +-{:g} us", e["ts"].dump(), kMaxAbsTsUs));
    if (dur > kMaxDurUs)
      fail(i, e, fmt::format("field 'dur' = {}, beyond {:g} us (a day)", e["dur"].dump(), kMaxDurUs));
    r.start_ns = static_cast<int64_t>(std::llround(ts * 1000.0));
    r.end_ns = r.start_ns + static_cast<int64_t>(std::llround(dur * 1000.0));
    r.thread = fmt::format("{}/{}", e.contains("pid") ? e["pid"].dump() : "?",
                           e.contains("tid") ? e["tid"].dump() : "?");
    if (e.contains("args")) {
      if (!e["args"].is_object())
        fail(i, e, fmt::format("field 'args' = {}, expected an object", e["args"].dump()));
      r.args = &e["args"];
    }
    if ((call || device || sync) && !int_arg(r, "correlation")) {
      if (r.args != nullptr && r.args->contains("correlation"))
        fail(i, e,
             fmt::format("field 'args.correlation' = {}, expected an integer",
                         (*r.args)["correlation"].dump()));
      if (device) fail(i, e, "field 'args.correlation' is missing (it links device work to its launch)");
      return;  // a runtime call or sync record without a correlation links to nothing we can see
    }
    // A stream id is CUPTI's (or HIP's) unsigned id; a missing one leaves the stream unknown (-1).
    if (device && r.args != nullptr && r.args->contains("stream")) {
      const Json& v = (*r.args)["stream"];
      if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0) ||
          (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
        fail(i, e, fmt::format("field 'args.stream' = {}, expected a stream id (an integer >= 0)", v.dump()));
    }
    (step ? steps : call ? calls : device ? gpu : syncs).push_back(std::move(r));
  }

  std::string source_;
};

int64_t step_number(const std::string& name) {
  const std::string digits = name.substr(kineto::kStepPrefix.size());
  int64_t n = -1;
  for (char c : digits) {
    if (c < '0' || c > '9' || n > 100'000'000'000'000) return -1;  // not a number, or past any step count
    n = (n < 0 ? 0 : n) * 10 + (c - '0');
  }
  return n;
}

ir::RuntimeCallKind kind_of(std::string_view name) {
  if (name.ends_with("DeviceSynchronize")) return ir::RuntimeCallKind::device_sync;
  if (name.ends_with("StreamSynchronize")) return ir::RuntimeCallKind::stream_sync;
  if (name.ends_with("EventSynchronize")) return ir::RuntimeCallKind::event_sync;
  if (name.ends_with("EventRecord") || name.ends_with("EventRecordWithFlags"))
    return ir::RuntimeCallKind::event_record;
  if (name.ends_with("StreamWaitEvent")) return ir::RuntimeCallKind::stream_wait_event;
  return ir::RuntimeCallKind::other;
}

// Thread blocks resident on one SM at once for a kernel of `threads_per_block` threads, `registers`
// per thread and `shared_bytes` of shared memory per block, on the GPU `props` describes
// (deviceProperties): the tightest of the SM's threads, registers (allocated per warp in units of
// 256, the CUDA Occupancy Calculator's granularity) and shared memory, and the resident-block limit
// of its compute capability (CUDA C++ Programming Guide, "Features and Technical Specifications":
// 16 on 7.5, 8.6 and 8.7, 24 on 8.9, 32 on every other capability from 5.0 to 9.0). 0 when the
// trace does not give the SM's limits. At least 1: the kernel ran.
int32_t resident_blocks_per_sm(const Json& props, int64_t threads_per_block, int64_t registers,
                               int64_t shared_bytes) {
  auto get = [&](const char* key) -> int64_t {
    return props.contains(key) && props[key].is_number_integer() ? props[key].get<int64_t>() : 0;
  };
  const int64_t warp = get("warpSize");
  const int64_t threads_per_sm = get("maxThreadsPerMultiprocessor");
  const int64_t major = get("computeMajor");
  const int64_t minor = get("computeMinor");
  if (warp < 1 || threads_per_sm < 1 || major < 1 || threads_per_block < 1) return 0;
  const int64_t warps = (threads_per_block + warp - 1) / warp;
  const int64_t cc = major * 10 + minor;
  int64_t limit = cc == 75 || cc == 86 || cc == 87 ? 16 : cc == 89 ? 24 : 32;
  limit = std::min(limit, threads_per_sm / (warps * warp));
  if (const int64_t regs_per_sm = get("regsPerMultiprocessor"); registers > 0 && regs_per_sm > 0) {
    const int64_t per_warp = (registers * warp + 255) / 256 * 256;
    limit = std::min(limit, regs_per_sm / (per_warp * warps));
  }
  int64_t shared_per_sm = get("sharedMemPerMultiprocessor");
  if (shared_per_sm < 1) shared_per_sm = get("maxSharedMemoryPerMultiProcessor");
  if (shared_bytes > 0 && shared_per_sm > 0) limit = std::min(limit, shared_per_sm / shared_bytes);
  return static_cast<int32_t>(std::max<int64_t>(limit, 1));
}

}  // namespace

std::vector<int64_t> kineto_step_numbers(const nlohmann::json& doc, const std::string& source) {
  Reader reader(doc, source);
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (const Raw& s : reader.steps) steps.emplace_back(s.start_ns, step_number(s.name));
  std::sort(steps.begin(), steps.end());
  std::vector<int64_t> out;
  for (const auto& [t, n] : steps) out.push_back(n);
  return out;
}

ir::RuntimeTrace read_kineto_runtime(const nlohmann::json& doc, const std::string& source,
                                     std::optional<int64_t> step) {
  Reader reader(doc, source);
  ir::RuntimeTrace out;
  out.source = source;
  if (reader.calls.empty() && reader.gpu.empty())
    throw FormatError(fmt::format("{}: no CUDA runtime calls and no device work: nothing to replay", source));
  int64_t t0 = 0;
  int64_t t1 = 0;
  std::string main_thread;
  std::sort(reader.steps.begin(), reader.steps.end(),
            [](const Raw& a, const Raw& b) { return a.start_ns < b.start_ns; });
  if (!reader.steps.empty()) {
    // Each step once, and one after another on its thread: a repeated number replayed whichever came
    // last, and overlapping steps counted their work twice.
    std::map<int64_t, const Raw*> by_number;
    std::map<std::string, const Raw*> last_on_thread;
    for (const Raw& s : reader.steps) {
      if (const auto [it, first] = by_number.emplace(step_number(s.name), &s); !first) {
        throw FormatError(fmt::format("{}: events {} and {} are both '{}': each ProfilerStep once", source,
                                      it->second->index, s.index, s.name));
      }
      const Raw*& before = last_on_thread[s.thread];
      if (before != nullptr && s.start_ns < before->end_ns) {
        throw FormatError(
            fmt::format("{}: event {} ('{}') starts before event {} ('{}') ends on its thread: "
                        "ProfilerSteps follow one another",
                        source, s.index, s.name, before->index, before->name));
      }
      before = &s;
    }
    // By default the last complete step: the profiler's final annotation is often cut short, so
    // the last one at least half as long as the median step.
    std::vector<int64_t> lengths;
    for (const Raw& s : reader.steps) lengths.push_back(s.end_ns - s.start_ns);
    std::sort(lengths.begin(), lengths.end());
    const int64_t median = lengths[lengths.size() / 2];
    const Raw* chosen = &reader.steps.back();
    for (auto it = reader.steps.rbegin(); it != reader.steps.rend(); ++it) {
      if (2 * (it->end_ns - it->start_ns) >= median) {
        chosen = &*it;
        break;
      }
    }
    if (step) {
      chosen = nullptr;
      std::vector<int64_t> numbers;
      for (const Raw& s : reader.steps) {
        numbers.push_back(step_number(s.name));
        if (numbers.back() == *step) chosen = &s;
      }
      if (chosen == nullptr)
        throw Error(fmt::format("{}: no ProfilerStep#{}; the trace holds steps {}", source, *step,
                                fmt::join(numbers, ", ")));
    }
    // The window runs from the first step on the chosen one's thread: the steps before warm the
    // replay up.
    main_thread = chosen->thread;
    t1 = chosen->end_ns;
    t0 = chosen->start_ns;
    for (const Raw& s : reader.steps) {
      if (s.thread == main_thread && s.end_ns <= t1) t0 = std::min(t0, s.start_ns);
    }
    for (const Raw& s : reader.steps) {
      if (s.thread != main_thread || s.start_ns < t0 || s.end_ns > t1) continue;
      if (s.end_ns == s.start_ns)  // each step's error is relative to its length
        throw FormatError(
            fmt::format("{}: event {} ('{}'): field 'dur' = 0 us: a ProfilerStep of no length "
                        "cannot be replayed",
                        source, s.index, s.name));
      out.steps.push_back({s.name, s.start_ns - t0, s.end_ns - t0});
    }
    out.window = chosen->name;
    out.window_ns = chosen->end_ns - chosen->start_ns;
  } else {
    if (step)
      throw Error(
          fmt::format("{}: no ProfilerStep#{}; the trace has no ProfilerStep annotations", source, *step));
    out.annotated = false;
    out.window = "whole trace";
    t0 = INT64_MAX;
    t1 = INT64_MIN;
    std::map<std::string, int64_t> per_thread;
    for (const Raw& c : reader.calls) {
      t0 = std::min(t0, c.start_ns);
      t1 = std::max(t1, c.end_ns);
      ++per_thread[c.thread];
    }
    for (const Raw& g : reader.gpu) {
      t0 = std::min(t0, g.start_ns);
      t1 = std::max(t1, g.end_ns);
    }
    int64_t most = -1;
    for (const auto& [thread, n] : per_thread) {
      if (n > most) {
        most = n;
        main_thread = thread;
      }
    }
    if (t1 == t0)
      throw FormatError(
          fmt::format("{}: the trace's runtime calls and device work span 0 ns (no ProfilerStep): "
                      "nothing to replay",
                      source));
    out.window_ns = t1 - t0;
    out.steps.push_back({out.window, 0, t1 - t0});
  }

  // Calls in the window, by thread (the main thread first), each thread's in start order.
  std::vector<const Raw*> calls;
  for (const Raw& c : reader.calls) {
    if (c.start_ns >= t0 && c.start_ns < t1) calls.push_back(&c);
  }
  std::map<std::string, int32_t> thread_index;
  if (!main_thread.empty()) thread_index[main_thread] = 0;
  out.threads.push_back(main_thread);
  for (const Raw* c : calls) {
    if (thread_index.emplace(c->thread, static_cast<int32_t>(out.threads.size())).second)
      out.threads.push_back(c->thread);
  }
  std::stable_sort(calls.begin(), calls.end(), [&](const Raw* a, const Raw* b) {
    const int32_t ta = thread_index[a->thread];
    const int32_t tb = thread_index[b->thread];
    return ta != tb ? ta < tb : a->start_ns < b->start_ns;
  });
  std::map<int64_t, int32_t> call_of_correlation;
  std::vector<kineto::CallOrigin> origins;
  for (size_t k = 0; k < calls.size(); ++k) {
    const Raw& c = *calls[k];
    const int64_t corr = *reader.int_arg(c, "correlation");
    // Each runtime call has its own correlation; one nested in another of the same thread (a driver
    // call inside its runtime call) may share it.
    if (const auto seen = call_of_correlation.find(corr); seen != call_of_correlation.end()) {
      const Raw& o = *calls[static_cast<size_t>(seen->second)];
      const bool nested = (c.start_ns >= o.start_ns && c.end_ns <= o.end_ns) ||
                          (o.start_ns >= c.start_ns && o.end_ns <= c.end_ns);
      if (o.thread != c.thread || !nested)
        throw FormatError(
            fmt::format("{}: event {} ('{}'): field 'args.correlation' = {} is also event {}'s "
                        "('{}'): each runtime call has its own",
                        source, c.index, c.name, corr, o.index, o.name));
    }
    origins.push_back({c.index, corr});
    ir::RuntimeCall rc;
    rc.name = c.name;
    rc.kind = kind_of(c.name);
    rc.thread = thread_index[c.thread];
    rc.start_ns = c.start_ns - t0;
    rc.duration_ns = c.end_ns - c.start_ns;
    rc.blocking = c.name == "cudaMemcpy" || c.name == "hipMemcpy";
    call_of_correlation[corr] = static_cast<int32_t>(k);
    out.calls.push_back(std::move(rc));
  }
  // Device work launched in the window, or launched before it and still running in it.
  struct Item {
    const Raw* raw;
    int32_t call;
    int64_t stream;
  };
  std::vector<Item> items;
  std::map<int64_t, int64_t> launched_at;  // every call's start, by correlation
  for (const Raw& c : reader.calls) launched_at[*reader.int_arg(c, "correlation")] = c.start_ns;
  for (const Raw& g : reader.gpu) {
    const int64_t corr = *reader.int_arg(g, "correlation");
    const auto it = call_of_correlation.find(corr);
    const int64_t stream = reader.int_arg(g, "stream").value_or(-1);
    if (it != call_of_correlation.end()) {
      items.push_back({&g, it->second, stream});
    } else if (g.end_ns > t0 && g.start_ns < t1) {
      // Launched before the window (its call is earlier), running or queued in it: with a full
      // launch queue most of a step's work runs in the next step.
      const auto launched = launched_at.find(corr);
      if (launched == launched_at.end() || launched->second < t0) items.push_back({&g, -1, stream});
    }
  }
  for (const Item& it : items) {
    if (std::find(out.streams.begin(), out.streams.end(), it.stream) == out.streams.end())
      out.streams.push_back(it.stream);
  }
  std::sort(out.streams.begin(), out.streams.end());
  auto stream_index = [&](int64_t id) {
    return static_cast<int32_t>(std::find(out.streams.begin(), out.streams.end(), id) - out.streams.begin());
  };
  // Each stream's work in launch order (carried-in work first, by start).
  auto launch_ns = [&](const Item& it) {
    return it.call < 0 ? INT64_MIN : out.calls[static_cast<size_t>(it.call)].start_ns + t0;
  };
  std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    if (a.stream != b.stream) return stream_index(a.stream) < stream_index(b.stream);
    if (launch_ns(a) != launch_ns(b)) return launch_ns(a) < launch_ns(b);
    return a.raw->start_ns < b.raw->start_ns;
  });
  // The GPU most work ran on, by deviceProperties.
  std::map<int64_t, int64_t> per_device;
  for (const Item& it : items) ++per_device[reader.int_arg(*it.raw, "device").value_or(-1)];
  int64_t device = -1;
  int64_t most = -1;
  for (const auto& [d, n] : per_device) {
    if (n > most) {
      most = n;
      device = d;
    }
  }
  out.device = kineto::device_property_name(doc, device).value_or("");
  const Json* props = kineto::device_properties(doc, device);
  for (const Item& it : items) {
    ir::DeviceWork w;
    w.name = it.raw->name;
    w.stream = stream_index(it.stream);
    w.start_ns = it.raw->start_ns - t0;
    w.duration_ns = it.raw->end_ns - it.raw->start_ns;
    w.call = it.call;
    const std::string l = lower(w.name);
    w.collective = l.find("nccl") != std::string::npos || l.find("rccl") != std::string::npos;
    w.copy = it.raw->cat != "kernel";
    w.event = static_cast<int64_t>(it.raw->index);
    if (!w.copy) w.blocks = reader.dims_arg(*it.raw, "grid").value_or(0);
    // Its occupancy on the traced GPU, from its launch and the GPU's SM limits.
    if (const std::optional<int64_t> threads = reader.dims_arg(*it.raw, "block");
        threads && props && w.blocks > 0)
      w.resident_blocks_per_sm = resident_blocks_per_sm(
          *props, *threads, reader.int_arg(*it.raw, "registers per thread").value_or(0),
          reader.int_arg(*it.raw, "shared memory").value_or(0));
    if (it.call >= 0) {
      ir::RuntimeCall& c = out.calls[static_cast<size_t>(it.call)];
      c.kind = ir::RuntimeCallKind::launch;
      c.work.push_back(static_cast<int32_t>(out.work.size()));
      // A copy to or from pageable memory holds the host when the call returned only once the
      // copy had ended (a small host-to-device copy is staged and returns at once).
      if (w.copy && w.name.find("Pageable") != std::string::npos &&
          c.start_ns + c.duration_ns + kBlockingSlackNs >= w.start_ns + w.duration_ns)
        c.blocking = true;
    }
    out.work.push_back(std::move(w));
  }
  // Syncs and waits: which stream, which record (cuda_sync events).
  for (const Raw& s : reader.syncs) {
    const auto it = call_of_correlation.find(*reader.int_arg(s, "correlation"));
    if (it == call_of_correlation.end()) continue;
    ir::RuntimeCall& c = out.calls[static_cast<size_t>(it->second)];
    const int64_t stream = reader.int_arg(s, "stream").value_or(-1);
    const bool known_stream = std::find(out.streams.begin(), out.streams.end(), stream) != out.streams.end();
    if ((c.kind == ir::RuntimeCallKind::stream_sync || c.kind == ir::RuntimeCallKind::stream_wait_event) &&
        known_stream)
      c.stream = stream_index(stream);
    const int64_t record = reader.int_arg(s, "wait_on_cuda_event_record_corr_id").value_or(-1);
    const auto r = call_of_correlation.find(record);
    if ((c.kind == ir::RuntimeCallKind::event_sync || c.kind == ir::RuntimeCallKind::stream_wait_event) &&
        r != call_of_correlation.end()) {
      c.record = r->second;
      ir::RuntimeCall& rec = out.calls[static_cast<size_t>(r->second)];
      const int64_t on = reader.int_arg(s, "wait_on_stream").value_or(-1);
      if (rec.kind == ir::RuntimeCallKind::event_record &&
          std::find(out.streams.begin(), out.streams.end(), on) != out.streams.end())
        rec.stream = stream_index(on);
    }
  }
  kineto::check_runtime_window(out, origins, t0, per_device.size() == 1);
  // A window of nothing replays to 0 ns against 0 ns, a "+0.0 %" that says nothing.
  if (out.calls.empty() && out.work.empty()) {
    throw FormatError(fmt::format(
        "{}: the replayed window '{}' holds no CUDA runtime calls and no device work", source, out.window));
  }
  return out;
}

}  // namespace mutwo::io

#include "profiles/kineto_trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "profiles/error.hpp"
#include "profiles/graph.hpp"
#include "profiles/text_file.hpp"

namespace mutwo::profiles {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr std::string_view kOptimizerStepPrefix = "Optimizer.step#";
constexpr std::string_view kOptimizerZeroGradPrefix = "Optimizer.zero_grad#";
constexpr std::string_view kBackwardPrefix = "autograd::engine::evaluate_function:";

enum class Kind : uint8_t { cpu_op, step, launch, gpu, other };

// One "X" event the importer may use.
struct Event {
  size_t index = 0;  // position in traceEvents
  std::string name;
  Kind kind = Kind::other;
  size_t thread = 0;  // index into the distinct (pid, tid) pairs, in order of first appearance
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  const Json* args = nullptr;  // null when the event has none
};

struct MemoryEvent {
  size_t index = 0;
  size_t thread = 0;
  int64_t time_ns = 0;
  int64_t bytes = 0;  // > 0 allocation, < 0 free
  std::string addr;
  int64_t device_type = 0;
  int64_t device_id = -1;
  std::optional<int64_t> total_allocated;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Element sizes of PyTorch's scalar type names as "Input type" spells them; the DType where mutwo
// has one is not needed: bytes are all the importer keeps.
std::optional<int64_t> element_bytes(std::string_view type) {
  // clang-format off
  static const std::map<std::string_view, int64_t, std::less<>> kSizes{
      {"float", 4}, {"double", 8}, {"c10::Half", 2}, {"c10::BFloat16", 2}, {"long int", 8}, {"long", 8},
      {"int64_t", 8}, {"int", 4}, {"short int", 2}, {"short", 2}, {"signed char", 1}, {"unsigned char", 1},
      {"bool", 1}, {"c10::complex<c10::Half>", 4}, {"c10::complex<float>", 8}, {"c10::complex<double>", 16},
      {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1}, {"c10::Float8_e4m3fnuz", 1},
      {"c10::Float8_e5m2fnuz", 1}, {"c10::qint8", 1}, {"c10::quint8", 1}, {"c10::qint32", 4},
      {"c10::quint4x2", 1}};
  // clang-format on
  if (auto it = kSizes.find(type); it != kSizes.end()) return it->second;
  return std::nullopt;
}

// "Input type" values that are not tensors.
bool is_non_tensor_type(std::string_view type) {
  return type.empty() || type == "Scalar" || type == "ScalarList" || type == "None" ||
         type == "GenericList" || type == "TensorList";
}

// Parses and validates the events; every error names the source, event index, name and field.
class EventReader {
 public:
  explicit EventReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(size_t i, const Json& e, const std::string& what) const {
    std::string name;
    if (e.is_object() && e.contains("name") && e["name"].is_string()) name = e["name"].get<std::string>();
    throw FormatError(name.empty() ? fmt::format("{}: event {}: {}", source_, i, what)
                                   : fmt::format("{}: event {} ('{}'): {}", source_, i, name, what));
  }

  double number(size_t i, const Json& e, const char* field) const {
    if (!e.contains(field)) fail(i, e, fmt::format("field '{}' is missing", field));
    const Json& v = e[field];
    if (!v.is_number()) fail(i, e, fmt::format("field '{}' = {}, expected a number", field, v.dump()));
    const double d = v.get<double>();
    // |t| < 9e12 s keeps t * 1000 ns inside int64.
    if (!std::isfinite(d) || std::fabs(d) > 9e15) {
      fail(i, e, fmt::format("field '{}' = {} is out of range", field, v.dump()));
    }
    return d;
  }

  // An integer argument in "args"; nullopt when absent. Kineto writes them as JSON numbers.
  std::optional<int64_t> int_arg(size_t i, const Json& e, const Json* args, const char* key) const {
    if (args == nullptr || !args->contains(key)) return std::nullopt;
    const Json& v = (*args)[key];
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return -1;
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float() && std::isfinite(v.get<double>()) &&
        v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 9e18) {
      return static_cast<int64_t>(v.get<double>());
    }
    fail(i, e, fmt::format("field 'args.{}' = {}, expected an integer", key, v.dump()));
  }

  size_t thread_of(size_t i, const Json& e) {
    std::string key;
    for (const char* field : {"pid", "tid"}) {
      if (!e.contains(field)) fail(i, e, fmt::format("field '{}' is missing", field));
      const Json& v = e[field];
      if (!v.is_number() && !v.is_string()) {
        fail(i, e, fmt::format("field '{}' = {}, expected a number or a string", field, v.dump()));
      }
      key += v.dump() + "/";
    }
    auto [it, inserted] = threads_.try_emplace(key, threads_.size());
    return it->second;
  }

  const Json* args_of(size_t i, const Json& e) const {
    if (!e.contains("args")) return nullptr;
    if (!e["args"].is_object())
      fail(i, e, fmt::format("field 'args' = {}, expected an object", e["args"].dump()));
    return &e["args"];
  }

  void read(const Json& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      const Json& e = list[i];
      if (!e.is_object()) fail(i, e, fmt::format("expected an object, got {}", e.dump().substr(0, 60)));
      if (!e.contains("ph")) fail(i, e, "field 'ph' is missing");
      if (!e["ph"].is_string()) fail(i, e, fmt::format("field 'ph' = {}, expected a string", e["ph"].dump()));
      const std::string ph = e["ph"].get<std::string>();
      const bool named = e.contains("name");
      if (named && !e["name"].is_string()) {
        fail(i, e, fmt::format("field 'name' = {}, expected a string", e["name"].dump()));
      }
      if (named && e["name"].get<std::string>() == "[memory]") {
        read_memory(i, e);
      } else if (ph == "X") {
        read_complete(i, e);
      }
    }
  }

  std::vector<Event> events;
  std::vector<MemoryEvent> memory;
  double max_abs_ts_us = 0;
  bool whole_us = true;  // every "X" event's ts and dur are whole microseconds

 private:
  void read_complete(size_t i, const Json& e) {
    if (!e.contains("name")) fail(i, e, "field 'name' is missing");
    Event ev;
    ev.index = i;
    ev.name = e["name"].get<std::string>();
    const double ts = number(i, e, "ts");
    const double dur = number(i, e, "dur");
    if (dur < 0) fail(i, e, fmt::format("field 'dur' = {}, must be >= 0", e["dur"].dump()));
    max_abs_ts_us = std::max(max_abs_ts_us, std::fabs(ts) + dur);
    whole_us = whole_us && ts == std::floor(ts) && dur == std::floor(dur);
    ev.start_ns = static_cast<int64_t>(std::llround(ts * 1000.0));
    // Durations come from "dur" itself: at 1.7e15 us a timestamp's ulp is 0.25 us, dur's is far finer.
    ev.end_ns = ev.start_ns + static_cast<int64_t>(std::llround(dur * 1000.0));
    ev.thread = thread_of(i, e);
    ev.args = args_of(i, e);
    std::string cat;
    if (e.contains("cat")) {
      if (!e["cat"].is_string())
        fail(i, e, fmt::format("field 'cat' = {}, expected a string", e["cat"].dump()));
      cat = lower(e["cat"].get<std::string>());
    }
    const bool cpu_side = cat.empty() || cat == "cpu_op" || cat == "operator" || cat == "user_annotation";
    if (cpu_side && starts_with(ev.name, kStepPrefix)) {
      ev.kind = Kind::step;
    } else if (cat.empty() || cat == "cpu_op" || cat == "operator" ||
               (cat == "user_annotation" && (starts_with(ev.name, kOptimizerStepPrefix) ||
                                             starts_with(ev.name, kOptimizerZeroGradPrefix)))) {
      ev.kind = Kind::cpu_op;
    } else if ((cat.ends_with("runtime") || cat.ends_with("driver")) && ev.args &&
               ev.args->contains("correlation")) {
      ev.kind = Kind::launch;
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "memcpy" ||
               cat == "memset") {
      ev.kind = Kind::gpu;
    } else {
      return;
    }
    // Validate the integer arguments the importer reads, once, here.
    for (const char* key : {"External id", "correlation", "Sequence number", "Fwd thread id", "device"}) {
      (void)int_arg(i, e, ev.args, key);
    }
    if (ev.kind == Kind::gpu && !int_arg(i, e, ev.args, "correlation")) {
      fail(i, e, "field 'args.correlation' is missing (it links GPU work to its launch)");
    }
    events.push_back(std::move(ev));
  }

  void read_memory(size_t i, const Json& e) {
    MemoryEvent m;
    m.index = i;
    const double ts = number(i, e, "ts");
    max_abs_ts_us = std::max(max_abs_ts_us, std::fabs(ts));
    m.time_ns = static_cast<int64_t>(std::llround(ts * 1000.0));
    m.thread = thread_of(i, e);
    const Json* args = args_of(i, e);
    if (args == nullptr) fail(i, e, "field 'args' is missing");
    const auto bytes = int_arg(i, e, args, "Bytes");
    if (!bytes) fail(i, e, "field 'args.Bytes' is missing");
    m.bytes = *bytes;
    if (!args->contains("Addr")) fail(i, e, "field 'args.Addr' is missing");
    const Json& addr = (*args)["Addr"];
    if (!addr.is_number_integer() && !addr.is_string()) {
      fail(i, e, fmt::format("field 'args.Addr' = {}, expected an integer or a string", addr.dump()));
    }
    m.addr = addr.dump();
    m.device_type = int_arg(i, e, args, "Device Type").value_or(0);
    m.device_id = int_arg(i, e, args, "Device Id").value_or(-1);
    m.total_allocated = int_arg(i, e, args, "Total Allocated");
    memory.push_back(std::move(m));
  }

  std::string source_;
  std::map<std::string, size_t> threads_;
};

// One Graph op under construction.
struct Node {
  size_t event = 0;  // index into events
  Phase phase = Phase::forward;
  OpKind kind = OpKind::opaque;
  int64_t duration_ns = 0;
  OpId forward_of = kNoId;
  int64_t bytes_read = 0;
  std::string input_shapes;
  std::vector<std::pair<int64_t, int64_t>> scratch;  // (time, +/- bytes) of blocks freed where allocated
};

class Importer {
 public:
  Importer(const Json& events, std::string source) : source_(std::move(source)), reader_(source_) {
    reader_.read(events);
    ev_ = &reader_.events;
    // Timestamps are doubles in microseconds: at 1.7e15 us one ulp is 0.25 us, so nesting and
    // enclosure comparisons allow two ulps of slack (at least 1 ns).
    const double ulp_us = std::nextafter(reader_.max_abs_ts_us, INFINITY) - reader_.max_abs_ts_us;
    tol_ns_ = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(2 * ulp_us * 1000.0)));
    // Whole-microsecond traces (the legacy profiler, sampled traces) truncate start and duration
    // separately: a child may end up to 1 us after its parent.
    if (reader_.whole_us) tol_ns_ = std::max<int64_t>(tol_ns_, 1000);
  }

  TraceImport run(const Json& doc) {
    const bool legacy = doc.is_array();
    if (legacy) {
      warn(
          "a legacy trace (a PyTorch profiler without Kineto): it has no categories, no \"Input Dims\", no "
          "sequence numbers, no GPU kernels and no [memory] events");
    }
    nest();
    choose_step();
    build_nodes();
    measure_durations(doc);
    pair_backward();
    Graph g = build_graph();
    validate(g);
    TraceImport out;
    out.trace.graph = std::move(g);
    out.trace.device = device_;
    for (const Node& n : nodes_) out.trace.op_duration_ns.push_back(n.duration_ns);
    out.warnings = std::move(warnings_);
    return out;
  }

 private:
  const Event& ev(size_t i) const { return (*ev_)[i]; }
  void warn(const std::string& text) { warnings_.push_back(fmt::format("{}: {}", source_, text)); }
  [[noreturn]] void fail(const std::string& text) const {
    throw FormatError(fmt::format("{}: {}", source_, text));
  }

  std::optional<int64_t> arg(const Event& e, const char* key) const {
    if (e.args == nullptr || !e.args->contains(key)) return std::nullopt;
    const Json& v = (*e.args)[key];
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return -1;
    return v.is_number_integer() ? v.get<int64_t>()
                                 : static_cast<int64_t>(v.get<double>());  // checked on read
  }

  bool is_backward_event(const Event& e) const {
    return starts_with(e.name, kBackwardPrefix) || arg(e, "Fwd thread id").value_or(0) > 0;
  }

  // Parent links of CPU ops within each thread; roots_ per thread sorted by start.
  void nest() {
    std::map<size_t, std::vector<size_t>> by_thread;
    for (size_t i = 0; i < ev_->size(); ++i) {
      if (ev(i).kind == Kind::cpu_op) by_thread[ev(i).thread].push_back(i);
    }
    if (by_thread.empty()) fail("no CPU op events (\"X\" events of category cpu_op) to import");
    root_.assign(ev_->size(), SIZE_MAX);
    for (auto& [thread, list] : by_thread) {
      std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        if (ev(a).start_ns != ev(b).start_ns) return ev(a).start_ns < ev(b).start_ns;
        if (ev(a).end_ns != ev(b).end_ns) return ev(a).end_ns > ev(b).end_ns;
        return a < b;
      });
      std::vector<size_t> stack;
      for (size_t i : list) {
        while (!stack.empty() && ev(i).end_ns > ev(stack.back()).end_ns + tol_ns_) stack.pop_back();
        root_[i] = stack.empty() ? i : root_[stack.back()];
        if (stack.empty()) roots_by_thread_[thread].push_back(i);
        stack.push_back(i);
      }
    }
  }

  // The top-level CPU op of `thread` whose span holds time t, if any.
  std::optional<size_t> root_at(size_t thread, int64_t t) const {
    auto it = roots_by_thread_.find(thread);
    if (it == roots_by_thread_.end()) return std::nullopt;
    const auto& roots = it->second;
    auto pos = std::upper_bound(roots.begin(), roots.end(), t + tol_ns_,
                                [&](int64_t time, size_t r) { return time < ev(r).start_ns; });
    if (pos == roots.begin()) return std::nullopt;
    const size_t r = *std::prev(pos);
    if (t > ev(r).end_ns + tol_ns_) return std::nullopt;
    return r;
  }

  bool in_window(int64_t t) const { return t >= window_start_ - tol_ns_ && t <= window_end_ + tol_ns_; }

  void choose_step() {
    std::vector<size_t> steps;
    for (size_t i = 0; i < ev_->size(); ++i) {
      if (ev(i).kind == Kind::step) steps.push_back(i);
    }
    std::sort(steps.begin(), steps.end(),
              [&](size_t a, size_t b) { return ev(a).start_ns < ev(b).start_ns; });
    std::optional<size_t> complete, any;
    for (size_t s : steps) {
      window_start_ = ev(s).start_ns;
      window_end_ = ev(s).end_ns;
      bool has_op = false, has_backward = false;
      for (const auto& [thread, roots] : roots_by_thread_) {
        for (size_t r : roots) {
          if (!in_window(ev(r).start_ns)) continue;
          has_op = true;
          has_backward = has_backward || is_backward_event(ev(r));
        }
      }
      if (has_op) any = s;
      if (has_backward) complete = s;
    }
    if (complete || any) {
      const size_t s = complete ? *complete : *any;
      window_start_ = ev(s).start_ns;
      window_end_ = ev(s).end_ns;
      step_name_ = ev(s).name;
      warn(fmt::format("imported {} ({:.3f} ms), the last of {} ProfilerStep annotations {}", step_name_,
                       static_cast<double>(window_end_ - window_start_) / 1e6, steps.size(),
                       complete ? "that holds backward ops"
                                : "with CPU ops: none holds backward ops, so this step may be incomplete"));
      return;
    }
    window_start_ = std::numeric_limits<int64_t>::min() / 2;
    window_end_ = std::numeric_limits<int64_t>::max() / 2;
    step_name_ = "whole trace";
    warn(steps.empty()
             ? "no ProfilerStep#N annotation: the whole trace is imported as one step"
             : "no ProfilerStep#N annotation holds a CPU op: the whole trace is imported as one step");
  }

  void build_nodes() {
    std::vector<size_t> roots;
    for (const auto& [thread, list] : roots_by_thread_) {
      for (size_t r : list) {
        if (in_window(ev(r).start_ns)) roots.push_back(r);
      }
    }
    std::sort(roots.begin(), roots.end(), [&](size_t a, size_t b) {
      if (ev(a).start_ns != ev(b).start_ns) return ev(a).start_ns < ev(b).start_ns;
      if (ev(a).thread != ev(b).thread) return ev(a).thread < ev(b).thread;
      return a < b;
    });
    int64_t first_bwd = std::numeric_limits<int64_t>::max(), last_bwd = std::numeric_limits<int64_t>::min();
    for (size_t r : roots) {
      if (is_backward_event(ev(r))) {
        first_bwd = std::min(first_bwd, ev(r).start_ns);
        last_bwd = std::max(last_bwd, ev(r).end_ns);
      }
    }
    std::map<std::string, int> unknown_optimizers;
    int64_t list_inputs = 0;
    std::map<std::string, int> unknown_types;
    bool any_dims = false;
    for (size_t r : roots) {
      Node n;
      n.event = r;
      const Event& e = ev(r);
      op_of_root_[r] = static_cast<OpId>(nodes_.size());
      if (starts_with(e.name, kOptimizerStepPrefix)) {
        const std::string cls =
            e.name.substr(kOptimizerStepPrefix.size(),
                          e.name.find('.', kOptimizerStepPrefix.size()) - kOptimizerStepPrefix.size());
        const std::optional<OpKind> kind = cls == "SGD"     ? std::optional(OpKind::sgd_step)
                                           : cls == "Adam"  ? std::optional(OpKind::adam_step)
                                           : cls == "AdamW" ? std::optional(OpKind::adamw_step)
                                                            : std::nullopt;
        if (kind) {
          n.kind = *kind;
          n.phase = Phase::optimizer;
        } else {
          ++unknown_optimizers[cls];
        }
      } else if (is_backward_event(e) || (e.start_ns >= first_bwd && e.start_ns <= last_bwd)) {
        n.kind = OpKind::opaque_backward;
        n.phase = Phase::backward;
      }
      any_dims = read_input_dims(e, n, list_inputs, unknown_types) || any_dims;
      nodes_.push_back(std::move(n));
    }
    for (const auto& [cls, count] : unknown_optimizers) {
      warn(fmt::format(
          "optimizer '{}' has no mutwo kind: its {} step op(s) are imported as opaque forward ops", cls,
          count));
    }
    if (!any_dims) {
      warn(
          "no op has \"Input Dims\" (record_shapes=False or a legacy trace): input sizes are unknown, "
          "every op's bytes_read is 0");
    }
    if (list_inputs > 0) {
      warn(fmt::format("{} tensor-list inputs have no element type in \"Input type\": left out of bytes_read",
                       list_inputs));
    }
    if (!unknown_types.empty()) {
      std::string names;
      for (const auto& [type, count] : unknown_types)
        names += fmt::format("{}'{}' ({}x)", names.empty() ? "" : ", ", type, count);
      warn(fmt::format("inputs of unknown \"Input type\" are left out of bytes_read: {}", names));
    }
  }

  // bytes_read and the shapes string from "Input Dims" / "Input type"; false without them.
  bool read_input_dims(const Event& e, Node& n, int64_t& list_inputs,
                       std::map<std::string, int>& unknown) const {
    if (e.args == nullptr || !e.args->contains("Input Dims")) return false;
    const Json& dims = (*e.args)["Input Dims"];
    auto bad = [&](const std::string& what) {
      throw FormatError(fmt::format("{}: event {} ('{}'): {}", source_, e.index, e.name, what));
    };
    if (!dims.is_array()) bad(fmt::format("field 'args.Input Dims' = {}, expected a list", dims.dump()));
    if (!e.args->contains("Input type"))
      bad("field 'args.Input type' is missing (it gives 'Input Dims' their types)");
    const Json& types = (*e.args)["Input type"];
    if (!types.is_array() || types.size() != dims.size()) {
      bad(fmt::format("field 'args.Input type' = {}, expected a list of {} type names", types.dump(),
                      dims.size()));
    }
    for (size_t k = 0; k < dims.size(); ++k) {
      if (!types[k].is_string()) {
        bad(fmt::format("field 'args.Input type'[{}] = {}, expected a string", k, types[k].dump()));
      }
      const std::string type = types[k].get<std::string>();
      const std::optional<int64_t> size = element_bytes(type);
      if (!size) {
        if (type == "TensorList" && dims[k].is_array() && !dims[k].empty()) ++list_inputs;
        if (!is_non_tensor_type(type)) ++unknown[type];
        continue;
      }
      if (!dims[k].is_array())
        bad(fmt::format("field 'args.Input Dims'[{}] = {}, expected a list", k, dims[k].dump()));
      int64_t elements = 1;
      std::string shape;
      for (const Json& d : dims[k]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) {
          bad(fmt::format("field 'args.Input Dims'[{}] = {}, expected sizes >= 0", k, dims[k].dump()));
        }
        elements *= d.get<int64_t>();
        shape += fmt::format("{}{}", shape.empty() ? "" : ", ", d.get<int64_t>());
      }
      n.bytes_read += elements * *size;
      n.input_shapes += fmt::format("{}{}[{}]", n.input_shapes.empty() ? "" : ", ", type, shape);
    }
    return true;
  }

  void measure_durations(const Json& doc) {
    bool has_gpu = false;
    std::map<int64_t, size_t> launch_of;   // correlation -> launch event
    std::map<int64_t, size_t> cpu_of_ext;  // External id -> CPU op (SIZE_MAX when not unique)
    for (size_t i = 0; i < ev_->size(); ++i) {
      const Event& e = ev(i);
      if (e.kind == Kind::gpu) has_gpu = true;
      if (e.kind == Kind::launch) launch_of.try_emplace(*arg(e, "correlation"), i);
      if (e.kind == Kind::cpu_op) {
        if (auto ext = arg(e, "External id")) {
          auto [it, inserted] = cpu_of_ext.try_emplace(*ext, i);
          if (!inserted) it->second = SIZE_MAX;
        }
      }
    }
    if (!has_gpu) {
      for (Node& n : nodes_) n.duration_ns = ev(n.event).end_ns - ev(n.event).start_ns;
      device_ = "cpu";
      warn("no GPU kernels: op durations are the CPU time of each op (its children included)");
      return;
    }
    int64_t attributed = 0, outside_ops = 0, outside_ns = 0, no_launch = 0;
    std::map<int64_t, int64_t> device_count;
    for (size_t i = 0; i < ev_->size(); ++i) {
      const Event& g = ev(i);
      if (g.kind != Kind::gpu) continue;
      auto l = launch_of.find(*arg(g, "correlation"));
      if (l == launch_of.end()) {
        if (in_window(g.start_ns)) ++no_launch;
        continue;
      }
      const Event& launch = ev(l->second);
      if (!in_window(launch.start_ns)) continue;
      std::optional<size_t> root;
      if (auto ext = arg(launch, "External id")) {
        auto c = cpu_of_ext.find(*ext);
        if (c != cpu_of_ext.end() && c->second != SIZE_MAX && ev(c->second).thread == launch.thread &&
            launch.start_ns + tol_ns_ >= ev(c->second).start_ns &&
            launch.start_ns <= ev(c->second).end_ns + tol_ns_) {
          root = root_[c->second];
        }
      }
      if (!root) root = root_at(launch.thread, launch.start_ns);
      auto op = root ? op_of_root_.find(*root) : op_of_root_.end();
      if (op == op_of_root_.end()) {
        ++outside_ops;
        outside_ns += g.end_ns - g.start_ns;
        continue;
      }
      nodes_[static_cast<size_t>(op->second)].duration_ns += g.end_ns - g.start_ns;
      ++attributed;
      if (auto d = arg(g, "device")) ++device_count[*d];
    }
    int64_t idle = 0;
    for (const Node& n : nodes_) idle += n.duration_ns == 0 ? 1 : 0;
    warn(fmt::format(
        "op durations are GPU time: the summed durations of the {} kernels, memcpys and memsets "
        "each op launched; {} of {} ops launched none and get 0 ns (CPU-side time is not modelled)",
        attributed, idle, nodes_.size()));
    if (outside_ops > 0) {
      warn(
          fmt::format("{} GPU events ({:.3f} ms) were launched in the step outside every imported op and are "
                      "not counted",
                      outside_ops, static_cast<double>(outside_ns) / 1e6));
    }
    if (no_launch > 0) {
      warn(fmt::format(
          "{} GPU events in the step have no launch event with their correlation id and are not counted",
          no_launch));
    }
    gpu_device_ = -1;
    int64_t best = 0;
    for (const auto& [d, count] : device_count) {
      if (count > best) best = count, gpu_device_ = d;
    }
    device_ = device_name(doc);
  }

  std::string device_name(const Json& doc) {
    if (doc.is_object() && doc.contains("deviceProperties") && doc["deviceProperties"].is_array()) {
      for (const Json& p : doc["deviceProperties"]) {
        if (p.is_object() && p.contains("id") && p["id"].is_number_integer() &&
            p["id"].get<int64_t>() == gpu_device_ && p.contains("name") && p["name"].is_string()) {
          return p["name"].get<std::string>();
        }
      }
    }
    warn(fmt::format(
        "the trace carries no deviceProperties name for GPU {}: the trace's device is left unnamed",
        gpu_device_));
    return "";
  }

  void pair_backward() {
    // Sequence number -> forward CPU events (any depth) inside forward graph ops, by start.
    std::map<int64_t, std::vector<size_t>> forward_by_seq;
    for (size_t i = 0; i < ev_->size(); ++i) {
      const Event& e = ev(i);
      if (e.kind != Kind::cpu_op || root_[i] == SIZE_MAX || arg(e, "Fwd thread id").value_or(0) > 0) continue;
      const auto seq = arg(e, "Sequence number");
      auto op = op_of_root_.find(root_[i]);
      if (!seq || *seq < 0 || op == op_of_root_.end()) continue;
      if (nodes_[static_cast<size_t>(op->second)].phase != Phase::forward) continue;
      forward_by_seq[*seq].push_back(i);
    }
    int64_t backward = 0, paired = 0, no_number = 0, unmatched = 0, ambiguous = 0;
    for (size_t k = 0; k < nodes_.size(); ++k) {
      Node& n = nodes_[k];
      if (n.phase != Phase::backward) continue;
      ++backward;
      const auto seq = arg(ev(n.event), "Sequence number");
      if (!seq || *seq < 0) {
        ++no_number;
        continue;
      }
      auto it = forward_by_seq.find(*seq);
      std::optional<size_t> best;
      bool several_threads = false;
      if (it != forward_by_seq.end()) {
        for (size_t f : it->second) {
          if (ev(f).start_ns >= ev(n.event).start_ns) continue;
          if (best && ev(*best).thread != ev(f).thread) several_threads = true;
          if (!best || ev(f).start_ns >= ev(*best).start_ns) best = f;
        }
      }
      const OpId op = best ? op_of_root_.at(root_[*best]) : kNoId;
      if (several_threads) {
        ++ambiguous;
      } else if (op == kNoId || op >= static_cast<OpId>(k)) {
        ++unmatched;
      } else {
        n.forward_of = op;
        ++paired;
      }
    }
    if (backward == 0) {
      warn("no backward ops in the imported step");
      return;
    }
    warn(fmt::format(
        "{} of {} backward ops paired to their forward op by \"Sequence number\" (forward_of); "
        "{} have no sequence number (AccumulateGrad, legacy traces), {} have no forward op with it "
        "in the step, {} are ambiguous (the number on several threads)",
        paired, backward, no_number, unmatched, ambiguous));
  }

  // Graph op for a memory event: the op enclosing it on its thread, else the next op (allocation)
  // or the previous op (free).
  OpId op_for_memory(const MemoryEvent& m, bool allocation) const {
    if (auto r = root_at(m.thread, m.time_ns)) {
      if (auto op = op_of_root_.find(*r); op != op_of_root_.end()) return op->second;
    }
    const auto n = static_cast<OpId>(nodes_.size());
    OpId last_before = 0;
    for (OpId k = 0; k < n; ++k) {
      if (ev(nodes_[static_cast<size_t>(k)].event).start_ns <= m.time_ns) {
        last_before = k;
      } else if (allocation) {
        return k;
      }
    }
    return allocation ? n - 1 : last_before;
  }

  Graph build_graph() {
    Graph g;
    g.name = fmt::format("{} {}", source_, step_name_);
    auto add_tensor = [&](std::string name, int64_t bytes, TensorRole role) {
      return add_byte_tensor(g, std::move(name), bytes, role);
    };
    for (size_t k = 0; k < nodes_.size(); ++k) {
      const Node& n = nodes_[k];
      Op op;
      op.id = static_cast<OpId>(k);
      op.name = ev(n.event).name;
      op.kind = n.kind;
      op.phase = n.phase;
      op.forward_of = n.forward_of;
      op.bytes_read = n.bytes_read;
      op.attrs["source_op"] = op.name;
      op.attrs["trace_event"] = static_cast<int64_t>(ev(n.event).index);
      if (!n.input_shapes.empty()) op.attrs["input_shapes"] = n.input_shapes;
      if (k > 0) op.inputs.push_back(g.ops.back().outputs.front());
      op.outputs.push_back(
          add_tensor(fmt::format("op{}/order", k), 0,
                     n.phase == Phase::forward ? TensorRole::activation : TensorRole::temporary));
      g.ops.push_back(std::move(op));
    }
    add_memory(g, add_tensor);
    for (Op& op : g.ops) {
      for (TensorId t : op.outputs) op.bytes_written += g.tensor(t).bytes;
    }
    link(g);
    return g;
  }

  template <typename AddTensor>
  void add_memory(Graph& g, AddTensor& add_tensor) {
    const bool gpu = device_ != "cpu";
    std::vector<const MemoryEvent*> used;
    int64_t other_device = 0;
    for (const MemoryEvent& m : reader_.memory) {
      if (!in_window(m.time_ns) || m.bytes == 0) continue;
      const bool match =
          gpu ? m.device_type != 0 && (gpu_device_ < 0 || m.device_id == gpu_device_) : m.device_type == 0;
      if (match) {
        used.push_back(&m);
      } else {
        ++other_device;
      }
    }
    if (used.empty()) {
      warn(fmt::format(
          "no [memory] events{} in the step (profile_memory=False, or a legacy trace): tensor sizes "
          "and memory use are unknown; the graph's tensors are 0-byte order links, so a simulated "
          "peak is 0",
          reader_.memory.empty() ? "" : fmt::format(" of the {} device", gpu ? "GPU" : "CPU")));
      warn(
          "the trace has no dataflow edges: each op reads a 0-byte order tensor from the op before it, so "
          "a replay keeps the trace's start order (ops that overlapped on different threads run one after "
          "another)");
      return;
    }
    std::stable_sort(used.begin(), used.end(),
                     [](const MemoryEvent* a, const MemoryEvent* b) { return a->time_ns < b->time_ns; });
    struct Open {
      int64_t bytes;
      OpId op;
      int64_t time_ns;
    };
    std::map<std::string, Open> open;
    int64_t blocks = 0, workspace_blocks = 0, pre_step = 0, pre_step_bytes = 0, outliving = 0, reused = 0;
    auto role_of = [&](OpId op) {
      return g.ops[static_cast<size_t>(op)].phase == Phase::forward ? TensorRole::activation
                                                                    : TensorRole::temporary;
    };
    auto close = [&](const std::string& addr, const Open& o, OpId freed_by, int64_t time_ns) {
      if (freed_by <= o.op) {
        nodes_[static_cast<size_t>(o.op)].scratch.emplace_back(o.time_ns, o.bytes);
        nodes_[static_cast<size_t>(o.op)].scratch.emplace_back(time_ns, -o.bytes);
        ++workspace_blocks;
        return;
      }
      const TensorId t = add_tensor(fmt::format("op{}/block@{}", o.op, addr), o.bytes, role_of(o.op));
      g.ops[static_cast<size_t>(o.op)].outputs.push_back(t);
      g.ops[static_cast<size_t>(freed_by)].inputs.push_back(t);
      ++blocks;
    };
    for (const MemoryEvent* m : used) {
      if (m->bytes > 0) {
        const OpId op = op_for_memory(*m, true);
        if (auto it = open.find(m->addr); it != open.end()) {  // its free is missing from the trace
          close(m->addr, it->second, op, m->time_ns);
          open.erase(it);
          ++reused;
        }
        open[m->addr] = Open{m->bytes, op, m->time_ns};
        continue;
      }
      const OpId op = op_for_memory(*m, false);
      if (auto it = open.find(m->addr); it != open.end()) {
        close(m->addr, it->second, op, m->time_ns);
        open.erase(it);
      } else {
        const TensorId t =
            add_tensor(fmt::format("pre-step block@{}", m->addr), -m->bytes, TensorRole::input);
        g.ops[static_cast<size_t>(op)].inputs.push_back(t);
        ++pre_step;
        pre_step_bytes += -m->bytes;
      }
    }
    const auto last = static_cast<OpId>(g.ops.size() - 1);
    for (const auto& [addr, o] : open) {
      if (o.op == last) {
        const TensorId t = add_tensor(fmt::format("op{}/block@{}", o.op, addr), o.bytes, role_of(o.op));
        g.ops[static_cast<size_t>(o.op)].outputs.push_back(t);
      } else {
        close(addr, o, last, window_end_);
      }
      ++outliving;
    }
    for (size_t k = 0; k < nodes_.size(); ++k) {
      auto& s = nodes_[k].scratch;
      std::stable_sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      int64_t live = 0, peak = 0;
      for (const auto& [time, delta] : s) peak = std::max(peak, live += delta);
      g.ops[k].workspace_bytes = peak;
    }
    std::string resident =
        "\"Total Allocated\" is absent, so memory resident before the step is not represented";
    if (const MemoryEvent* first = used.front(); first->total_allocated) {
      const int64_t before = *first->total_allocated - first->bytes - pre_step_bytes;
      if (before > 0) {
        add_tensor("resident before the step", before, TensorRole::weight);
        resident = fmt::format(
            "{} B resident before the step and not freed in it (\"Total Allocated\") are one "
            "weight tensor",
            before);
      } else {
        resident = "nothing stays resident from before the step (\"Total Allocated\")";
      }
    }
    warn(fmt::format(
        "{} [memory] events of the {} device{} give the tensors: {} blocks link the op that "
        "allocated them to the op that freed them, {} freed where allocated are workspace, {} "
        "freed but allocated before the step are inputs, {} outlive the step (read by the last op), "
        "{} were re-allocated without a free; {}",
        used.size(), gpu ? "GPU" : "CPU",
        other_device > 0 ? fmt::format(" ({} of other devices ignored)", other_device) : "", blocks,
        workspace_blocks, pre_step, outliving, reused, resident));
    warn(
        "the trace has no dataflow edges: besides the memory blocks, each op reads a 0-byte order tensor "
        "from the op before it, so a replay keeps the trace's start order (ops that overlapped on different "
        "threads run one after another)");
  }

  std::string source_;
  EventReader reader_;
  const std::vector<Event>* ev_ = nullptr;
  int64_t tol_ns_ = 1;
  std::vector<size_t> root_;                               // per event: its top-level CPU op (cpu ops only)
  std::map<size_t, std::vector<size_t>> roots_by_thread_;  // top-level CPU ops by start
  std::map<size_t, OpId> op_of_root_;                      // top-level event -> graph op
  int64_t window_start_ = 0;
  int64_t window_end_ = 0;
  std::string step_name_;
  std::vector<Node> nodes_;
  std::string device_;
  int64_t gpu_device_ = -1;
  std::vector<std::string> warnings_;
};

}  // namespace

bool is_kineto_document(const nlohmann::json& doc) {
  if (doc.is_object()) return doc.contains("traceEvents") && doc["traceEvents"].is_array();
  return doc.is_array() && !doc.empty() && doc.front().is_object() && doc.front().contains("ph") &&
         doc.front()["ph"].is_string();
}

TraceImport import_kineto_trace(const nlohmann::json& doc, const std::string& source_name) {
  if (!is_kineto_document(doc)) {
    throw FormatError(
        fmt::format("{}: not a PyTorch profiler trace: expected an object with a \"traceEvents\" "
                    "list or a list of Chrome-trace events",
                    source_name));
  }
  const Json& events = doc.is_array() ? doc : doc["traceEvents"];
  if (events.empty())
    throw FormatError(fmt::format("{}: field 'traceEvents' is empty: no events to import", source_name));
  Importer importer(events, source_name);
  return importer.run(doc);
}

TraceImport read_kineto_trace(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw FormatError(fmt::format("{}: invalid JSON at byte {}: {}", path.string(), e.byte, e.what()));
  }
  return import_kineto_trace(doc, path.filename().string());
}

}  // namespace mutwo::profiles

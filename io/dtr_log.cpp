#include "io/dtr_log.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/graph.hpp"
#include "support/error.hpp"

namespace mutwo::io {
namespace {

using Json = nlohmann::json;

// One line of the log, parsed: its JSON object and where it came from.
struct Line {
  Json json;
  std::string instruction;
  int32_t number = 0;  // 1-based
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  DtrLog parse(const DtrParseOptions& options) {
    read_lines();
    size_t next = 0;
    if (options.skip_to_start) {
      while (next < lines_.size() && !is_start(lines_[next])) ++next;
      if (next == lines_.size()) {
        throw FormatError(
            fmt::format("{}: no ANNOTATE START line (DTR logs start their measured iteration with "
                        "{{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}}; replay from line 1 "
                        "with --no-start)",
                        source_));
      }
      log_.start_line = lines_[next].number;
      ++next;
    }
    log_.counts.lines = static_cast<int32_t>(lines_.size() - next);
    while (next < lines_.size()) next = instruction(next);
    pin_held_tensors();
    return std::move(log_);
  }

 private:
  // simrd parses every line before it starts (parse.py: parse_file), so a bad line anywhere,
  // before START too, rejects the log.
  void read_lines() {
    size_t pos = 0;
    int32_t number = 0;
    while (pos < text_.size()) {
      size_t end = text_.find('\n', pos);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view raw = text_.substr(pos, end - pos);
      pos = end + 1;
      ++number;
      while (!raw.empty() && (raw.back() == '\r' || raw.back() == ' ' || raw.back() == '\t'))
        raw.remove_suffix(1);
      if (static_cast<int64_t>(raw.size()) > kMaxDtrLineBytes) {
        throw FormatError(fmt::format("{}:{}: a line of {} bytes, more than the {} a DTR log line may have",
                                      source_, number, raw.size(), kMaxDtrLineBytes));
      }
      Line line;
      line.number = number;
      try {
        line.json = Json::parse(raw);
      } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number past double's range
        throw FormatError(fmt::format("{}:{}: not a JSON object ({})", source_, number,
                                      raw.empty() ? std::string("empty line") : std::string(e.what())));
      }
      if (!line.json.is_object()) throw FormatError(fmt::format("{}:{}: not a JSON object", source_, number));
      const auto it = line.json.find("INSTRUCTION");
      if (it == line.json.end() || !it->is_string()) {
        throw FormatError(fmt::format("{}:{}: field 'INSTRUCTION' missing or not a string", source_, number));
      }
      line.instruction = it->get<std::string>();
      static const char* const kKnown[] = {"CONSTANT", "MEMORY",   "COPY",      "RELEASE", "CALL",
                                           "MUTATE",   "ANNOTATE", "COPY_FROM", "ALIAS"};
      bool known = false;
      for (const char* k : kKnown) known = known || line.instruction == k;
      if (!known) {
        throw FormatError(
            fmt::format("{}:{}: unknown INSTRUCTION '{}' (simrd knows CONSTANT, MEMORY, ALIAS, CALL, "
                        "MUTATE, COPY, COPY_FROM, RELEASE, ANNOTATE)",
                        source_, number, line.instruction));
      }
      lines_.push_back(std::move(line));
    }
  }

  static bool is_start(const Line& line) {
    if (line.instruction != "ANNOTATE") return false;
    const auto it = line.json.find("ANNOTATION");
    return it != line.json.end() && it->is_string() && it->get<std::string>() == "START";
  }

  [[noreturn]] void fail(const Line& line, const std::string& what) const {
    throw FormatError(fmt::format("{}:{}: {} {}", source_, line.number, line.instruction, what));
  }

  const Json& field(const Line& line, const char* key) const {
    const auto it = line.json.find(key);
    if (it == line.json.end()) fail(line, fmt::format("has no field '{}'", key));
    return *it;
  }

  std::string string_field(const Line& line, const char* key) const {
    const Json& j = field(line, key);
    if (!j.is_string()) fail(line, fmt::format("field '{}' = {} is not a string", key, j.dump()));
    return j.get<std::string>();
  }

  // MEMORY, TIME and ALIAS are integers written as JSON strings (simrd applies int()); a plain
  // JSON integer is accepted too.
  int64_t integer_field(const Line& line, const char* key, int64_t min_value,
                        int64_t max_value = std::numeric_limits<int64_t>::max()) const {
    const Json& j = field(line, key);
    auto out_of_range = [&] {
      fail(line, fmt::format("field '{}' = {} is out of range (must be {} ... {})", key, j.dump(), min_value,
                             max_value));
    };
    int64_t value = 0;
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      out_of_range();
    } else if (j.is_number_integer()) {
      value = j.get<int64_t>();
    } else if (j.is_number_float() && std::isfinite(j.get<double>()) &&
               j.get<double>() == std::trunc(j.get<double>()) && std::fabs(j.get<double>()) >= 0x1p63) {
      out_of_range();  // a JSON integer past 64 bits, which the JSON parser held as a double
    } else if (j.is_string()) {
      const std::string& s = j.get_ref<const std::string&>();
      const char* first = s.data();
      const char* last = s.data() + s.size();
      if (first != last && *first == '+') ++first;
      const auto [end, ec] = std::from_chars(first, last, value);
      if (ec == std::errc::result_out_of_range && end == last) out_of_range();
      if (ec != std::errc() || end != last || s.empty()) {
        fail(line, fmt::format("field '{}' = {} is not an integer", key, j.dump()));
      }
    } else {
      fail(line, fmt::format("field '{}' = {} is not an integer string", key, j.dump()));
    }
    if (value < min_value) fail(line, fmt::format("field '{}' = {} must be >= {}", key, value, min_value));
    if (value > max_value) fail(line, fmt::format("field '{}' = {} must be <= {}", key, value, max_value));
    return value;
  }

  std::vector<std::string> name_list(const Line& line, const char* key) const {
    const Json& j = field(line, key);
    if (!j.is_array()) fail(line, fmt::format("field '{}' = {} is not a list of names", key, j.dump()));
    std::vector<std::string> names;
    for (const Json& e : j) {
      if (!e.is_string()) fail(line, fmt::format("field '{}' holds {}, not a name", key, e.dump()));
      names.push_back(e.get<std::string>());
    }
    return names;
  }

  int32_t bound(const Line& line, const std::string& name, const char* key) const {
    const auto it = handles_.find(name);
    if (it == handles_.end()) fail(line, fmt::format("field '{}' names '{}', which is not bound", key, name));
    return it->second;
  }

  void bind(const std::string& name, int32_t tensor) {
    const auto [it, fresh] = handles_.try_emplace(name, tensor);
    if (fresh) {
      binding_order_.push_back(name);
    } else {
      it->second = tensor;  // rebinding keeps the first-binding position (a Python dict)
    }
  }

  int32_t add_tensor(std::string name, int32_t op, int32_t index, int64_t storage_bytes, const Line& line) {
    if (!tensor_names_.emplace(name, static_cast<int32_t>(log_.tensors.size())).second) {
      fail(line,
           fmt::format("would create tensor '{}' a second time (simrd asserts unique tensor names)", name));
    }
    log_.tensors.push_back(DtrTensor{std::move(name), op, index, storage_bytes});
    refs_.push_back(1);
    return static_cast<int32_t>(log_.tensors.size() - 1);
  }

  // A new op and its outputs. Output sizes and aliases are already final.
  int32_t add_op(DtrOp op, const std::vector<std::string>& output_names, const Line& line) {
    const auto id = static_cast<int32_t>(log_.ops.size());
    op.name += fmt::format("/{}", id);
    op.first_output = static_cast<int32_t>(log_.tensors.size());
    op.backward = in_backward_;
    op.line = line.number;
    for (size_t i = 0; i < output_names.size(); ++i) {
      const int32_t a = op.aliases[i];
      const int64_t storage =
          a >= 0 ? log_.tensors[static_cast<size_t>(op.args[static_cast<size_t>(a)])].storage_bytes
                 : op.sizes_bytes[i];
      add_tensor(output_names[i], id, static_cast<int32_t>(i), storage, line);
    }
    // Every op's time and every tensor's bytes added up stay within int64 (the replay's clock and peaks).
    int64_t bytes = 0;
    for (int64_t b : op.sizes_bytes) bytes += b;  // each <= 1 PiB, a handful per op
    if (__builtin_add_overflow(total_ns_, op.time_ns, &total_ns_) ||
        __builtin_add_overflow(total_bytes_, bytes, &total_bytes_)) {
      fail(line, "takes the log's total time (ns) or memory (bytes) past 64-bit integers");
    }
    log_.ops.push_back(std::move(op));
    log_.commands.push_back({DtrCommandKind::compute, id});
    return id;
  }

  const Line& next_line(size_t& next, const Line& owner, const char* expected) const {
    if (next >= lines_.size())
      fail(owner, fmt::format("is not followed by its {} line (end of log)", expected));
    return lines_[next++];
  }

  size_t instruction(size_t index) {
    const Line& line = lines_[index];
    size_t next = index + 1;
    const std::string& in = line.instruction;
    if (in == "CONSTANT") {
      const std::string name = string_field(line, "NAME");
      const Line& memory = next_line(next, line, "MEMORY");
      if (memory.instruction != "MEMORY" || string_field(memory, "NAME") != name) {
        fail(line, fmt::format("'{}' must be followed by MEMORY of the same NAME, got line {} ({})", name,
                               memory.number, memory.instruction));
      }
      if (handles_.count(name) != 0) fail(line, fmt::format("binds '{}', which is already bound", name));
      DtrOp op;
      op.name = "constant";
      op.origin = DtrOpOrigin::constant;
      op.sizes_bytes = {integer_field(memory, "MEMORY", 0, ir::kMaxTensorBytes)};
      op.aliases = {-1};
      const int32_t id = add_op(std::move(op), {name}, line);
      const int32_t t = log_.ops[static_cast<size_t>(id)].first_output;
      log_.commands.push_back({DtrCommandKind::pin, t});
      bind(name, t);
      ++log_.counts.constants;
    } else if (in == "CALL") {
      const std::string op_name = string_field(line, "NAME");
      const std::vector<std::string> results = name_list(line, "RESULT");
      const std::vector<std::string> arg_names = name_list(line, "ARGS");
      const int64_t time = integer_field(line, "TIME", 0, ir::kMaxOpNs);
      if (results.empty()) fail(line, "has an empty RESULT list (simrd cannot parse a CALL without results)");
      in_backward_ = in_backward_ || op_name.find("backward") != std::string::npos;
      DtrOp op;
      op.name = op_name;
      op.origin = DtrOpOrigin::call;
      op.time_ns = time;
      for (const std::string& a : arg_names) op.args.push_back(bound(line, a, "ARGS"));
      for (const std::string& r : results) {
        const Line& memory = next_line(next, line, "MEMORY");
        const Line& alias = next_line(next, line, "ALIAS");
        if (memory.instruction != "MEMORY" || string_field(memory, "NAME") != r) {
          fail(line,
               fmt::format("result '{}' must be followed by MEMORY then ALIAS of that name; line {} is {}", r,
                           memory.number, memory.instruction));
        }
        if (alias.instruction != "ALIAS" || string_field(alias, "NAME") != r) {
          fail(line,
               fmt::format("result '{}' must be followed by MEMORY then ALIAS of that name; line {} is {}", r,
                           alias.number, alias.instruction));
        }
        const int64_t a = integer_field(alias, "ALIAS", -1);
        if (a >= static_cast<int64_t>(op.args.size())) {
          fail(alias, fmt::format("field 'ALIAS' = {} but the CALL on line {} has {} ARGS", a, line.number,
                                  op.args.size()));
        }
        const int64_t bytes = integer_field(memory, "MEMORY", 0, ir::kMaxTensorBytes);
        op.aliases.push_back(static_cast<int32_t>(a));
        op.sizes_bytes.push_back(a == -1 ? bytes : 0);  // an alias's MEMORY is its base's: ignored
        if (a != -1) ++log_.counts.alias_outputs;
        if (handles_.count(r) != 0) fail(line, fmt::format("result '{}' is already bound", r));
      }
      const int32_t id = add_op(std::move(op), results, line);
      for (size_t i = 0; i < results.size(); ++i) {
        bind(results[i], log_.ops[static_cast<size_t>(id)].first_output + static_cast<int32_t>(i));
      }
      ++log_.counts.calls;
    } else if (in == "MUTATE") {
      const std::string op_name = string_field(line, "NAME");
      const std::vector<std::string> arg_names = name_list(line, "ARGS");
      const int64_t time = integer_field(line, "TIME", 0, ir::kMaxOpNs);
      const Json& mutate = field(line, "MUTATE");
      if (!mutate.is_array())
        fail(line, fmt::format("field 'MUTATE' = {} is not a list of indices", mutate.dump()));
      in_backward_ = in_backward_ || op_name.find("backward") != std::string::npos;
      DtrOp op;
      op.name = op_name;
      op.origin = DtrOpOrigin::mutate;
      op.time_ns = time;
      for (const std::string& a : arg_names) op.args.push_back(bound(line, a, "ARGS"));
      std::vector<size_t> mutated;
      std::vector<std::string> out_names;
      for (const Json& m : mutate) {
        if (!m.is_number_integer() || m.get<int64_t>() < 0 ||
            m.get<int64_t>() >= static_cast<int64_t>(op.args.size())) {
          fail(line, fmt::format("field 'MUTATE' holds {}, not an index into its {} ARGS", m.dump(),
                                 op.args.size()));
        }
        const auto k = static_cast<size_t>(m.get<int64_t>());
        const DtrTensor& old = log_.tensors[static_cast<size_t>(op.args[k])];
        mutated.push_back(k);
        op.sizes_bytes.push_back(old.storage_bytes);  // the whole storage, even of a view
        op.aliases.push_back(-1);
        out_names.push_back(old.name + "$");
      }
      if (mutated.empty()) fail(line, "has an empty MUTATE list");
      const std::vector<int32_t> args = op.args;
      const int32_t id = add_op(std::move(op), out_names, line);
      for (size_t i = 0; i < mutated.size(); ++i) {
        const int32_t old = args[mutated[i]];
        bind(arg_names[mutated[i]], log_.ops[static_cast<size_t>(id)].first_output + static_cast<int32_t>(i));
        --refs_[static_cast<size_t>(old)];
        log_.commands.push_back({DtrCommandKind::release, old});
      }
      ++log_.counts.mutates;
    } else if (in == "COPY") {
      const std::string dst = string_field(line, "DST");
      const int32_t src = bound(line, string_field(line, "SRC"), "SRC");
      if (handles_.count(dst) != 0)
        fail(line, fmt::format("field 'DST' names '{}', which is already bound", dst));
      bind(dst, src);
      ++refs_[static_cast<size_t>(src)];
      log_.commands.push_back({DtrCommandKind::get, src});
      ++log_.counts.copies;
    } else if (in == "COPY_FROM") {
      const std::string dst = string_field(line, "DST");
      const int32_t old = bound(line, dst, "DST");
      const int32_t src = bound(line, string_field(line, "SRC"), "SRC");
      bind(dst, src);
      --refs_[static_cast<size_t>(old)];
      ++refs_[static_cast<size_t>(src)];
      log_.commands.push_back({DtrCommandKind::release, old});
      log_.commands.push_back({DtrCommandKind::get, src});
      ++log_.counts.copy_froms;
    } else if (in == "RELEASE") {
      const std::string name = string_field(line, "NAME");
      const auto it = handles_.find(name);
      if (it == handles_.end()) {
        ++log_.counts.releases_ignored;  // simrd: ignore_undefined_release
      } else {
        --refs_[static_cast<size_t>(it->second)];
        log_.commands.push_back({DtrCommandKind::release, it->second});
        ++log_.counts.releases;
      }
    } else if (in == "ANNOTATE") {
      const std::string annotation = string_field(line, "ANNOTATION");
      if (annotation == "BACKWARD") in_backward_ = true;  // others (START again, ...) are ignored
    } else {                                              // MEMORY or ALIAS out of place
      fail(line, "is only valid right after a CONSTANT (MEMORY) or inside a CALL's result block");
    }
    return next;
  }

  // simrd (out_cond=REMATERIALIZE): every name whose tensor still has handles gets a pin, in
  // first-binding order; repeated pins of one tensor are no-ops.
  void pin_held_tensors() {
    std::vector<bool> counted(log_.tensors.size(), false);
    for (const std::string& name : binding_order_) {
      const int32_t t = handles_.at(name);
      if (refs_[static_cast<size_t>(t)] <= 0) continue;
      log_.commands.push_back({DtrCommandKind::pin, t});
      if (!counted[static_cast<size_t>(t)]) ++log_.counts.pinned_at_end;
      counted[static_cast<size_t>(t)] = true;
    }
  }

  std::string_view text_;
  std::string_view source_;
  std::vector<Line> lines_;
  DtrLog log_;
  std::unordered_map<std::string, int32_t> handles_;       // name -> tensor
  std::vector<std::string> binding_order_;                 // names in first-binding order
  std::unordered_map<std::string, int32_t> tensor_names_;  // tensor name -> tensor
  std::vector<int32_t> refs_;                              // simrd's _ref per tensor
  bool in_backward_ = false;
  int64_t total_ns_ = 0;     // every op's TIME so far
  int64_t total_bytes_ = 0;  // every output's MEMORY so far
};

}  // namespace

int64_t DtrOp::total_size_bytes() const {
  int64_t total = 0;
  for (int64_t s : sizes_bytes) total += s;
  return total;
}

int64_t DtrLog::compute_ns() const {
  int64_t total = 0;
  for (const DtrOp& op : ops) total += op.time_ns;
  return total;
}

DtrLog parse_dtr_log(std::string_view text, std::string_view source, const DtrParseOptions& options) {
  return Parser(text, source).parse(options);
}

TraceImport dtr_log_to_trace(const DtrLog& log, const std::string& source_name) {
  TraceImport out;
  ir::Graph& g = out.trace.graph;
  g.name = source_name;
  std::vector<ir::TensorId> tensor_of(log.tensors.size(), ir::kNoId);
  auto add_tensor = [&](size_t t, int64_t bytes, ir::TensorRole role) {
    tensor_of[t] = ir::add_byte_tensor(g, log.tensors[t].name, bytes, role);
  };
  int32_t views = 0;
  int32_t mutates = 0;
  for (const DtrOp& dop : log.ops) {
    if (dop.origin == DtrOpOrigin::constant) {
      add_tensor(static_cast<size_t>(dop.first_output), dop.sizes_bytes[0], ir::TensorRole::input);
      continue;
    }
    if (dop.origin == DtrOpOrigin::mutate) ++mutates;
    ir::Op op;
    op.id = static_cast<ir::OpId>(g.ops.size());
    op.name = dop.name;
    op.kind = dop.backward ? ir::OpKind::opaque_backward : ir::OpKind::opaque;
    op.phase = dop.backward ? ir::Phase::backward : ir::Phase::forward;
    op.recomputable = !dop.backward;
    op.attrs["source_op"] = dop.name.substr(0, dop.name.rfind('/'));
    op.attrs["log_line"] = int64_t{dop.line};
    for (int32_t a : dop.args) {
      const ir::TensorId t = tensor_of[static_cast<size_t>(a)];
      if (std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end()) continue;
      op.inputs.push_back(t);
      op.bytes_read += g.tensors[static_cast<size_t>(t)].bytes;
    }
    for (int32_t i = 0; i < dop.output_count(); ++i) {
      const int64_t bytes = dop.sizes_bytes[static_cast<size_t>(i)];
      if (dop.aliases[static_cast<size_t>(i)] >= 0) ++views;
      add_tensor(static_cast<size_t>(dop.first_output + i), bytes,
                 dop.backward ? ir::TensorRole::temporary : ir::TensorRole::activation);
      op.outputs.push_back(static_cast<ir::TensorId>(g.tensors.size() - 1));
      op.bytes_written += bytes;
    }
    out.trace.op_duration_ns.push_back(dop.time_ns);
    g.ops.push_back(std::move(op));
  }
  ir::link(g);
  ir::validate(g);
  out.warnings.push_back(
      fmt::format("{}: DTR logs do not name the GPU their times were measured on (the DTR paper's logs come "
                  "from a Titan V)",
                  source_name));
  out.warnings.push_back(
      fmt::format("{}: {} constants (parameters, inputs) are step inputs resident from the start; tensors "
                  "live from their "
                  "op to their last reader, not by the log's handles (COPY/RELEASE)",
                  source_name, log.counts.constants));
  if (views > 0) {
    out.warnings.push_back(
        fmt::format("{}: {} view outputs share their base's storage in the log; mutwo's graph has no storage "
                    "sharing, so they "
                    "are 0-byte tensors and do not keep their base alive (`mutwo replay --dtr-log` keeps "
                    "simrd's semantics)",
                    source_name, views));
  }
  if (mutates > 0) {
    out.warnings.push_back(
        fmt::format("{}: {} in-place ops (MUTATE) are out-of-place ops writing a fresh copy of the mutated "
                    "storage, as simrd "
                    "models them",
                    source_name, mutates));
  }
  return out;
}

bool looks_like_dtr_log(std::string_view text) {
  const size_t end = text.find('\n');
  if (static_cast<int64_t>(std::min(end, text.size())) > kMaxDtrLineBytes) {
    const std::string_view head = text.substr(0, 4096);
    return head.starts_with('{') && head.find("\"INSTRUCTION\"") != std::string_view::npos;
  }
  try {
    const Json first = Json::parse(text.substr(0, end));
    return first.is_object() && first.contains("INSTRUCTION");
  } catch (const Json::exception&) {  // not JSON (or a number past double's range): not a DTR log
    return false;
  }
}

}  // namespace mutwo::io

#include "costmodel/measured_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/graph.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

namespace mutwo::costmodel {
namespace {

using Buffer = fmt::memory_buffer;

void append_quoted(Buffer& out, std::string_view text) {
  out.push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

// Doubles as hex floats: exact, and the same text for the same bits on every platform.
void append_number(Buffer& out, int64_t value) {
  fmt::format_to(std::back_inserter(out), "{}", value);
}
void append_number(Buffer& out, double value) {
  fmt::format_to(std::back_inserter(out), "{:a}", value);
}

void append_attr(Buffer& out, const ir::AttrValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          append_quoted(out, v);
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
          append_number(out, v);
        } else {  // a list; an empty one reads the same whatever its element type (JSON cannot tell)
          out.push_back('[');
          for (size_t i = 0; i < v.size(); ++i) {
            if (i > 0) out.push_back(',');
            append_number(out, v[i]);
          }
          out.push_back(']');
        }
      },
      value);
}

void append_tensors(Buffer& out, const ir::Graph& graph, const std::vector<ir::TensorId>& ids) {
  out.push_back('(');
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out.push_back(',');
    const ir::Tensor& t = graph.tensor(ids[i]);
    fmt::format_to(std::back_inserter(out), "{}[", ir::dtype_name(t.dtype));
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (d > 0) out.push_back(',');
      append_number(out, t.shape[d]);
    }
    out.push_back(']');
  }
  out.push_back(')');
}

}  // namespace

std::string op_signature(const ir::Graph& graph, const ir::Op& op) {
  Buffer out;
  fmt::format_to(std::back_inserter(out), "{}|{}|w{}|{{", ir::kind_name(op.kind), ir::phase_name(op.phase),
                 op.width);
  bool first = true;
  for (const auto& [key, value] : op.attrs) {
    if (!first) out.push_back(';');
    first = false;
    append_quoted(out, key);
    out.push_back('=');
    append_attr(out, value);
  }
  out.append(std::string_view("}|"));
  append_tensors(out, graph, op.inputs);
  out.append(std::string_view("->"));
  append_tensors(out, graph, op.outputs);
  return fmt::to_string(out);
}

void validate_measured_trace(const ir::Trace& trace) {
  const size_t ops = trace.graph.ops.size();
  if (trace.op_duration_ns.empty()) {
    throw Error(fmt::format(
        "trace '{}': field 'op_duration_ns' is empty: the trace has no measured durations (write one "
        "with `mutwo profile`)",
        trace.graph.name));
  }
  if (trace.op_duration_ns.size() != ops) {
    throw Error(fmt::format("trace '{}': field 'op_duration_ns' has {} values for {} ops", trace.graph.name,
                            trace.op_duration_ns.size(), ops));
  }
  for (size_t i = 0; i < ops; ++i) {
    if (trace.op_duration_ns[i] < 0) {
      throw Error(fmt::format("trace '{}': field 'op_duration_ns'[{}] (op '{}') = {} must be >= 0",
                              trace.graph.name, i, trace.graph.ops[i].name, trace.op_duration_ns[i]));
    }
    if (trace.op_duration_ns[i] > ir::kMaxOpNs ||
        (i < trace.op_host_ns.size() && (trace.op_host_ns[i] > ir::kMaxOpNs || trace.op_host_ns[i] < 0))) {
      throw Error(fmt::format("trace '{}': op {} '{}': field 'op_duration_ns' = {} or 'op_host_ns' = {} is outside "
                              "[0, 1000 s]",
                              trace.graph.name, i, trace.graph.ops[i].name, trace.op_duration_ns[i],
                              i < trace.op_host_ns.size() ? trace.op_host_ns[i] : 0));
    }
  }
}

MeasuredCostModel::MeasuredCostModel(const std::vector<ir::Trace>& traces,
                                     std::unique_ptr<OpCostModel> fallback)
    : fallback_(std::move(fallback)) {
  if (!fallback_) throw Error("measured cost model: no fallback cost model given");
  if (traces.empty()) throw Error("measured cost model: no measured traces given");
  std::map<std::string, std::vector<int64_t>, std::less<>> samples;
  std::map<std::string, std::vector<int64_t>, std::less<>> host_samples;
  for (const ir::Trace& trace : traces) {
    validate_measured_trace(trace);
    traces_.push_back({trace.graph.name, trace.device, static_cast<int64_t>(trace.graph.ops.size())});
    for (size_t i = 0; i < trace.graph.ops.size(); ++i) {
      const std::string signature = op_signature(trace.graph, trace.graph.ops[i]);
      samples[signature].push_back(trace.op_duration_ns[i]);
      if (i < trace.op_host_ns.size()) host_samples[signature].push_back(trace.op_host_ns[i]);
    }
  }
  for (auto& [signature, values] : samples)
    median_ns_.emplace_hint(median_ns_.end(), signature,
                            support::median(std::move(values), support::EvenMedian::lower_middle));
  for (auto& [signature, values] : host_samples)
    median_host_ns_.emplace_hint(median_host_ns_.end(), signature,
                                 support::median(std::move(values), support::EvenMedian::lower_middle));
}

std::optional<int64_t> MeasuredCostModel::measured_duration_ns(const ir::Graph& graph,
                                                               const ir::Op& op) const {
  const auto it = median_ns_.find(op_signature(graph, op));
  if (it == median_ns_.end()) return std::nullopt;
  return it->second;
}

std::optional<double> MeasuredCostModel::scale_factor(const ir::Graph& graph, const ir::Op& op) const {
  if (!scaling_) return std::nullopt;
  const std::optional<int64_t> from = scaling_->from->calibrated_duration_ns(graph, op);
  const std::optional<int64_t> to = scaling_->to->calibrated_duration_ns(graph, op);
  if (!from || !to || *from <= 0) return std::nullopt;
  return static_cast<double>(*to) / static_cast<double>(*from);
}

int64_t MeasuredCostModel::op_duration_ns(const ir::Graph& graph, const ir::Op& op) const {
  if (const std::optional<int64_t> measured = measured_duration_ns(graph, op)) {
    if (const std::optional<double> factor = scale_factor(graph, op)) {
      return whole_price_ns(std::round(static_cast<double>(*measured) * *factor), name(), &op);
    }
    return *measured;
  }
  return fallback_->op_duration_ns(graph, op);
}

int64_t MeasuredCostModel::op_host_ns(const ir::Graph& graph, const ir::Op& op, HostIssuer issuer) const {
  if (!median_host_ns_.empty()) {
    if (const auto it = median_host_ns_.find(op_signature(graph, op)); it != median_host_ns_.end()) return it->second;
  }
  return fallback_->op_host_ns(graph, op, issuer);
}

MeasuredCoverage measured_coverage(const MeasuredCostModel& model, const ir::Graph& graph) {
  MeasuredCoverage coverage;
  coverage.ops = static_cast<int64_t>(graph.ops.size());
  for (const ir::Op& op : graph.ops) {
    if (model.measured_duration_ns(graph, op)) ++coverage.measured_ops;
  }
  return coverage;
}

std::string MeasuredCostModel::describe(const ir::Graph& graph) const {
  const MeasuredCoverage coverage = measured_coverage(*this, graph);
  std::vector<std::string> devices;
  for (const MeasuredTraceSummary& t : traces_) {
    const std::string d = t.device.empty() ? std::string("an unnamed device") : t.device;
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  std::string rest;
  if (scaling_) {
    int64_t scaled = 0;
    for (const ir::Op& op : graph.ops) {
      if (measured_duration_ns(graph, op) && scale_factor(graph, op)) ++scaled;
    }
    rest = fmt::format("; scaled from {} to {} by calibrated profiles: {} of {} measured ops, {} unscaled",
                       scaling_->from->device().name, scaling_->to->device().name, scaled, coverage.measured_ops,
                       coverage.measured_ops - scaled);
  }
  if (coverage.measured_ops < coverage.ops) rest += fmt::format("; rest {}", fallback_->name());
  return fmt::format("{} ({} of {} ops from {} trace{} on {}{})", name(), coverage.measured_ops, coverage.ops,
                     traces_.size(), traces_.size() == 1 ? "" : "s", fmt::join(devices, ", "), rest);
}

}  // namespace mutwo::costmodel

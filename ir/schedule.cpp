#include "ir/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "support/checked_int.hpp"

namespace mutwo::ir {

namespace {

constexpr std::array<std::string_view, 5> kInstrKindNames = {"compute", "recompute", "swap_out", "swap_in",
                                                             "free"};

}  // namespace

std::string_view instr_kind_name(InstrKind kind) {
  return kInstrKindNames.at(static_cast<size_t>(kind));
}

InstrKind parse_instr_kind(std::string_view name) {
  for (size_t i = 0; i < kInstrKindNames.size(); ++i) {
    if (kInstrKindNames[i] == name) return static_cast<InstrKind>(i);
  }
  throw UnknownNameError(
      fmt::format("unknown instruction kind '{}'; valid: compute, recompute, swap_out, swap_in, "
                  "free",
                  name));
}

Graph concat_graphs(const std::vector<Graph>& parts, std::vector<SubArray>* sub_arrays) {
  if (parts.empty()) throw GraphError("concat_graphs: no sub-array graphs given");
  Graph out;
  out.batch_size = parts.front().batch_size;
  out.precision = parts.front().precision;  // one precision mode per step (the cost model reads it)
  for (const Graph& part : parts) {
    if (part.precision != out.precision) {
      throw GraphError(fmt::format(
          "concat_graphs: sub-array '{}' has precision {}, '{}' has {}; one step trains "
          "in one precision mode",
          part.name, precision_name(part.precision), parts.front().name, precision_name(out.precision)));
    }
  }
  std::vector<SubArray> ranges;
  const bool prefix = parts.size() > 1;
  for (size_t p = 0; p < parts.size(); ++p) {
    const Graph& part = parts[p];
    const std::string pre = prefix ? fmt::format("s{}/", p) : std::string();
    const auto tensor_base = static_cast<TensorId>(out.tensors.size());
    const auto op_base = static_cast<OpId>(out.ops.size());
    out.name += (p == 0 ? "" : " + ") + part.name;
    out.width = std::max(out.width, part.width);
    for (const Tensor& t : part.tensors) {
      Tensor copy = t;
      copy.id += tensor_base;
      copy.name = pre + t.name;
      out.tensors.push_back(std::move(copy));
    }
    for (const Op& op : part.ops) {
      Op copy = op;
      copy.id += op_base;
      copy.name = pre + op.name;
      for (TensorId& id : copy.inputs) id += tensor_base;
      for (TensorId& id : copy.outputs) id += tensor_base;
      if (copy.forward_of != kNoId) copy.forward_of += op_base;
      out.ops.push_back(std::move(copy));
    }
    SubArray range;
    range.name = part.name;
    range.width = part.width;
    range.first_op = op_base;
    range.end_op = static_cast<OpId>(out.ops.size());
    range.batch_size = part.batch_size;
    ranges.push_back(std::move(range));
  }
  link(out);
  validate(out);
  if (sub_arrays) *sub_arrays = std::move(ranges);
  return out;
}

std::string describe_instruction(const Schedule& schedule, InstrId id) {
  const Instruction& in = schedule.instructions.at(static_cast<size_t>(id));
  if (runs_op(in.kind)) {
    return fmt::format("{} op {} '{}'", instr_kind_name(in.kind), in.op, schedule.graph.op(in.op).name);
  }
  return fmt::format("{} tensor {} '{}'", instr_kind_name(in.kind), in.tensor,
                     schedule.graph.tensor(in.tensor).name);
}

int64_t samples_per_step(const Schedule& schedule) {
  // Both factors come from a schedule file: an overflow is an error, not a wrapped count.
  constexpr std::string_view kWhat = "schedule: samples per step (width x batch_size)";
  if (schedule.sub_arrays.empty())
    return support::checked_product({schedule.graph.width, schedule.graph.batch_size}, kWhat);
  int64_t samples = 0;
  for (const SubArray& s : schedule.sub_arrays)
    samples = support::checked_sum(samples, support::checked_product({s.width, s.batch_size}, kWhat), kWhat);
  return samples;
}

}  // namespace mutwo::ir

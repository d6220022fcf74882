#include "sim/replay_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "costmodel/host_optimizer.hpp"

namespace mutwo::sim {

using ir::InstrId;
using ir::InstrKind;
using ir::Instruction;
using ir::kNoId;
using ir::Schedule;
using ir::TensorId;

void check_references(const Schedule& s) {
  const auto n_ops = static_cast<int64_t>(s.graph.ops.size());
  const auto n_tensors = static_cast<int64_t>(s.graph.tensors.size());
  for (size_t i = 0; i < s.instructions.size(); ++i) {
    const Instruction& in = s.instructions[i];
    auto fail = [&](const std::string& what) {
      throw ir::ScheduleError(fmt::format("instruction {} ({}): {}", i, ir::instr_kind_name(in.kind), what));
    };
    if (in.id != static_cast<InstrId>(i)) fail(fmt::format("field 'id' = {}, expected {}", in.id, i));
    if (in.stream < 0) fail(fmt::format("field 'stream' = {} is negative", in.stream));
    if (ir::runs_op(in.kind)) {
      if (in.op < 0 || in.op >= n_ops)
        fail(fmt::format("field 'op' = {} out of range [0, {})", in.op, n_ops));
    } else if (in.tensor < 0 || in.tensor >= n_tensors) {
      fail(fmt::format("field 'tensor' = {} out of range [0, {})", in.tensor, n_tensors));
    }
    for (InstrId w : in.waits) {
      if (w < 0 || w >= in.id) fail(fmt::format("field 'waits' holds {}, not an earlier instruction", w));
    }
  }
}

ReplayPlan make_replay_plan(const Schedule& s, const costmodel::OpCostModel& model, bool half_duplex) {
  const ir::Graph& g = s.graph;
  const costmodel::DeviceSpec& device = model.device();
  const size_t n = s.instructions.size();
  ReplayPlan p;
  p.host_stream = s.host_stream;
  for (const Instruction& in : s.instructions) p.num_streams = std::max(p.num_streams, in.stream + 1);
  const auto streams = static_cast<size_t>(p.num_streams);
  p.engine_of_stream.resize(streams);
  for (int32_t st = 0; st < p.num_streams; ++st) p.engine_of_stream[static_cast<size_t>(st)] = st;
  if (half_duplex) p.engine_of_stream[ir::kHostToDeviceStream] = ir::kDeviceToHostStream;

  p.kind.resize(n);
  p.stream.resize(n);
  p.target.resize(n);
  p.duration_ns.resize(n);
  p.op_ns.assign(g.ops.size(), -1);
  p.pending.resize(n);
  std::vector<int32_t> deps_begin(n + 1);
  std::vector<InstrId> deps;
  deps.reserve(3 * n);
  // A column per stream in use, in id order: stream ids may be sparse (a trace's, or a hand-edited
  // schedule's up to ir::kMaxStreamId), and a column per id cost tensors x ids.
  std::vector<size_t> column(streams, 0);
  size_t columns = 0;
  {
    std::vector<bool> used(streams, false);
    for (const Instruction& in : s.instructions) used[static_cast<size_t>(in.stream)] = true;
    for (size_t st = 0; st < streams; ++st) column[st] = used[st] ? columns++ : 0;
  }
  std::vector<InstrId> last_touch(g.tensors.size() * columns, kNoId);  // [tensor][column]
  std::vector<InstrId> last_on_stream(streams, kNoId);

  for (size_t idx = 0; idx < n; ++idx) {
    const Instruction& in = s.instructions[idx];
    const auto i = static_cast<InstrId>(idx);
    const auto st = static_cast<size_t>(in.stream);
    const size_t col = column[st];
    deps_begin[idx] = static_cast<int32_t>(deps.size());
    p.kind[idx] = in.kind;
    p.stream[idx] = in.stream;
    const InstrId prev = last_on_stream[st];
    if (prev != kNoId) deps.push_back(prev);
    last_on_stream[st] = i;
    deps.insert(deps.end(), in.waits.begin(), in.waits.end());
    switch (in.kind) {
      case InstrKind::compute:
      case InstrKind::recompute: {
        const ir::Op& op = g.ops[static_cast<size_t>(in.op)];
        if (ir::runs_on_host(s, in)) {  // reads and writes host copies: no device tensor touched
          p.target[idx] = in.op;
          p.duration_ns[idx] = costmodel::host_optimizer_ns(device, op);
          break;
        }
        int64_t& price = p.op_ns[static_cast<size_t>(in.op)];
        if (price < 0) price = model.op_duration_ns(g, op);
        const int64_t d = price;
        if (d < 0) {
          throw Error(fmt::format("cost model '{}' gives op {} '{}' a negative duration {} ns", model.name(),
                                  op.id, op.name, d));
        }
        p.target[idx] = in.op;
        p.duration_ns[idx] = d;
        for (TensorId t : op.inputs) last_touch[static_cast<size_t>(t) * columns + col] = i;
        for (TensorId t : op.outputs) last_touch[static_cast<size_t>(t) * columns + col] = i;
        break;
      }
      case InstrKind::swap_out:
      case InstrKind::swap_in: {
        const auto dir = in.kind == InstrKind::swap_out ? costmodel::CopyDirection::device_to_host
                                                        : costmodel::CopyDirection::host_to_device;
        p.target[idx] = in.tensor;
        p.duration_ns[idx] =
            costmodel::transfer_duration_ns(device, g.tensors[static_cast<size_t>(in.tensor)].bytes, dir);
        last_touch[static_cast<size_t>(in.tensor) * columns + col] = i;
        break;
      }
      case InstrKind::free: {
        p.target[idx] = in.tensor;
        p.duration_ns[idx] = 0;
        InstrId* touched = &last_touch[static_cast<size_t>(in.tensor) * columns];
        for (size_t k = 0; k < columns; ++k) {
          if (touched[k] != kNoId && touched[k] != prev) deps.push_back(touched[k]);
          touched[k] = kNoId;
        }
        break;
      }
    }
    p.pending[idx] = static_cast<int32_t>(deps.size()) - deps_begin[idx];
  }
  deps_begin[n] = static_cast<int32_t>(deps.size());

  // Transpose deps (by target) into dependents (by source), each list ascending.
  p.dependents_begin.assign(n + 1, 0);
  for (InstrId from : deps) ++p.dependents_begin[static_cast<size_t>(from) + 1];
  for (size_t k = 0; k < n; ++k) p.dependents_begin[k + 1] += p.dependents_begin[k];
  std::vector<int32_t> cursor(p.dependents_begin.begin() + 1, p.dependents_begin.end());  // ends
  p.dependents.resize(deps.size());
  for (size_t idx = n; idx-- > 0;) {
    for (int32_t k = deps_begin[idx]; k < deps_begin[idx + 1]; ++k) {
      const auto from = static_cast<size_t>(deps[static_cast<size_t>(k)]);
      p.dependents[static_cast<size_t>(--cursor[from])] = static_cast<InstrId>(idx);
    }
  }
  return p;
}

}  // namespace mutwo::sim

#include "policies/trace_replay.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ir/schedule_check.hpp"
#include "policies/plain_schedule.hpp"
#include "support/error.hpp"

namespace mutwo::policies {
namespace {

using ir::Graph;
using ir::InstrId;
using ir::InstrKind;
using ir::Instruction;
using ir::kNoId;
using ir::Op;
using ir::OpId;
using ir::StreamWork;
using ir::TensorId;
using ir::Trace;

void check_host_side(const Trace& trace) {
  const size_t ops = trace.graph.ops.size();
  auto wrong = [&](const char* field, size_t count) {
    throw Error(
        fmt::format("trace '{}': field '{}' has {} entries for {} ops", trace.graph.name, field, count, ops));
  };
  if (trace.op_streams.size() != ops) wrong("op_streams", trace.op_streams.size());
  if (trace.op_duration_ns.size() != ops) wrong("op_duration_ns", trace.op_duration_ns.size());
  if (!trace.op_host_ns.empty() && trace.op_host_ns.size() != ops)
    wrong("op_host_ns", trace.op_host_ns.size());
}

// Traced stream id -> mutwo stream id (the header's rule).
std::map<int64_t, int32_t> map_streams(const Trace& trace) {
  struct Usage {
    int64_t parts = 0;
    int64_t duration_ns = 0;
    size_t first = 0;
  };
  std::map<int64_t, Usage> usage;
  std::vector<int64_t> first_use;
  for (const std::vector<StreamWork>& parts : trace.op_streams) {
    for (const StreamWork& w : parts) {
      auto [it, inserted] = usage.try_emplace(w.stream, Usage{0, 0, first_use.size()});
      if (inserted) first_use.push_back(w.stream);
      ++it->second.parts;
      it->second.duration_ns += w.duration_ns;
    }
  }
  std::map<int64_t, int32_t> to_stream;
  if (usage.empty()) return to_stream;
  auto main = std::max_element(usage.begin(), usage.end(), [](const auto& a, const auto& b) {
    if (a.second.parts != b.second.parts) return a.second.parts < b.second.parts;
    if (a.second.duration_ns != b.second.duration_ns) return a.second.duration_ns < b.second.duration_ns;
    return a.second.first > b.second.first;
  });
  int32_t next = ir::kFirstExtraComputeStream;
  for (int64_t s : first_use) to_stream[s] = s == main->first ? ir::kComputeStream : next++;
  return to_stream;
}

}  // namespace

TraceReplay build_trace_replay(const Trace& trace) {
  TraceReplay out;
  out.trace = trace;
  if (trace.op_streams.empty()) {
    out.schedule = build_plain_schedule({trace.graph});
    return out;
  }
  check_host_side(trace);
  const std::map<int64_t, int32_t> to_stream = map_streams(trace);
  Graph& g = out.trace.graph;
  const size_t traced_ops = g.ops.size();
  const bool has_host = !trace.op_host_ns.empty();
  std::vector<int32_t> stream_of(traced_ops, ir::kComputeStream);
  std::vector<int64_t> duration_ns = trace.op_duration_ns;
  std::vector<int64_t> host_ns = has_host ? trace.op_host_ns : std::vector<int64_t>(traced_ops, 0);
  std::vector<std::vector<OpId>> issued_before(traced_ops);
  std::vector<OpId> sync_after(traced_ops, kNoId);
  // A copy of op k without tensors, appended to the graph (a part or a device sync).
  auto append_copy = [&](size_t k, std::string name, int32_t stream, int64_t duration, int64_t host) {
    Op copy = g.ops[k];
    copy.id = static_cast<OpId>(g.ops.size());
    copy.name = std::move(name);
    copy.inputs.clear();
    copy.outputs.clear();
    // A piece of the op's time, reading and making nothing: an op of a known kind (a mutwo trace's
    // linear) would be refused for its lack of inputs, naming an op the trace never had.
    copy.kind = copy.phase == ir::Phase::backward    ? ir::OpKind::opaque_backward
                : copy.phase == ir::Phase::optimizer ? ir::OpKind::opaque_optimizer
                                                     : ir::OpKind::opaque;
    copy.attrs.erase("host_sync");
    copy.attrs.erase("device_sync");
    copy.bytes_read = 0;
    copy.bytes_written = 0;
    copy.workspace_bytes = 0;
    g.ops.push_back(std::move(copy));
    stream_of.push_back(stream);
    duration_ns.push_back(duration);
    host_ns.push_back(host);
    return static_cast<OpId>(g.ops.size() - 1);
  };
  for (size_t k = 0; k < traced_ops; ++k) {
    if (g.ops[k].attrs.contains("device_sync")) {
      const OpId sync = append_copy(k, g.ops[k].name + " [device sync]", ir::kComputeStream, 0, 0);
      g.ops[static_cast<size_t>(sync)].attrs["host_sync"] = int64_t{1};
      g.ops[static_cast<size_t>(sync)].attrs["device_sync"] = int64_t{1};
      g.ops[k].attrs.erase("host_sync");
      g.ops[k].attrs.erase("device_sync");
      sync_after[k] = sync;
    }
    const std::vector<StreamWork>& parts = trace.op_streams[k];
    if (parts.empty()) continue;
    stream_of[k] = to_stream.at(parts.back().stream);
    duration_ns[k] = parts.back().duration_ns;
    host_ns[k] = parts.back().host_ns;
    for (size_t p = 0; p + 1 < parts.size(); ++p) {
      const OpId part = append_copy(k, fmt::format("{} [stream {}]", g.ops[k].name, parts[p].stream),
                                    to_stream.at(parts[p].stream), parts[p].duration_ns, parts[p].host_ns);
      g.ops[static_cast<size_t>(part)].attrs["trace_stream"] = parts[p].stream;
      issued_before[k].push_back(part);
    }
  }
  // A 0-byte tensor carries nothing: a read of one made on another stream orders nothing.
  for (Op& op : g.ops) {
    std::erase_if(op.inputs, [&](TensorId t) {
      const ir::Tensor& tensor = g.tensor(t);
      return tensor.bytes == 0 && tensor.producer != kNoId &&
             stream_of[static_cast<size_t>(tensor.producer)] != stream_of[static_cast<size_t>(op.id)];
    });
  }
  ir::link(g);
  ir::validate(g);
  out.trace.op_duration_ns = std::move(duration_ns);
  out.trace.op_host_ns = has_host ? std::move(host_ns) : std::vector<int64_t>{};
  out.trace.op_streams.clear();

  std::vector<OpId> order;
  order.reserve(g.ops.size());
  for (size_t k = 0; k < traced_ops; ++k) {
    order.insert(order.end(), issued_before[k].begin(), issued_before[k].end());
    order.push_back(static_cast<OpId>(k));
    if (sync_after[k] != kNoId) order.push_back(sync_after[k]);
  }
  const auto ops = static_cast<OpId>(g.ops.size());
  out.schedule =
      build_ordered_schedule(g, {ir::SubArray{g.name, g.width, 0, ops, g.batch_size}}, order, "none");

  // Streams and the waits that data with bytes and device synchronisations need.
  struct Touch {
    InstrId maker = kNoId;
    std::vector<InstrId> readers;
  };
  std::vector<Touch> touch(g.tensors.size());
  std::map<int32_t, InstrId> last_on;
  std::vector<Instruction>& list = out.schedule.instructions;
  auto stream = [&](InstrId i) { return list[static_cast<size_t>(i)].stream; };
  for (Instruction& in : list) {
    std::set<InstrId> waits;
    auto after = [&](InstrId other) {
      if (other != kNoId && stream(other) != in.stream) waits.insert(other);
    };
    if (in.kind == InstrKind::compute) {
      const Op& op = g.op(in.op);
      in.stream = stream_of[static_cast<size_t>(in.op)];
      for (TensorId t : op.inputs) {
        after(touch[static_cast<size_t>(t)].maker);
        touch[static_cast<size_t>(t)].readers.push_back(in.id);
      }
      for (TensorId t : op.outputs) touch[static_cast<size_t>(t)] = Touch{in.id, {}};
      if (op.attrs.contains("device_sync")) {
        for (const auto& [s, last] : last_on) after(last);
      }
    } else if (in.kind == InstrKind::free) {
      Touch& t = touch[static_cast<size_t>(in.tensor)];
      const InstrId last = t.readers.empty() ? t.maker : t.readers.back();
      if (last != kNoId) in.stream = stream(last);
      after(t.maker);
      for (InstrId r : t.readers) after(r);
      t = Touch{};
    }
    in.waits.assign(waits.begin(), waits.end());
    last_on[in.stream] = in.id;
  }
  ir::validate_schedule(out.schedule);
  return out;
}

}  // namespace mutwo::policies

#include "io/kineto/importer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ir/graph_builder.hpp"

namespace mutwo::io::kineto {

ir::OpId Importer::op_for_memory(const MemoryEvent& m, bool allocation) const {
  if (auto r = root_at(m.thread, m.time_ns)) {
    if (auto op = op_of_root_.find(*r); op != op_of_root_.end()) return op->second;
  }
  const auto n = static_cast<ir::OpId>(nodes_.size());
  ir::OpId last_before = 0;
  for (ir::OpId k = 0; k < n; ++k) {
    if (ev(nodes_[static_cast<size_t>(k)].event).start_ns <= m.time_ns) {
      last_before = k;
    } else if (allocation) {
      return k;
    }
  }
  return allocation ? n - 1 : last_before;
}

ir::Graph Importer::build_graph() {
  ir::Graph g;
  g.name = fmt::format("{} {}", source_, step_name_);
  auto add_tensor = [&](std::string name, int64_t bytes, ir::TensorRole role) {
    return ir::add_byte_tensor(g, std::move(name), bytes, role);
  };
  for (size_t k = 0; k < nodes_.size(); ++k) {
    const Node& n = nodes_[k];
    ir::Op op;
    op.id = static_cast<ir::OpId>(k);
    op.name = ev(n.event).name;
    op.kind = n.kind;
    op.phase = n.phase;
    op.forward_of = n.forward_of;
    op.bytes_read = n.bytes_read;
    op.attrs["source_op"] = op.name;
    op.attrs["trace_event"] = static_cast<int64_t>(ev(n.event).index);
    if (!n.input_shapes.empty()) op.attrs["input_shapes"] = n.input_shapes;
    // The host waits for this op's GPU work after issuing it (device_sync: for every stream's).
    if (n.sync != SyncScope::none) op.attrs["host_sync"] = int64_t{1};
    if (n.sync == SyncScope::device) op.attrs["device_sync"] = int64_t{1};
    if (k > 0) op.inputs.push_back(g.ops.back().outputs.front());
    op.outputs.push_back(
        add_tensor(fmt::format("op{}/order", k), 0,
                   n.phase == ir::Phase::forward ? ir::TensorRole::activation : ir::TensorRole::temporary));
    g.ops.push_back(std::move(op));
  }
  add_memory(g, add_tensor);
  for (ir::Op& op : g.ops) {
    for (ir::TensorId t : op.outputs) op.bytes_written += g.tensor(t).bytes;
  }
  ir::link(g);
  return g;
}

template <typename AddTensor>
void Importer::add_memory(ir::Graph& g, AddTensor& add_tensor) {
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
    ir::OpId op;
    int64_t time_ns;
  };
  std::map<std::string, Open> open;
  int64_t blocks = 0, workspace_blocks = 0, pre_step = 0, pre_step_bytes = 0, outliving = 0, reused = 0;
  auto role_of = [&](ir::OpId op) {
    return g.ops[static_cast<size_t>(op)].phase == ir::Phase::forward ? ir::TensorRole::activation
                                                                      : ir::TensorRole::temporary;
  };
  auto close = [&](const std::string& addr, const Open& o, ir::OpId freed_by, int64_t time_ns) {
    if (freed_by <= o.op) {
      nodes_[static_cast<size_t>(o.op)].scratch.emplace_back(o.time_ns, o.bytes);
      nodes_[static_cast<size_t>(o.op)].scratch.emplace_back(time_ns, -o.bytes);
      ++workspace_blocks;
      return;
    }
    const ir::TensorId t = add_tensor(fmt::format("op{}/block@{}", o.op, addr), o.bytes, role_of(o.op));
    g.ops[static_cast<size_t>(o.op)].outputs.push_back(t);
    g.ops[static_cast<size_t>(freed_by)].inputs.push_back(t);
    ++blocks;
  };
  for (const MemoryEvent* m : used) {
    if (m->bytes > 0) {
      const ir::OpId op = op_for_memory(*m, true);
      if (auto it = open.find(m->addr); it != open.end()) {  // its free is missing from the trace
        close(m->addr, it->second, op, m->time_ns);
        open.erase(it);
        ++reused;
      }
      open[m->addr] = Open{m->bytes, op, m->time_ns};
      continue;
    }
    const ir::OpId op = op_for_memory(*m, false);
    if (auto it = open.find(m->addr); it != open.end()) {
      close(m->addr, it->second, op, m->time_ns);
      open.erase(it);
    } else {
      const ir::TensorId t =
          add_tensor(fmt::format("pre-step block@{}", m->addr), -m->bytes, ir::TensorRole::input);
      g.ops[static_cast<size_t>(op)].inputs.push_back(t);
      ++pre_step;
      pre_step_bytes += -m->bytes;
    }
  }
  const auto last = static_cast<ir::OpId>(g.ops.size() - 1);
  for (const auto& [addr, o] : open) {
    if (o.op == last) {
      const ir::TensorId t = add_tensor(fmt::format("op{}/block@{}", o.op, addr), o.bytes, role_of(o.op));
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
      add_tensor("resident before the step", before, ir::TensorRole::weight);
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

}  // namespace mutwo::io::kineto

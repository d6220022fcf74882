#include "io/kineto/importer.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace mutwo::io::kineto {

void Importer::measure_durations(const Json& doc) {
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
    launches_.emplace_back(launch.start_ns, g.start_ns);
    if (g.name.find("DtoH") != std::string::npos && g.name.find("Pageable") != std::string::npos) {
      pageable_d2h_.push_back(*arg(g, "correlation"));
    }
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
    Node& node = nodes_[static_cast<size_t>(op->second)];
    node.duration_ns += g.end_ns - g.start_ns;
    const int64_t stream = stream_of(g);
    auto part =
        std::find_if(node.parts.begin(), node.parts.end(), [&](const Part& p) { return p.stream == stream; });
    if (part == node.parts.end())
      part = node.parts.insert(node.parts.end(), Part{stream, 0, launch.end_ns, 0});
    part->duration_ns += g.end_ns - g.start_ns;
    part->last_launch_end_ns = std::max(part->last_launch_end_ns, launch.end_ns);
    ++attributed;
    if (auto d = arg(g, "device")) ++device_count[*d];
  }
  int64_t idle = 0;
  for (const Node& n : nodes_) idle += n.duration_ns == 0 ? 1 : 0;
  warn(
      fmt::format("op durations are GPU time: the summed durations of the {} kernels, memcpys and memsets "
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

std::string Importer::device_name(const Json& doc) {
  if (std::optional<std::string> name = device_property_name(doc, gpu_device_)) return *name;
  warn(
      fmt::format("the trace carries no deviceProperties name for GPU {}: the trace's device is left unnamed",
                  gpu_device_));
  return "";
}

}  // namespace mutwo::io::kineto

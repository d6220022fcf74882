#include "api/profile.hpp"

#include <algorithm>
#include <numeric>

namespace mutwo::api {

ProfileSummary summarize_profile(const ir::Trace& trace, int32_t top) {
  const ir::Graph& g = trace.graph;
  ProfileSummary s;
  for (size_t k = 0; k < g.ops.size(); ++k)
    s.phase_ns[static_cast<size_t>(g.ops[k].phase)] += trace.op_duration_ns[k];
  s.total_ns = s.phase_ns[0] + s.phase_ns[1] + s.phase_ns[2];
  for (int64_t h : trace.op_host_ns) s.host_ns += h;
  s.slowest_ops.resize(g.ops.size());
  std::iota(s.slowest_ops.begin(), s.slowest_ops.end(), size_t{0});
  std::stable_sort(s.slowest_ops.begin(), s.slowest_ops.end(),
                   [&](size_t a, size_t b) { return trace.op_duration_ns[a] > trace.op_duration_ns[b]; });
  s.slowest_ops.resize(std::min(s.slowest_ops.size(), static_cast<size_t>(std::max(0, top))));
  return s;
}

nlohmann::json profile_json(const experiments::ProfileOutcome& out, const std::string& output, int32_t top) {
  const ir::Trace& trace = out.trace;
  const ir::Graph& g = trace.graph;
  const ProfileSummary s = summarize_profile(trace, top);
  nlohmann::json j;
  j["trace"] = output;
  j["graph"] = g.name;
  j["device"] = trace.device;
  j["ops"] = g.ops.size();
  j["sum_op_ns"] = s.total_ns;
  j["forward_ns"] = s.phase_ns[0];
  j["backward_ns"] = s.phase_ns[1];
  j["optimizer_ns"] = s.phase_ns[2];
  j["sum_op_host_ns"] = trace.op_host_ns.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.host_ns);
  j["run_id"] = out.run_id ? nlohmann::json(*out.run_id) : nlohmann::json(nullptr);
  nlohmann::json slowest = nlohmann::json::array();
  for (size_t k : s.slowest_ops) {
    slowest.push_back(
        {{"op", g.ops[k].name}, {"kind", ir::kind_name(g.ops[k].kind)}, {"ns", trace.op_duration_ns[k]}});
  }
  j["top"] = slowest;
  return j;
}

}  // namespace mutwo::api

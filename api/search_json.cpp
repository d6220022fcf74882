#include "api/search_json.hpp"

namespace mutwo::api {

nlohmann::json search_json(const policies::SearchReport& report, const costmodel::DeviceSpec& device,
                           const std::string& cost_source) {
  nlohmann::json j;
  j["device"] = {{"name", device.name}, {"memory_bytes", device.memory_bytes}};
  j["cost_source"] = cost_source;
  j["memory_limit_bytes"] = report.memory_limit_bytes;
  j["samples_per_step"] = report.samples_per_step;
  j["feasible"] = report.any_feasible();
  j["smallest_limit_bytes"] = report.smallest_limit_bytes;
  nlohmann::json rows = nlohmann::json::array();
  for (const policies::SearchRow& r : report.rows) {
    nlohmann::json row = {{"strategy", r.strategy},
                          {"partition", r.partition},
                          {"policy", r.policy},
                          {"feasible", r.feasible},
                          {"peak_bytes", r.peak_bytes},
                          {"pruned", r.pruned},
                          {"runs", r.runs},
                          {"note", r.note},
                          {"lean_ops", r.lean_ops}};
    if (r.feasible) {
      row["step_time_ns"] = r.step_time_ns;
      row["samples_per_s"] = r.samples_per_s;
      row["speedup_over_hfta"] =
          r.speedup_over_hfta > 0 ? nlohmann::json(r.speedup_over_hfta) : nlohmann::json(nullptr);
      row["bytes_swapped"] = r.bytes_swapped;
      row["activation_bytes_swapped"] = r.bytes_swapped - r.state_bytes_swapped;
      row["state_bytes_swapped"] = r.state_bytes_swapped;
      row["model_state"] = r.state_offloaded ? "host" : "device";
      row["optimizer"] = r.optimizer_on_host ? "host" : "device";
      row["host_optimizer_ns"] = r.host_optimizer_ns;
      row["recompute_ns"] = r.recompute_ns;
      row["compute_stall_ns"] = r.compute_stall_ns;
    }
    rows.push_back(row);
  }
  j["rows"] = rows;
  nlohmann::json effects = nlohmann::json::array();
  for (const policies::LeanEffect& e : report.lean_effects) {
    effects.push_back({{"lean_ops", e.lean_ops},
                       {"model", e.model},
                       {"saved_bytes", e.saved_bytes},
                       {"extra_compute_ns", e.extra_compute_ns}});
  }
  j["lean_effects"] = effects;
  const policies::SearchStats& s = report.stats;
  j["stats"] = {{"partitions", s.partitions},
                {"policies", s.policies},
                {"plans", s.plans},
                {"pruned_by_memory", s.pruned_by_memory},
                {"partitions_pruned_by_bound", s.partitions_pruned_by_bound}};
  return j;
}

}  // namespace mutwo::api

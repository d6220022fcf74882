#include "api/search.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/values.hpp"
#include "ir/dtype.hpp"
#include "policies/model_array.hpp"
#include "sim/host_mode.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "transforms/lean_ops.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::api {

policies::ArchitectureCount parse_model_count(const std::string& text, const zoo::ModelConfig& config) {
  const size_t colon = text.rfind(':');
  policies::ArchitectureCount a;
  a.model = text.substr(0, colon);
  a.config = config;
  zoo::find_model(a.model);  // unknown model: lists the valid ones
  if (colon == std::string::npos) return a;
  const std::string count = text.substr(colon + 1);
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(count, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (count.empty() || used != count.size() || value < 1 || value > policies::kMaxArrayModels) {
    throw Error(fmt::format("--model '{}': count '{}' must be a whole number from 1 to {}", text, count,
                            policies::kMaxArrayModels));
  }
  a.count = static_cast<int32_t>(value);
  return a;
}

policies::SearchConfig search_config(const SearchRequest& request, const costmodel::OpCostModel& cost,
                                     int64_t memory_limit_bytes) {
  zoo::ModelConfig model_config;
  model_config.batch_size = request.batch_size;
  model_config.seq_len = request.seq_len;
  model_config.image_size = request.image_size;
  model_config.dtype = ir::parse_dtype(request.dtype);
  model_config.precision = precision_value(request.precision);
  const std::vector<std::string> models =
      request.models.empty() ? std::vector<std::string>{kDefaultSearchModel} : request.models;
  if (request.models.empty() && request.batch_size == 0) model_config.batch_size = kDefaultSearchBatch;

  policies::SearchConfig config;
  for (const std::string& m : models) config.architectures.push_back(parse_model_count(m, model_config));
  // One --seq-len (--image-size) for a mixed array reaches the models that take one (zoo::takes_seq_len);
  // a value that none takes is refused (zoo::build_model refuses it for one model).
  bool takes_seq = false;
  bool takes_image = false;
  std::vector<std::string> names;
  for (policies::ArchitectureCount& a : config.architectures) {
    const zoo::ModelInfo& info = zoo::find_model(a.model);
    names.push_back(a.model);
    if (zoo::takes_seq_len(info)) {
      takes_seq = true;
    } else {
      a.config.seq_len = 0;
    }
    if (zoo::takes_image_size(info)) {
      takes_image = true;
    } else {
      a.config.image_size = 0;
    }
  }
  if (request.seq_len != 0 && !takes_seq) {
    throw Error(fmt::format("--seq-len {}: no model of the array ({}) is a sequence model", request.seq_len,
                            fmt::join(names, ", ")));
  }
  if (request.image_size != 0 && !takes_image) {
    throw Error(fmt::format("--image-size {}: no model of the array ({}) is a vision model",
                            request.image_size, fmt::join(names, ", ")));
  }
  config.optimizer.kind = transforms::parse_optimizer(request.optimizer);
  config.prune = request.partitions;
  config.cost = &cost;
  config.memory_limit_bytes = memory_limit_bytes;
  config.policies = request.policies;
  config.top = request.top;
  config.jobs = request.jobs;
  config.host_mode = sim::parse_host_mode(request.host_mode);
  // lean_ops: one option for every architecture, or both (none and tempo) searched side by side.
  if (request.lean_ops == "both") {
    config.lean_options = {transforms::LeanOps{}, transforms::parse_lean_ops("tempo")};
  } else if (const transforms::LeanOps lean = transforms::parse_lean_ops(request.lean_ops); lean.any()) {
    config.lean_options = {lean};
  }
  config.progress = request.progress;
  return config;
}

nlohmann::json search_json(const policies::SearchReport& report, const costmodel::DeviceSpec& device,
                           const std::string& cost_source) {
  nlohmann::json j;
  j["device"] = {{"name", device.name}, {"memory_bytes", device.memory_bytes}};
  j["cost_source"] = cost_source;
  j["memory_limit_bytes"] = report.memory_limit_bytes;
  j["samples_per_step"] = report.samples_per_step;
  j["feasible"] = report.any_feasible();
  j["smallest_limit_bytes"] = report.smallest_limit_bytes;
  j["smallest_pruned_bytes"] = report.smallest_pruned_bytes;
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

#include "experiments/kinds/array_point.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_file.hpp"
#include "costmodel/device_overrides.hpp"
#include "experiments/content_hash.hpp"
#include "experiments/sweep_keys.hpp"
#include "ir/dtype.hpp"
#include "ir/precision.hpp"
#include "policies/partition.hpp"
#include "policies/policy_registry.hpp"
#include "policies/search.hpp"
#include "sim/host_mode.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"
#include "zoo/exported_model.hpp"

namespace mutwo::experiments {

zoo::ModelConfig ArrayPoint::model_config() const {
  zoo::ModelConfig c;
  c.batch_size = batch_size;
  c.seq_len = seq_len;
  c.image_size = image_size;
  c.dtype = ir::parse_dtype(dtype);
  c.precision = ir::parse_precision(precision);
  c.lean_ops = transforms::parse_lean_ops(lean_ops);
  return c;
}

transforms::OptimizerConfig ArrayPoint::optimizer_config() const {
  transforms::OptimizerConfig o;
  o.kind = transforms::parse_optimizer(optimizer);
  return o;
}

std::string ArrayPoint::label() const {
  std::string text = fmt::format("{} x{}, batch {}, {}", model, models, batch_size, gpu);
  if (host_link_gbps > 0) text += fmt::format(", link {} GB/s", host_link_gbps);
  if (lean_ops != "none") text += ", lean ops " + lean_ops;
  return text;
}

namespace {

// The point of one model and batch of the sweep, its count, GPU, link and lean ops left to the caller.
ArrayPoint model_point(const ExperimentSpec& spec, const SweepModel& m, int64_t batch,
                       std::string_view default_host_mode) {
  const Sweep& s = spec.sweep;
  const zoo::ModelInfo& info = zoo::find_model(m.name);
  ArrayPoint p;
  p.model = m.name;
  p.batch_size = batch;
  p.seq_len = info.default_seq_len == 0 ? 0 : (m.seq_len > 0 ? m.seq_len : info.default_seq_len);
  p.image_size =
      info.default_image_size == 0 ? 0 : (m.image_size > 0 ? m.image_size : info.default_image_size);
  p.dtype = s.dtype;
  p.precision = s.precision;
  p.host_mode = s.host_mode.empty() ? std::string(default_host_mode) : s.host_mode;
  p.optimizer = s.optimizer;
  p.cost_source = s.cost_source;
  p.traces = s.traces;
  return p;
}

// Runs `check`; its error is rethrown, of the same type, with `context` ("SPEC: 'sweep.gpus' = 'x': ")
// before its message.
template <typename Check>
void in_context(const std::string& context, Check&& check) {
  try {
    check();
  } catch (const UnknownNameError& e) {
    throw UnknownNameError(context + e.what());
  } catch (const FormatError& e) {
    throw FormatError(context + e.what());
  } catch (const Error& e) {
    throw Error(context + e.what());
  }
}

std::vector<int64_t> model_batches(const SweepModel& m) {
  return m.batch_sizes.empty() ? std::vector<int64_t>{zoo::find_model(m.name).default_batch_size}
                               : m.batch_sizes;
}

}  // namespace

std::vector<ArrayPoint> array_points(const ExperimentSpec& spec, std::string_view default_host_mode) {
  const Sweep& s = spec.sweep;
  const std::vector<double> links = s.host_link_gbps.empty() ? std::vector<double>{0} : s.host_link_gbps;
  const std::vector<std::string> leans = s.lean_ops.empty() ? std::vector<std::string>{"none"} : s.lean_ops;
  std::vector<ArrayPoint> out;
  for (const SweepModel& m : s.models) {
    for (int64_t batch : model_batches(m)) {
      for (int32_t count : s.model_counts) {
        for (const std::string& gpu : s.gpus) {
          for (double link : links) {
            for (const std::string& lean : leans) {
              ArrayPoint p = model_point(spec, m, batch, default_host_mode);
              p.lean_ops = transforms::lean_ops_name(transforms::parse_lean_ops(lean));
              p.host_link_gbps = link;
              p.models = count;
              p.gpu = gpu;
              out.push_back(std::move(p));
            }
          }
        }
      }
    }
  }
  return out;
}

int64_t values_or_one(size_t size) {
  return size == 0 ? 1 : static_cast<int64_t>(size);
}

std::vector<SweepFactor> array_factors(const ExperimentSpec& spec) {
  const Sweep& s = spec.sweep;
  int64_t pairs = 0;  // a model without batch sizes runs at its default one
  for (const SweepModel& m : s.models) pairs += values_or_one(m.batch_sizes.size());
  return {{"model/batch pairs", pairs},
          {"model_counts", static_cast<int64_t>(s.model_counts.size())},
          {"gpus", static_cast<int64_t>(s.gpus.size())},
          {"host_link_gbps", values_or_one(s.host_link_gbps.size())},
          {"lean_ops", values_or_one(s.lean_ops.size())}};
}

namespace {

std::filesystem::path spec_relative(const ExperimentSpec& spec, const std::string& file) {
  const std::filesystem::path path(file);
  return path.is_absolute() ? path : spec.base_dir / path;
}

}  // namespace

std::string sweep_gpu(const ExperimentSpec& spec, const std::string& gpu) {
  return costmodel::is_device_path(gpu) ? spec_relative(spec, gpu).string() : gpu;
}

nlohmann::json array_config(const ExperimentSpec& spec, const ArrayPoint& p) {
  nlohmann::json c = {{"experiment", spec.name},
          {"kind", spec.kind},
          {"model", p.model},
          {"models", p.models},
          {"batch_size", p.batch_size},
          {"seq_len", p.seq_len},
          {"image_size", p.image_size},
          {"dtype", p.dtype},
          {"optimizer", p.optimizer},
          {"gpu", p.gpu},
          {"cost_source", p.cost_source}};
  // Only when given, so that the rows of specs without traces keep their configuration hashes.
  if (!p.traces.empty()) c["traces"] = p.traces;
  // A file's content, not its path, is the setting: an edited device file, model file or trace kept
  // the old rows "already stored", as an edited DTR log would have. Zoo and catalog rows keep theirs.
  if (costmodel::is_device_path(p.gpu))
    c["gpu_hash"] = file_content_hash(sweep_gpu(spec, p.gpu), "device file");
  if (zoo::is_model_file(p.model)) c["model_hash"] = file_content_hash(p.model, "model file");
  for (const std::string& t : p.traces)
    c["traces_hash"].push_back(file_content_hash(spec_relative(spec, t), "trace"));
  if (p.precision != "fp32") c["precision"] = p.precision;  // likewise: fp32 rows keep their hashes
  // Rows simulated without the host timeline keep their hashes; eager and cuda-graph rows are new.
  if (p.host_mode != "none") c["host_mode"] = p.host_mode;
  if (p.host_link_gbps > 0) c["host_link_gbps"] = p.host_link_gbps;  // likewise: catalog-link rows keep theirs
  if (p.lean_ops != "none") c["lean_ops"] = p.lean_ops;                // likewise: plain rows keep theirs
  return c;
}

ArrayPoint array_point(const nlohmann::json& c) {
  ArrayPoint p;
  p.model = c.at("model");
  p.models = c.at("models");
  p.batch_size = c.at("batch_size");
  p.seq_len = c.at("seq_len");
  p.image_size = c.at("image_size");
  p.dtype = c.at("dtype");
  p.optimizer = c.at("optimizer");
  p.gpu = c.at("gpu");
  p.cost_source = c.at("cost_source");
  if (c.contains("traces")) p.traces = c.at("traces").get<std::vector<std::string>>();
  if (c.contains("precision")) p.precision = c.at("precision").get<std::string>();
  if (c.contains("host_mode")) p.host_mode = c.at("host_mode").get<std::string>();
  if (c.contains("host_link_gbps")) p.host_link_gbps = c.at("host_link_gbps").get<double>();
  if (c.contains("lean_ops")) p.lean_ops = c.at("lean_ops").get<std::string>();
  return p;
}

policies::SearchConfig array_search_config(const ExperimentSpec& spec, const ArrayPoint& p,
                                           const costmodel::OpCostModel& cost, int64_t memory_limit_bytes) {
  policies::SearchConfig config;
  config.architectures.push_back({p.model, p.models, p.model_config()});
  config.optimizer = p.optimizer_config();
  config.cost = &cost;
  config.memory_limit_bytes = memory_limit_bytes;
  config.policies = spec.sweep.policies;
  config.host_mode = sim::parse_host_mode(p.host_mode);
  return config;
}

RunRecord array_run_record(const ArrayPoint& p) {
  RunRecord r;
  r.kind = "simulate";
  r.model = p.model;
  r.models = p.models;
  r.batch_size = p.batch_size;
  r.seq_len = p.seq_len;
  r.image_size = p.image_size;
  r.dtype = p.dtype;
  r.optimizer = p.optimizer;
  r.gpu = p.gpu;
  r.cost_source = p.cost_source;
  return r;
}

costmodel::CostSetup array_cost_setup(const ExperimentSpec& spec, const ArrayPoint& p) {
  costmodel::CostSetup setup;
  setup.gpu = sweep_gpu(spec, p.gpu);
  setup.cost_source = p.cost_source;
  for (const std::string& t : p.traces) setup.trace_files.push_back(spec_relative(spec, t).string());
  setup.traces_name = "'sweep.traces'";
  if (p.host_link_gbps > 0) setup.overrides.h2d_gbps = setup.overrides.d2h_gbps = p.host_link_gbps;
  return setup;
}

std::unique_ptr<costmodel::OpCostModel> array_cost_model(const ExperimentSpec& spec, const ArrayPoint& p) {
  return costmodel::make_cost_model(array_cost_setup(spec, p));
}

std::unique_ptr<costmodel::OpCostModel> array_cost_model(const ArrayPoint& p) {
  ExperimentSpec none;
  none.base_dir = ".";
  return array_cost_model(none, p);
}

std::vector<std::string> sweep_memory_limits(const ExperimentSpec& spec) {
  return spec.sweep.memory_limits.empty() ? std::vector<std::string>{"device"} : spec.sweep.memory_limits;
}

int64_t memory_limit_bytes(const ExperimentSpec& spec, const std::string& text, const std::string& gpu) {
  if (text == "device") return costmodel::find_device(sweep_gpu(spec, gpu)).memory_bytes;
  return costmodel::parse_memory_size(text);
}

void validate_memory_limits(const ExperimentSpec& spec) {
  for (const std::string& limit : spec.sweep.memory_limits) {
    if (limit == "device") continue;
    int64_t bytes = 0;
    try {
      bytes = costmodel::parse_memory_size(limit);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: 'sweep.memory_limits' = '{}': {} (or \"device\": the GPU's memory)",
                              spec.source, limit, e.what()));
    }
    // The simulator reads a limit of 0 as "no limit": a row would be feasible whatever it needs.
    if (bytes <= 0) {
      throw Error(
          fmt::format("{}: 'sweep.memory_limits' = '{}' is {} bytes: a memory limit must be at least "
                      "1 byte (or \"device\": the GPU's memory)",
                      spec.source, limit, bytes));
    }
  }
}

void require_sweep_keys(const ExperimentSpec& spec, const std::vector<std::string_view>& keys) {
  for (std::string_view key : keys) {
    if (std::find(spec.sweep_keys_given.begin(), spec.sweep_keys_given.end(), key) ==
        spec.sweep_keys_given.end()) {
      throw FormatError(fmt::format("{}: 'sweep.{}' is missing (kind '{}' needs {})", spec.source, key,
                                    spec.kind, fmt::join(keys, ", ")));
    }
  }
}

void validate_array_sweep(const ExperimentSpec& spec) {
  require_sweep_keys(spec, {"models", "model_counts", "gpus"});
  const Sweep& s = spec.sweep;
  auto named = [&](std::string_view key, const std::string& value, auto&& check) {
    check_sweep_name(spec, key, value, check);
  };
  for (const SweepModel& m : s.models) {
    named("models", m.name, [&] { zoo::find_model(m.name); });
    // A setting the model has no use for went unread (simulate --seq-len refuses it).
    const zoo::ModelInfo& info = zoo::find_model(m.name);
    if (m.seq_len > 0 && info.default_seq_len == 0) {
      throw Error(
          fmt::format("{}: 'sweep.models' = '{}': seq_len = {}, but the model takes no sequence length",
                      spec.source, m.name, m.seq_len));
    }
    if (m.image_size > 0 && info.default_image_size == 0) {
      throw Error(fmt::format("{}: 'sweep.models' = '{}': image_size = {}, but the model takes no image",
                              spec.source, m.name, m.image_size));
    }
  }
  // A catalog name or a device file; each GPU once, whatever names it (two names of one GPU ran
  // every configuration twice).
  std::vector<std::string> gpu_names;
  for (const std::string& g : s.gpus) {
    in_context(fmt::format("{}: 'sweep.gpus' = '{}': ", spec.source, g),
               [&] { gpu_names.push_back(costmodel::find_device(sweep_gpu(spec, g)).name); });
  }
  if (const auto twice = support::first_repeat(gpu_names)) {
    throw Error(
        fmt::format("{}: 'sweep.gpus' = '{}' is the GPU '{}', given already as '{}'; give each GPU once",
                    spec.source, s.gpus[twice->second], gpu_names[twice->second], s.gpus[twice->first]));
  }
  for (const std::string& p : s.policies) named("policies", p, [&] { policies::builtin_policies().find(p); });
  named("dtype", s.dtype, [&] { ir::parse_dtype(s.dtype); });
  named("precision", s.precision, [&] { ir::parse_precision(s.precision); });
  for (const std::string& l : s.lean_ops) named("lean_ops", l, [&] { transforms::parse_lean_ops(l); });
  if (!s.host_mode.empty()) named("host_mode", s.host_mode, [&] { sim::parse_host_mode(s.host_mode); });
  named("optimizer", s.optimizer, [&] { transforms::parse_optimizer(s.optimizer); });
  // The source and the inputs its entry declares.
  named("cost_source", s.cost_source, [&] {
    if (costmodel::builtin_cost_sources().find(s.cost_source).requires_measured_traces && s.traces.empty()) {
      throw UnknownNameError(fmt::format("cost source '{}' needs measured traces; name them in 'sweep.traces'",
                                         s.cost_source));
    }
  });
  const costmodel::CostSourceInfo& source = costmodel::builtin_cost_sources().find(s.cost_source);
  if (!s.traces.empty() && !source.reads_measured_traces) {
    throw Error(fmt::format("{}: 'sweep.traces' is read only by cost source {}; 'sweep.cost_source' = '{}' "
                            "ignores it",
                            spec.source, fmt::join(costmodel::builtin_cost_sources().trace_readers(), ", "),
                            s.cost_source));
  }
  std::vector<std::string> trace_paths;
  for (const std::string& t : s.traces) {
    const std::filesystem::path path = spec_relative(spec, t);
    if (!std::filesystem::is_regular_file(path))
      throw Error(fmt::format("{}: 'sweep.traces' = '{}': no such file ({})", spec.source, t, path.string()));
    trace_paths.push_back(path.string());
  }
  // Each file once, by whatever path (its durations would weigh twice in the medians): refused here,
  // before the database is made, not when the first configuration prices with them.
  if (const auto twice = support::first_repeated_file(trace_paths)) {
    throw Error(
        fmt::format("{}: 'sweep.traces' = '{}' is the file given already as '{}'; give each file once",
                    spec.source, s.traces[twice->second], s.traces[twice->first]));
  }
  // What every configuration builds first, built once here: a model that refuses its shape (a
  // sequence past its positions) or a GPU its cost source cannot price (calibrated, with no profile
  // for it) is refused before the database is made, not when a sweep of hours reaches it.
  const std::vector<std::string> leans = s.lean_ops.empty() ? std::vector<std::string>{"none"} : s.lean_ops;
  for (const SweepModel& m : s.models) {
    for (const int64_t batch : model_batches(m)) {
      for (const std::string& lean : leans) {
        ArrayPoint p = model_point(spec, m, batch, "none");
        p.lean_ops = lean;
        in_context(fmt::format("{}: 'sweep.models' = '{}' at batch {}: ", spec.source, m.name, batch),
                   [&] { zoo::build_model(p.model, p.model_config()); });
      }
    }
  }
  for (const std::string& g : s.models.empty() ? std::vector<std::string>{} : s.gpus) {
    ArrayPoint p = model_point(spec, s.models.front(), model_batches(s.models.front()).front(), "none");
    p.gpu = g;
    in_context(fmt::format("{}: 'sweep.gpus' = '{}': ", spec.source, g), [&] { array_cost_model(spec, p); });
  }
}

void validate_searched_counts(const ExperimentSpec& spec) {
  const auto partitions = [](int32_t count) {
    return policies::array_partition_count({{"array", count, {}}});
  };
  for (const int32_t count : spec.sweep.model_counts) {
    if (partitions(count) <= policies::kMaxSearchPartitions) continue;
    int32_t largest = 1;
    while (partitions(largest + 1) <= policies::kMaxSearchPartitions) ++largest;
    throw Error(
        fmt::format("{}: 'sweep.model_counts' = {}: kind '{}' searches each array's sub-array "
                    "partitions, and {} models have more than the {} a search plans; a count of at "
                    "most {} is searched whole",
                    spec.source, count, spec.kind, count, policies::kMaxSearchPartitions, largest));
  }
}

std::string number_cell(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

namespace {

std::string json_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return number_cell(v.get<double>());
  if (v.is_array()) {
    std::string out;
    for (const nlohmann::json& e : v) out += (out.empty() ? "" : "+") + json_cell(e);
    return out;
  }
  return v.dump();
}

}  // namespace

std::vector<std::string> config_cells(const nlohmann::json& config, const std::vector<std::string>& columns) {
  std::vector<std::string> cells;
  cells.reserve(columns.size());
  for (const std::string& c : columns)
    cells.push_back(config.contains(c) ? json_cell(config[c]) : std::string(absent_cell(c)));
  return cells;
}

CsvTable metrics_table(const std::vector<StoredExperimentRow>& rows,
                       const std::vector<std::string>& config_keys,
                       const std::vector<std::string>& extra_header,
                       const std::vector<std::vector<std::string>>& extra_cells) {
  std::set<std::string> metric_names;  // a metric that repeats a config key is not repeated
  for (const StoredExperimentRow& r : rows) {
    for (const Metric& m : r.row.metrics) {
      if (std::find(config_keys.begin(), config_keys.end(), m.name) == config_keys.end())
        metric_names.insert(m.name);
    }
  }
  CsvTable t;
  t.header = config_keys;
  for (const char* c : {"series", "feasible", "plan_partition", "plan_policy", "mutwo_version"}) {
    t.header.emplace_back(c);
  }
  t.header.insert(t.header.end(), metric_names.begin(), metric_names.end());
  t.header.insert(t.header.end(), extra_header.begin(), extra_header.end());
  for (size_t i = 0; i < rows.size(); ++i) {
    const StoredExperimentRow& r = rows[i];
    const nlohmann::json config = nlohmann::json::parse(r.row.config_json);
    std::vector<std::string> cells = config_cells(config, config_keys);
    cells.push_back(r.row.series);
    cells.push_back(r.row.feasible ? "1" : "0");
    cells.push_back(r.run.run.partition);
    cells.push_back(r.run.run.policy);
    cells.push_back(r.run.run.mutwo_version);
    for (const std::string& name : metric_names) {
      const std::optional<double> v = r.row.metric(name);
      cells.push_back(v ? number_cell(*v) : "");
    }
    if (i < extra_cells.size()) cells.insert(cells.end(), extra_cells[i].begin(), extra_cells[i].end());
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace mutwo::experiments

#pragma once
// What the strategies and policies kinds share: one model array of a sweep (architecture, count,
// batch, GPU, ...), its configuration JSON, its run record, its cost model, the checks of the
// sweep keys both read, and the CSV table both print.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodel/cost_setup.hpp"
#include "costmodel/op_cost_model.hpp"
#include "experiments/experiment_kind.hpp"
#include "policies/search.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::experiments {

// One array of the sweep, with every default filled in.
struct ArrayPoint {
  std::string model;  // zoo name
  int32_t models = 1;
  int64_t batch_size = 0;  // per model
  int64_t seq_len = 0;     // 0: not a sequence model
  int64_t image_size = 0;  // 0: not a vision model
  std::string dtype;
  std::string precision = "fp32";
  std::string lean_ops = "none";   // transforms/lean_ops.hpp
  std::string host_mode = "none";  // sim/host_mode.hpp; a row stored before the host timeline: none
  std::string optimizer;
  std::string gpu;
  double host_link_gbps = 0;  // each way, overriding the catalog's; 0: the catalog's
  std::string cost_source;
  std::vector<std::string> traces;  // the cost source's measured traces, as the spec names them

  zoo::ModelConfig model_config() const;  // width 1
  transforms::OptimizerConfig optimizer_config() const;
  std::string label() const;  // "bert-base x8, batch 16, a100-40gb"
};

// models x batch sizes x counts x GPUs x host links, in that nesting order (models outermost).
// `default_host_mode`: the host mode of a spec that names none (the kind's: eager for the array
// kinds, libtorch where the executor issues the steps).
std::vector<ArrayPoint> array_points(const ExperimentSpec& spec, std::string_view default_host_mode = "eager");

// The factors of array_points' size: (model, batch) pairs, model_counts, gpus, host_link_gbps and
// lean_ops (those two 1 when not swept).
std::vector<SweepFactor> array_factors(const ExperimentSpec& spec);
// The size of a list a sweep key gives, or 1 when it is empty and the kind uses one default value.
int64_t values_or_one(size_t size);

// The keys of the configuration every row of this array shares.
nlohmann::json array_config(const ExperimentSpec& spec, const ArrayPoint& point);
// The array a configuration made by array_config names.
ArrayPoint array_point(const nlohmann::json& config);

// A run record of kind "simulate" for the array (model, models, batch, dtype, optimizer, gpu,
// cost source); the caller adds partition, policy and the memory limit.
RunRecord array_run_record(const ArrayPoint& point);

// The point's cost setup (costmodel/cost_setup.hpp, the one the command line uses too): its catalog
// GPU, its cost source and the source's traces, resolved against the spec's folder.
costmodel::CostSetup array_cost_setup(const ExperimentSpec& spec, const ArrayPoint& point);
// make_cost_model(array_cost_setup(spec, point)): the point's cost model on its catalog GPU.
std::unique_ptr<costmodel::OpCostModel> array_cost_model(const ExperimentSpec& spec, const ArrayPoint& point);
// The same for a point whose cost source reads no traces (relative paths would resolve against the
// working directory).
std::unique_ptr<costmodel::OpCostModel> array_cost_model(const ArrayPoint& point);

// The search of the point's array (one architecture) at a limit: its optimizer, the spec's
// policies, its host mode; cost must outlive the config.
policies::SearchConfig array_search_config(const ExperimentSpec& spec, const ArrayPoint& point,
                                           const costmodel::OpCostModel& cost, int64_t memory_limit_bytes);

// Checks models (zoo or test-scale names), counts, GPUs, policies, dtype, optimizer, the cost source
// and the inputs its registry entry declares (traces: given when it needs them, refused when it
// reads none, each an existing file); throws naming the spec, the key and the value.
void validate_array_sweep(const ExperimentSpec& spec);

// The sweep's memory limits as written ("device" or a size), {"device"} when it gives none.
std::vector<std::string> sweep_memory_limits(const ExperimentSpec& spec);
// "device": the GPU's memory (`gpu` as the sweep names it); otherwise the size ("30GiB").
int64_t memory_limit_bytes(const ExperimentSpec& spec, const std::string& text, const std::string& gpu);
// The device a sweep's GPU names: a catalog name as it is, a device file (costmodel/device_file.hpp)
// against the spec's folder, as 'sweep.traces' are; what --gpu and costmodel::find_device take.
std::string sweep_gpu(const ExperimentSpec& spec, const std::string& gpu);
// Checks each of 'sweep.memory_limits' is "device" or a size of at least one byte (a zero limit
// would read as "no limit"); throws naming the spec, the key and the value.
void validate_memory_limits(const ExperimentSpec& spec);
// For the kinds that search each array's partitions: checks each of 'sweep.model_counts' has no
// more partitions than a search plans (policies::kMaxSearchPartitions; a spec cannot narrow them as
// `mutwo search --max-sub-arrays` can), before the database is made.
void validate_searched_counts(const ExperimentSpec& spec);

// Runs `check` (a registry lookup of `value`); its UnknownNameError is rethrown naming the spec, the
// sweep key and the value.
template <typename Check>
void check_sweep_name(const ExperimentSpec& spec, std::string_view key, const std::string& value, Check&& check) {
  try {
    check();
  } catch (const UnknownNameError& e) {
    throw UnknownNameError(fmt::format("{}: 'sweep.{}' = '{}': {}", spec.source, key, value, e.what()));
  }
}

// Requires the sweep keys named (the spec must set them).
void require_sweep_keys(const ExperimentSpec& spec, const std::vector<std::string_view>& keys);

// Rows as a table: the config keys named, then series, feasible, the plan's partition and policy
// (runs columns) and mutwo_version, then every metric any row has (sorted; those that repeat a
// config key left out), then `extra` columns computed by the kind.
CsvTable metrics_table(const std::vector<StoredExperimentRow>& rows,
                       const std::vector<std::string>& config_keys,
                       const std::vector<std::string>& extra_header,
                       const std::vector<std::vector<std::string>>& extra_cells);

// A row's cells for config columns (experiments/sweep_keys.hpp: sweep_columns), in order: the stored
// value, or the column's absent cell.
std::vector<std::string> config_cells(const nlohmann::json& config, const std::vector<std::string>& columns);

// Shortest decimal that reads back as the same double ("0.5", "1234", "1e-09").
std::string number_cell(double value);

}  // namespace mutwo::experiments

#pragma once
// The experiment kind interface: what one configuration of a spec's sweep runs, and how its rows
// read as a table. One implementation per file under experiments/kinds/, one registration line in
// register_builtin_experiment_kinds (experiments/README.md lists the kinds, config keys and metrics).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/records.hpp"
#include "experiments/spec.hpp"
#include "support/registry.hpp"

namespace mutwo::experiments {

class ResultsDb;

// One unit of work: configurations that are computed together (the four strategies of one model
// array come out of one search; one DTR heuristic sweeps its ratios on one parsed log).
struct Task {
  std::string label;                    // for progress lines: "bert-base x8, batch 16, a100-40gb"
  std::vector<nlohmann::json> configs;  // one per row, in the order run() returns them
  nlohmann::json inputs;  // what run() needs beyond the configs and is not hashed (a log's path)
};

// A row as a kind computes it; the runner adds mutwo_version, git_revision and config_hash.
struct ResultRow {
  RunRecord run;
  std::optional<PredictionRecord> prediction;
  std::optional<MeasurementRecord> measurement;  // kinds that execute (measured sweeps)
  ExperimentRowRecord row;  // row.config_json is filled by the runner from the task's config
};

// One factor of a sweep's size: what it counts (a sweep key, or what stands for several) and how
// many values it takes.
struct SweepFactor {
  std::string name;  // "model_counts", "model/batch pairs"
  int64_t values = 0;

  bool operator==(const SweepFactor&) const = default;
};

// A table for CSV export: header and cells (already formatted).
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

class ExperimentKind {
 public:
  virtual ~ExperimentKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;                     // one line, for --help
  virtual const std::vector<std::string_view>& sweep_keys() const = 0;  // keys [sweep] may hold
  virtual const std::vector<std::string_view>& figures() const = 0;     // figures plot.py draws
  // Checks the sweep's values against the registries (models, GPUs, policies, ...) and files;
  // throws mutwo::Error (UnknownNameError for names) naming the spec, the key and the value.
  virtual void validate(const ExperimentSpec& spec) const = 0;
  // The sweep's tasks in a fixed order (shards take every n-th). Each config is the row's whole
  // configuration; its canonical JSON is hashed to skip rows already stored.
  virtual std::vector<Task> expand(const ExperimentSpec& spec) const = 0;
  // The sweep's size before expand() materialises it: factors whose product is the number of
  // configurations expand() makes (an upper bound where it leaves some combinations out). Reads the
  // spec and at most the files validate() reads; builds nothing. Empty: the kind runs no sweep.
  virtual std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const = 0;
  // Computes a task's rows, one per config in order. Called from several threads at once: reads
  // only its arguments. Throws mutwo::Error on failure.
  virtual std::vector<ResultRow> run(const ExperimentSpec& spec, const Task& task) const = 0;
  // Whether tasks must run one at a time whatever --jobs says: kinds that time real executions,
  // whose measurements would include each other's contention for the device and the host.
  virtual bool runs_one_at_a_time(const ExperimentSpec&) const { return false; }
  // The experiment's table (the CSV export) from its stored rows, which come in the sweep's order,
  // one per configuration of the spec (experiment_table in runner.hpp); kinds that run nothing
  // read the database instead.
  virtual CsvTable table(const ExperimentSpec& spec, const std::vector<StoredExperimentRow>& rows,
                         const ResultsDb& db) const = 0;
};

// add throws Error on a duplicate or missing name; find throws UnknownNameError
// "unknown experiment kind 'x'; valid: strategies, ...".
class ExperimentKindRegistry : public Registry<std::unique_ptr<ExperimentKind>> {
 public:
  ExperimentKindRegistry() : Registry("experiment kind") {}
  const ExperimentKind& find(std::string_view name) const { return *Registry::find(name); }
  const std::vector<std::unique_ptr<ExperimentKind>>& kinds() const { return entries(); }
};

// One registration function per file under experiments/kinds/.
// Every kind registered by its own file under experiments/kinds/ (support/plugins.hpp), in rank
// order: strategies 10, policies 20, dtr 30, measured 40, published 50, max_models 60,
// server_schemes 70.
void register_builtin_experiment_kinds(ExperimentKindRegistry& registry);
const ExperimentKindRegistry& builtin_experiment_kinds();

}  // namespace mutwo::experiments

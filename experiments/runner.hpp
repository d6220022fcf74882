#pragma once
// The experiment runner: expands a spec into tasks (experiment_kind.hpp), keeps this shard's,
// skips those whose every row is stored (config hash + mutwo version), runs the rest on a pool of
// threads and writes each row in its own transaction from the calling thread, so an interrupted
// or killed run leaves only whole rows and a second run picks up where it stopped.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "experiments/experiment_kind.hpp"
#include "experiments/results_db.hpp"
#include "experiments/spec.hpp"

namespace mutwo::experiments {

// Shard index/count of a sweep: task t belongs to shard t % count. index is 0-based.
struct Shard {
  int32_t index = 0;
  int32_t count = 1;
};
// "2/4" -> {2, 4}. Throws mutwo::Error naming the value unless 0 <= i < n.
Shard parse_shard(std::string_view text);

// A task of this shard and which of its rows are stored.
struct PlannedTask {
  const Task* task = nullptr;
  std::vector<std::string> hashes;  // config_hash of each config
  std::vector<bool> stored;         // per config: a row with that hash and this mutwo version exists
  bool all_stored() const;
};

struct ExperimentPlan {
  std::vector<Task> tasks;           // the whole sweep, in order
  std::vector<PlannedTask> planned;  // this shard's tasks (pointing into tasks)
  int64_t rows = 0;                  // rows of this shard
  int64_t rows_stored = 0;
  int64_t tasks_stored = 0;  // this shard's tasks with every row stored
};

// The most configurations one spec may sweep, named in the refusal's message. A sweep is counted
// before it is expanded (every configuration is held in memory while it runs: 1M took 9.3 GB and
// 34 s just to list); the shipped specs are far below it (the largest, mutwo_table1, has 576).
inline constexpr int64_t kMaxSweepConfigurations = 100'000;

// The number of configurations of the spec's sweep: the product of its kind's sweep_factors, with
// checked multiplication (nullopt when it does not fit in int64; 0 for a kind that runs no sweep).
// Expands nothing.
std::optional<int64_t> sweep_size(const ExperimentSpec& spec);

// Checks the spec with its kind (ExperimentKind::validate), then its size: throws mutwo::Error
// "SPEC: sweep has N configurations (a model_counts x b gpus x ...), more than the limit L" above
// kMaxSweepConfigurations, then that no configuration comes twice (two values naming one setting,
// as a memory limit "device" and the GPU's own size): throws naming both. Reads the spec and the
// files it names and expands it; writes nothing.
void validate_experiment(const ExperimentSpec& spec);

// Validates the spec (validate_experiment) and expands it; with a database, marks what is stored.
// Writes nothing (a dry run).
ExperimentPlan plan_experiment(const ExperimentSpec& spec, const ResultsDb* db, Shard shard);

struct RunnerProgress {
  int64_t tasks = 0;          // tasks of this shard
  int64_t tasks_skipped = 0;  // every row already stored
  int64_t tasks_done = 0;     // run and written by this call
  int64_t rows_written = 0;
  double elapsed_s = 0;
  double eta_s = -1;       // time left at the mean time per task so far; -1 before the first
  std::string last_label;  // the task just written
};

struct RunnerOptions {
  int jobs = 0;  // worker threads; 0: one per hardware thread
  Shard shard;
  // Once set (a signal handler may set it), no task starts; running ones finish and are written.
  const std::atomic<bool>* stop = nullptr;
  // Called on the calling thread once the skip check is done and after every written task.
  std::function<void(const RunnerProgress&)> on_progress;
};

struct RunnerReport {
  int64_t tasks_total = 0;   // whole sweep
  RunnerProgress progress;   // this shard, at the end
  int64_t rows_present = 0;  // rows of this shard's tasks that were already stored
  bool interrupted = false;  // stopped before every task of the shard was written
};

// The spec's table: its kind's, over the stored rows of the spec's configurations in sweep order
// (configurations not yet run are absent; rows of configurations the spec no longer names are left
// out), so a resumed run gives the same table as an uninterrupted one.
CsvTable experiment_table(const ExperimentSpec& spec, const ResultsDb& db);

// Validates the spec (validate_experiment), registers it in the database (table experiments), then
// runs it. A task that throws stops the run: tasks already running finish and are written, then the
// error is rethrown naming the task. Throws ResultsDbError on a database failure.
RunnerReport run_experiment(const ExperimentSpec& spec, ResultsDb& db, const RunnerOptions& options);

}  // namespace mutwo::experiments

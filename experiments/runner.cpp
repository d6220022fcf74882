#include "experiments/runner.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/build_info.hpp"
#include "experiments/content_hash.hpp"
#include "support/error.hpp"

namespace mutwo::experiments {
namespace {

struct Done {
  size_t pending = 0;  // index into the pending list
  std::vector<ResultRow> rows;
  std::exception_ptr error;
};

}  // namespace

bool PlannedTask::all_stored() const {
  return std::all_of(stored.begin(), stored.end(), [](bool b) { return b; });
}

std::optional<int64_t> sweep_size(const ExperimentSpec& spec) {
  const std::vector<SweepFactor> factors = builtin_experiment_kinds().find(spec.kind).sweep_factors(spec);
  if (factors.empty()) return 0;  // the kind runs no sweep
  int64_t size = 1;
  for (const SweepFactor& f : factors) {
    if (__builtin_mul_overflow(size, f.values, &size)) return std::nullopt;
  }
  return size;
}

namespace {

// Throws the error validate_experiment describes when the sweep is over the limit.
void check_sweep_size(const ExperimentSpec& spec) {
  const std::optional<int64_t> size = sweep_size(spec);
  if (size && *size <= kMaxSweepConfigurations) return;
  std::vector<std::string> factors;
  for (const SweepFactor& f : builtin_experiment_kinds().find(spec.kind).sweep_factors(spec)) {
    if (f.values != 1) factors.push_back(fmt::format("{} {}", f.values, f.name));
  }
  throw Error(fmt::format(
      "{}: sweep has {} configurations ({}), more than the limit {}; split it into several specs",
      spec.source,
      size ? std::to_string(*size) : fmt::format("more than {}", std::numeric_limits<int64_t>::max()),
      fmt::join(factors, " x "), kMaxSweepConfigurations));
}

// The sweep's tasks, each configuration once. Two settings that name one value (a memory limit of
// "device" and the GPU's own size) gave one configuration twice: it ran and was stored twice, and
// its table lookup found the row already taken.
std::vector<Task> expand_each_once(const ExperimentKind& kind, const ExperimentSpec& spec) {
  std::vector<Task> tasks = kind.expand(spec);
  std::unordered_map<std::string, const Task*> seen;
  for (const Task& t : tasks) {
    for (const nlohmann::json& c : t.configs) {
      const auto [it, first] = seen.emplace(c.dump(), &t);
      if (!first) {
        throw Error(fmt::format(
            "{}: the sweep gives one configuration twice, as '{}' and as '{}' (resolved: {}); two of "
            "its values name one setting (a memory limit of \"device\" and the GPU's own size, say): "
            "give each once",
            spec.source, it->second->label, t.label, it->first));
      }
    }
  }
  return tasks;
}

// validate_experiment's checks; the tasks they expanded.
std::vector<Task> validated_tasks(const ExperimentSpec& spec) {
  const ExperimentKind& kind = builtin_experiment_kinds().find(spec.kind);
  check_sweep_size(spec);  // first: counting is instant, checking a spec builds its models
  kind.validate(spec);
  return expand_each_once(kind, spec);
}

}  // namespace

void validate_experiment(const ExperimentSpec& spec) {
  validated_tasks(spec);
}

ExperimentPlan plan_experiment(const ExperimentSpec& spec, const ResultsDb* db, Shard shard) {
  ExperimentPlan plan;
  plan.tasks = validated_tasks(spec);
  // One name, one kind: another kind's rows under the name were drawn as this one's.
  if (db != nullptr) {
    if (const std::optional<ExperimentRecord> stored = db->experiment(spec.name);
        stored && stored->kind != spec.kind) {
      throw Error(
          fmt::format("{}: experiment '{}' is of kind '{}' in {}, and this spec's kind is '{}': give "
                      "the spec another name, or use another database",
                      spec.source, spec.name, stored->kind, db->path().string(), spec.kind));
    }
  }
  const std::string version(mutwo_version());
  for (size_t t = 0; t < plan.tasks.size(); ++t) {
    if (static_cast<int64_t>(t % static_cast<size_t>(shard.count)) != shard.index) continue;
    PlannedTask p;
    p.task = &plan.tasks[t];
    for (const nlohmann::json& c : plan.tasks[t].configs) {
      p.hashes.push_back(config_hash(c));
      p.stored.push_back(db != nullptr && db->has_config(p.hashes.back(), version));
      ++plan.rows;
      plan.rows_stored += p.stored.back() ? 1 : 0;
    }
    plan.tasks_stored += p.all_stored() ? 1 : 0;
    plan.planned.push_back(std::move(p));
  }
  return plan;
}

CsvTable experiment_table(const ExperimentSpec& spec, const ResultsDb& db) {
  const ExperimentKind& kind = builtin_experiment_kinds().find(spec.kind);
  check_sweep_size(spec);  // before expand() holds every configuration
  std::map<std::string, StoredExperimentRow> by_config;
  for (StoredExperimentRow& r : db.experiment_rows(spec.name)) by_config[r.row.config_json] = std::move(r);
  std::vector<StoredExperimentRow> rows;
  for (const Task& t : expand_each_once(kind, spec)) {
    for (const nlohmann::json& c : t.configs) {
      auto found = by_config.find(c.dump());
      if (found != by_config.end()) rows.push_back(std::move(found->second));
    }
  }
  return kind.table(spec, rows, db);
}

Shard parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  auto whole = [](std::string_view s, int64_t& out) {
    if (s.empty() || s.size() > 9) return false;
    out = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    return true;
  };
  int64_t i = 0;
  int64_t n = 0;
  if (slash == std::string_view::npos || !whole(text.substr(0, slash), i) ||
      !whole(text.substr(slash + 1), n) || n < 1 || i >= n) {
    throw Error(fmt::format(
        "--shard '{}' must be i/n with whole numbers 0 <= i < n (shards are numbered from 0)", text));
  }
  return {static_cast<int32_t>(i), static_cast<int32_t>(n)};
}

RunnerReport run_experiment(const ExperimentSpec& spec, ResultsDb& db, const RunnerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ExperimentKind& kind = builtin_experiment_kinds().find(spec.kind);
  const ExperimentPlan plan = plan_experiment(spec, &db, options.shard);

  ExperimentRecord record;
  record.name = spec.name;
  record.kind = spec.kind;
  record.title = spec.title;
  record.figures = spec.figures;
  record.spec_hash = content_hash(spec.text);
  record.spec_toml = spec.text;
  db.put_experiment(record);

  RunnerReport report;
  report.tasks_total = static_cast<int64_t>(plan.tasks.size());
  report.rows_present = plan.rows_stored;
  RunnerProgress& progress = report.progress;
  progress.tasks = static_cast<int64_t>(plan.planned.size());
  progress.tasks_skipped = plan.tasks_stored;
  const std::string version(mutwo_version());
  std::vector<const PlannedTask*> pending;
  for (const PlannedTask& p : plan.planned) {
    if (!p.all_stored()) pending.push_back(&p);
  }
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (options.on_progress) options.on_progress(progress);

  // Workers take tasks in order and hand rows back; only this thread touches the database.
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Done> done;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  const auto stopping = [&] { return failed.load() || (options.stop != nullptr && options.stop->load()); };
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int asked = kind.runs_one_at_a_time(spec) ? 1 : (options.jobs > 0 ? options.jobs : hardware);
  const int jobs = std::max(1, std::min(asked, static_cast<int>(pending.size())));
  int running = jobs;
  std::vector<std::thread> workers;
  for (int w = 0; w < jobs && !pending.empty(); ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < pending.size() && !stopping(); i = next++) {
        Done d;
        d.pending = i;
        try {
          d.rows = kind.run(spec, *pending[i]->task);
        } catch (...) {
          d.error = std::current_exception();
          failed = true;
        }
        const std::lock_guard<std::mutex> lock(mutex);
        done.push_back(std::move(d));
        ready.notify_one();
      }
      const std::lock_guard<std::mutex> lock(mutex);
      --running;
      ready.notify_one();
    });
  }
  if (pending.empty()) running = 0;

  std::exception_ptr first_error;
  std::string failed_label;
  auto write = [&](Done& d) {
    const PlannedTask& p = *pending[d.pending];
    if (d.rows.size() != p.task->configs.size()) {
      throw Error(fmt::format("experiment '{}': task '{}' returned {} rows for {} configurations", spec.name,
                              p.task->label, d.rows.size(), p.task->configs.size()));
    }
    for (size_t r = 0; r < d.rows.size(); ++r) {
      if (p.stored[r]) continue;
      ResultRow& row = d.rows[r];
      row.run.config_hash = p.hashes[r];
      row.run.mutwo_version = version;
      row.run.git_revision = std::string(git_revision());
      row.row.config_json = p.task->configs[r].dump();
      if (db.insert_once(row.run, row.prediction, row.measurement, row.row)) ++progress.rows_written;
    }
    ++progress.tasks_done;
    progress.last_label = p.task->label;
    progress.elapsed_s = elapsed();
    const int64_t left = static_cast<int64_t>(pending.size()) - progress.tasks_done;
    progress.eta_s =
        progress.elapsed_s / static_cast<double>(progress.tasks_done) * static_cast<double>(left);
    if (options.on_progress) options.on_progress(progress);
  };
  try {
    while (true) {
      std::unique_lock<std::mutex> lock(mutex);
      ready.wait(lock, [&] { return !done.empty() || running == 0; });
      if (done.empty()) break;
      Done d = std::move(done.front());
      done.pop_front();
      lock.unlock();
      if (d.error) {
        if (!first_error) {
          first_error = d.error;
          failed_label = pending[d.pending]->task->label;
        }
        continue;
      }
      write(d);
    }
  } catch (...) {
    failed = true;  // a database failure: let the workers drain, then report it
    for (std::thread& w : workers) w.join();
    throw;
  }
  for (std::thread& w : workers) w.join();
  if (first_error) {
    try {
      std::rethrow_exception(first_error);
    } catch (const std::exception& e) {
      throw Error(
          fmt::format("experiment '{}': configuration '{}' failed: {}", spec.name, failed_label, e.what()));
    }
  }
  progress.elapsed_s = elapsed();
  report.interrupted = progress.tasks_done + progress.tasks_skipped < progress.tasks;
  return report;
}

}  // namespace mutwo::experiments

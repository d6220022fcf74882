#include "experiments/db_merge.hpp"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "experiments/results_cells.hpp"
#include "experiments/results_schema.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {
namespace {

namespace fs = std::filesystem;

// Every RunRecord field but id, as one comparable text. JSON prints doubles so that they read back
// exactly; -0.0 is written as 0.0 because the two compare equal.
std::string content_key(const RunRecord& r) {
  const double cap = r.memory_cap_fraction == 0.0 ? 0.0 : r.memory_cap_fraction;
  return nlohmann::json::array({r.kind,
                                r.created_at,
                                r.model,
                                r.models,
                                r.partition,
                                r.policy,
                                r.batch_size,
                                r.seq_len,
                                r.image_size,
                                r.dtype,
                                r.optimizer,
                                r.device,
                                r.gpu,
                                r.memory_limit_bytes,
                                cap,
                                r.cost_source,
                                r.mutwo_version,
                                r.git_revision,
                                r.config_hash,
                                r.schedule_hash,
                                r.notes})
      .dump();
}

// A stored run whole: its record with what was predicted and measured. Two `mutwo run`s of one
// configuration are two measurements (their times differ), both kept; a copy of one is skipped.
std::string stored_key(const StoredRun& r) {
  nlohmann::json j = nlohmann::json::array({content_key(r.run)});
  if (const auto& p = r.prediction) {
    j.push_back({p->step_time_ns, p->peak_bytes, p->resident_bytes, p->compute_stall_ns, p->recompute_ns,
                 p->bytes_swapped_out, p->bytes_swapped_in, p->memory_limit_bytes, p->samples_per_step,
                 p->oom, p->oom_message});
  }
  if (const auto& m = r.measurement) {
    j.push_back({m->step_time_ns, m->step_time_min_ns, m->step_time_max_ns, m->iterations,
                 m->warmup_iterations, m->step_times_ns, m->peak_bytes, m->peak_source, m->oom,
                 m->oom_message, m->losses, m->samples_per_step});
  }
  return j.dump();
}

// The identity of a run as the merge sees it: its configuration's hash and the mutwo that ran it,
// and whether it is a row of an experiment (whose configurations are stored once per mutwo).
struct RunKey {
  int64_t id = 0;
  std::string config_hash;
  std::string mutwo_version;
  bool experiment_row = false;
};

std::vector<RunKey> run_keys(const ResultsDb& db) {
  // A version-1 database has no experiment rows.
  sqlite::Statement s = db.connection().prepare(
      db.schema_version() < 2 ? "SELECT id, config_hash, mutwo_version, 0 FROM runs ORDER BY id"
                              : "SELECT r.id, r.config_hash, r.mutwo_version, EXISTS (SELECT 1 FROM "
                                "experiment_rows e WHERE e.run_id = r.id) FROM runs r ORDER BY r.id",
      "cannot read runs");
  std::vector<RunKey> keys;
  while (s.step()) {
    const CellReader cell(db.connection(), s, "runs", fmt::format("run {}", s.int64(0)));
    keys.push_back({s.int64(0), cell.text(1), cell.text(2), s.int64(3) != 0});
  }
  return keys;
}

// The runs a database holds, read once: an experiment's by configuration, any other by content (a
// repeated `mutwo run` shares its configuration's hash with the runs before it).
class PresentRuns {
 public:
  explicit PresentRuns(const ResultsDb& db) {
    for (const RunKey& key : run_keys(db)) {
      if (by_config(key)) {
        configs_.emplace(key.config_hash, key.mutwo_version);
      } else if (std::optional<StoredRun> run = db.run(key.id)) {
        contents_.insert(stored_key(*run));
      }
    }
  }

  static bool by_config(const RunKey& key) { return key.experiment_row && !key.config_hash.empty(); }
  bool has_config(const RunKey& key) const { return configs_.contains({key.config_hash, key.mutwo_version}); }
  bool has_content(const StoredRun& run) const { return contents_.contains(stored_key(run)); }

  void add(const RunKey& key, const StoredRun& run) {
    if (by_config(key)) {
      configs_.emplace(key.config_hash, key.mutwo_version);
    } else {
      contents_.insert(stored_key(run));
    }
  }

 private:
  std::set<std::pair<std::string, std::string>> configs_;  // (config_hash, mutwo_version)
  std::set<std::string> contents_;                         // content_key of runs without a hash
};

// Lets commits on a connection skip their own fsync for as long as it lives (PRAGMA synchronous =
// NORMAL; the previous level comes back after). In WAL mode a killed merge still loses nothing it
// committed, and a power loss at most its last runs, whole (never part of one), which running the
// merge again copies. A merge of 20k runs took 4-8 s this way, 77 s with an fsync per run.
class RelaxedSync {
 public:
  explicit RelaxedSync(const sqlite::Connection& connection)
      : connection_(connection),
        previous_(connection.query_text("PRAGMA synchronous", "cannot read the synchronous level")) {
    connection_.exec("PRAGMA synchronous = NORMAL", "cannot set the synchronous level");
  }
  RelaxedSync(const RelaxedSync&) = delete;
  RelaxedSync& operator=(const RelaxedSync&) = delete;
  ~RelaxedSync() {
    try {
      connection_.exec(fmt::format("PRAGMA synchronous = {}", previous_),
                       "cannot restore the synchronous level");
    } catch (const ResultsDbError&) {
      // The level only matters for later commits on this handle; the merged runs are committed.
    }
  }

 private:
  const sqlite::Connection& connection_;
  std::string previous_;  // "0".."3" as PRAGMA synchronous reports it
};

void merge_experiments(ResultsDb& out, const ResultsDb& in, MergeCounts& counts) {
  for (const ExperimentRecord& theirs : in.experiments()) {
    const std::optional<ExperimentRecord> ours = out.experiment(theirs.name);
    if (!ours) {
      out.put_experiment(theirs);
      ++counts.experiments_added;
    } else if (theirs.updated_at > ours->updated_at) {
      out.put_experiment(theirs);
      ++counts.experiments_updated;
    } else {
      ++counts.experiments_kept;
    }
  }
}

// One name, one kind: refused before a run is copied (another kind's rows under the name were drawn
// as the first kind's).
void check_experiment_kinds(const ResultsDb& out, const ResultsDb& in) {
  for (const ExperimentRecord& theirs : in.experiments()) {
    const std::optional<ExperimentRecord> ours = out.experiment(theirs.name);
    if (ours && ours->kind != theirs.kind) {
      throw ResultsDbError(fmt::format(
          "cannot merge '{}' into '{}': experiment '{}' is of kind '{}' in one and '{}' in the other; rename "
          "one of them (its spec's name) and run it again",
          in.path().string(), out.path().string(), theirs.name, theirs.kind, ours->kind));
    }
  }
}

}  // namespace

MergeCounts& MergeCounts::operator+=(const MergeCounts& other) {
  runs_added += other.runs_added;
  runs_skipped += other.runs_skipped;
  experiments_added += other.experiments_added;
  experiments_updated += other.experiments_updated;
  experiments_kept += other.experiments_kept;
  return *this;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  const fs::path canonical_a = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path canonical_b = fs::weakly_canonical(b, ec);
  return !ec && canonical_a == canonical_b;
}

void check_readable(const ResultsDb& db) {
  sqlite::Statement s = db.connection().prepare("PRAGMA quick_check", "cannot check the database");
  std::vector<std::string> problems;
  while (s.step()) {
    std::string line = s.text(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  if (!problems.empty()) {
    throw ResultsDbError(fmt::format("results database '{}' is corrupt (quick_check: {})", db.path().string(),
                                     fmt::join(problems, "; ")));
  }
}

void check_sound(const ResultsDb& db) {
  check_readable(db);
  db.check_values();
}

bool holds_tables(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) == 0 || ec) return false;
  const sqlite::Connection c = sqlite::Connection::open(path, sqlite::Connection::Mode::read_only);
  return !table_names(c).empty();
}

void check_results_destination(const fs::path& path, std::string_view what) {
  // Read-only first: create mode would switch the file to WAL before a page is read.
  if (holds_tables(path)) {
    check_sound(ResultsDb::open(path, ResultsDb::OpenMode::existing));
  } else {
    support::writable_target(path, what);
  }
}

MergeCounts merge_results(ResultsDb& out, const ResultsDb& in) {
  if (same_file(out.path(), in.path())) {
    throw ResultsDbError(fmt::format(
        "cannot merge results database '{}' into itself{}", in.path().string(),
        in.path() == out.path() ? "" : fmt::format(" ('{}' is the same file)", out.path().string())));
  }
  if (out.schema_version() != kResultsSchemaVersion) {
    throw ResultsDbError(fmt::format(
        "results database '{}' has schema version {}; a merge writes version {} (open it in create mode)",
        out.path().string(), out.schema_version(), kResultsSchemaVersion));
  }
  check_experiment_kinds(out, in);
  MergeCounts counts;
  const RelaxedSync relaxed(out.connection());
  PresentRuns present(out);
  for (const RunKey& key : run_keys(in)) {
    if (PresentRuns::by_config(key) && present.has_config(key)) {
      ++counts.runs_skipped;
      continue;
    }
    std::optional<StoredRun> stored = in.run(key.id);
    if (!stored) continue;  // deleted by another connection since the keys were read
    if (!PresentRuns::by_config(key) && present.has_content(*stored)) {
      ++counts.runs_skipped;
      continue;
    }
    out.insert(stored->run, stored->prediction, stored->measurement, in.op_times(key.id),
               in.experiment_row(key.id));
    present.add(key, *stored);
    ++counts.runs_added;
  }
  merge_experiments(out, in, counts);
  return counts;
}

}  // namespace mutwo::experiments

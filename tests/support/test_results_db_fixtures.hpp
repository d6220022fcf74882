#pragma once
// Fixtures shared by tests/test_results_db.cpp and tests/test_results_db_writes.cpp.
#include "experiments/results_db.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "experiments/build_info.hpp"
#include "experiments/results_schema.hpp"
#include "sim/prediction.hpp"

using namespace mutwo::experiments;
namespace fs = std::filesystem;

namespace {

// One scratch directory per test, removed afterwards.
struct TempDir : mutwo::test::TempDir {
  TempDir() : mutwo::test::TempDir("results-db") {}
};

inline std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A second, raw connection to the file, for what ResultsDb does not offer (pragmas, counts, damage).
inline sqlite::Connection raw(const fs::path& path) {
  return sqlite::Connection::open(path, sqlite::Connection::Mode::read_write);
}

// doctest's matcher for a message built at run time (it keeps its own copy of the text).
inline doctest::Contains contains(const std::string& text) {
  return doctest::Contains(text.c_str());
}

inline int64_t count_rows(const sqlite::Connection& c, const std::string& table) {
  return std::stoll(c.query_text("SELECT count(*) FROM " + table, "count"));
}

inline RunRecord full_run() {
  RunRecord r;
  r.kind = "run";
  r.created_at = "2026-11-23T03:00:00Z";
  r.model = "bert-base";
  r.models = 4;
  r.partition = "2,2";
  r.policy = "capuchin";
  r.batch_size = 16;
  r.seq_len = 128;
  r.image_size = 224;
  r.dtype = "fp16";
  r.optimizer = "adamw";
  r.device = "cuda:0 NVIDIA H100 80GB HBM3";
  r.gpu = "h100-sxm-80gb";
  r.memory_limit_bytes = int64_t{40} << 30;
  r.memory_cap_fraction = 0.5;
  r.cost_source = "measured";
  r.mutwo_version = "0.1.0";
  r.git_revision = "c1a9490+dirty";
  r.config_hash = "9f86d081884c7d65";
  r.schedule_hash = "60303ae22b998861";
  r.notes = "quotes ' \" and a ; survive; ünïcode too";
  return r;
}

inline PredictionRecord full_prediction() {
  PredictionRecord p;
  p.step_time_ns = 123'456'789;
  p.peak_bytes = std::numeric_limits<int64_t>::max();  // the full int64 range is exact
  p.resident_bytes = 7'046'811'392;
  p.compute_stall_ns = 1'500'000;
  p.recompute_ns = 2'500'000;
  p.bytes_swapped_out = 1'073'741'824;
  p.bytes_swapped_in = 1'073'741'825;
  p.memory_limit_bytes = int64_t{40} << 30;
  p.samples_per_step = 64;
  p.oom = true;
  p.oom_message = "out of memory at instruction 17";
  return p;
}

inline MeasurementRecord full_measurement() {
  MeasurementRecord m;
  m.step_time_ns = 130'000'000;
  m.step_time_min_ns = 120'000'001;
  m.step_time_max_ns = 140'000'002;
  m.iterations = 3;
  m.warmup_iterations = 2;
  m.step_times_ns = {140'000'002, 120'000'001, 130'000'000};
  m.peak_bytes = 41'000'000'000;
  m.peak_source = "cuda_allocator";
  m.oom = false;
  m.oom_message = "";
  m.losses = {2.302585092994046, 1.0 / 3.0, 1e-300, -0.0};
  m.samples_per_step = 64;
  return m;
}

inline std::vector<OpTimeRecord> some_op_times() {
  return {{0, "embeddings", "embedding", "forward", 4, 1'000, 900},
          {1, "s0/fc1", "linear", "forward", 2, 2'000, -1},
          {7, "s1/fc1_backward", "linear_backward", "backward", 2, 0, 0}};
}

// The version-1 layout as mutwo 0.1.0 created it (results_schema.cpp's kSchemaV1Sql, copied so the
// test keeps describing the old files even if that constant changes).
constexpr const char* kSchemaV1Sql = R"sql(
CREATE TABLE schema_version (
  version INTEGER NOT NULL
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'simulate', 'profile')),
  created_at TEXT NOT NULL,
  model TEXT NOT NULL,
  models INTEGER NOT NULL CHECK (models >= 0),
  partition TEXT NOT NULL,
  policy TEXT NOT NULL,
  batch_size INTEGER NOT NULL CHECK (batch_size >= 0),
  seq_len INTEGER NOT NULL CHECK (seq_len >= 0),
  image_size INTEGER NOT NULL CHECK (image_size >= 0),
  dtype TEXT NOT NULL,
  optimizer TEXT NOT NULL,
  device TEXT NOT NULL,
  gpu TEXT NOT NULL,
  memory_limit_bytes INTEGER NOT NULL CHECK (memory_limit_bytes >= 0),
  memory_cap_fraction REAL NOT NULL CHECK (memory_cap_fraction >= 0 AND memory_cap_fraction <= 1),
  cost_source TEXT NOT NULL,
  mutwo_version TEXT NOT NULL,
  git_revision TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  schedule_hash TEXT NOT NULL,
  notes TEXT NOT NULL
);
CREATE INDEX runs_by_config ON runs (config_hash, mutwo_version);
CREATE TABLE predictions (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  step_time_ns INTEGER NOT NULL CHECK (step_time_ns >= 0),
  peak_bytes INTEGER NOT NULL CHECK (peak_bytes >= 0),
  resident_bytes INTEGER NOT NULL CHECK (resident_bytes >= 0),
  compute_stall_ns INTEGER NOT NULL CHECK (compute_stall_ns >= 0),
  recompute_ns INTEGER NOT NULL CHECK (recompute_ns >= 0),
  bytes_swapped_out INTEGER NOT NULL CHECK (bytes_swapped_out >= 0),
  bytes_swapped_in INTEGER NOT NULL CHECK (bytes_swapped_in >= 0),
  memory_limit_bytes INTEGER NOT NULL CHECK (memory_limit_bytes >= 0),
  samples_per_step INTEGER NOT NULL CHECK (samples_per_step >= 0),
  oom INTEGER NOT NULL CHECK (oom IN (0, 1)),
  oom_message TEXT NOT NULL
);
CREATE TABLE measurements (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  step_time_ns INTEGER NOT NULL CHECK (step_time_ns >= 0),
  step_time_min_ns INTEGER NOT NULL CHECK (step_time_min_ns >= 0),
  step_time_max_ns INTEGER NOT NULL CHECK (step_time_max_ns >= 0),
  iterations INTEGER NOT NULL CHECK (iterations >= 0),
  warmup_iterations INTEGER NOT NULL CHECK (warmup_iterations >= 0),
  step_times_ns TEXT NOT NULL,
  peak_bytes INTEGER NOT NULL CHECK (peak_bytes >= 0),
  peak_source TEXT NOT NULL,
  oom INTEGER NOT NULL CHECK (oom IN (0, 1)),
  oom_message TEXT NOT NULL,
  losses TEXT NOT NULL,
  samples_per_step INTEGER NOT NULL CHECK (samples_per_step >= 0)
);
CREATE TABLE op_times (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  op_id INTEGER NOT NULL CHECK (op_id >= 0),
  op_name TEXT NOT NULL,
  kind TEXT NOT NULL,
  phase TEXT NOT NULL,
  width INTEGER NOT NULL CHECK (width >= 1),
  measured_ns INTEGER NOT NULL CHECK (measured_ns >= 0),
  predicted_ns INTEGER NOT NULL CHECK (predicted_ns >= -1),
  PRIMARY KEY (run_id, op_id)
);
)sql";

// Writes a version-1 file by hand (rollback journal, as SQLite starts): the schema, version 1 and
// full_run() as run 1.
inline void write_v1_file(const fs::path& path) {
  const sqlite::Connection c = sqlite::Connection::open(path, sqlite::Connection::Mode::read_write_create);
  c.exec(kSchemaV1Sql, "create v1");
  c.exec("INSERT INTO schema_version (version) VALUES (1)", "version 1");
  const RunRecord r = full_run();
  c.prepare(
       "INSERT INTO runs (kind, created_at, model, models, partition, policy, batch_size, seq_len, "
       "image_size, "
       "dtype, optimizer, device, gpu, memory_limit_bytes, memory_cap_fraction, cost_source, mutwo_version, "
       "git_revision, config_hash, schedule_hash, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
       "?11, "
       "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
       "insert run")
      .bind_all(r.kind, r.created_at, r.model, r.models, r.partition, r.policy, r.batch_size, r.seq_len,
                r.image_size, r.dtype, r.optimizer, r.device, r.gpu, r.memory_limit_bytes,
                r.memory_cap_fraction, r.cost_source, r.mutwo_version, r.git_revision, r.config_hash,
                r.schedule_hash, r.notes)
      .run();
}

// A run of configuration config_hash (the rest as full_run()).
inline RunRecord run_of_config(const std::string& config_hash) {
  RunRecord r = full_run();
  r.kind = "simulate";
  r.config_hash = config_hash;
  return r;
}

inline ExperimentRowRecord experiment_row_of(const std::string& experiment, const std::string& series,
                                             std::vector<Metric> metrics = {}) {
  ExperimentRowRecord row;
  row.experiment = experiment;
  row.series = series;
  row.feasible = true;
  row.config_json = R"({"experiment":")" + experiment + R"(","strategy":")" + series + R"("})";
  row.metrics = std::move(metrics);
  return row;
}

inline ExperimentRecord experiment_record(const std::string& name, const std::string& title) {
  ExperimentRecord e;
  e.name = name;
  e.kind = "strategies";
  e.title = title;
  e.figures = {"step_time_vs_models", "breakdown"};
  e.spec_hash = "spec-" + name;
  e.spec_toml = "name = \"" + name + "\"\nkind = \"strategies\"  # a 'comment' ; with \"quotes\"\n";
  e.updated_at = "2026-11-23T03:00:00Z";
  return e;
}

}  // namespace

// `mutwo experiment SPEC`: runs an experiment spec (experiments/*.toml, or a shipped one by name)
// into the results database with progress and ETA on stderr, then writes its CSV. Ctrl-C (or
// SIGTERM from a batch scheduler) stops starting configurations; those running finish and are
// written whole; a second Ctrl-C quits at once (rows already committed stay whole either way).
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "api/experiment.hpp"
#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/table.hpp"
#include "experiments/csv_file.hpp"
#include "experiments/db_merge.hpp"
#include "experiments/experiment_kind.hpp"
#include "experiments/runner.hpp"
#include "experiments/spec.hpp"
#include "experiments/sweep_keys.hpp"
#include "support/error.hpp"

namespace mutwo::cli {
namespace {

struct ExperimentOptions {
  std::string spec;
  std::string db = "results.db";
  std::string shard = "0/1";
  int jobs = 0;
  std::string out = "results";
  bool dry_run = false;
  bool json = false;
};

// Lock-free, so storing to it is async-signal-safe.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int signal) {
  g_stop.store(true);
  std::signal(signal, SIG_DFL);  // a second one ends the process at once
}

// Progress on stderr, a line per configuration (ProgressLine: rewritten in place on a terminal).
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool tty) : line_(std::cerr, tty, 0) {}
  void operator()(const experiments::RunnerProgress& p) {
    const int64_t to_run = p.tasks - p.tasks_skipped;
    if (p.tasks_done == 0) return;
    const std::string eta = p.tasks_done < to_run ? fmt::format(", ETA {}", clock_text(p.eta_s)) : "";
    line_.update(fmt::format("[{}/{}] {:3.0f}%  {} elapsed{}  {}", p.tasks_done, to_run,
                             100.0 * static_cast<double>(p.tasks_done) / static_cast<double>(to_run),
                             clock_text(p.elapsed_s), eta, p.last_label));
    if (p.tasks_done == to_run) line_.keep();
  }
  // An interrupted run's last line stays.
  void finish_line() { line_.keep(); }

 private:
  ProgressLine line_;
};

std::string shard_text(const experiments::Shard& s) {
  return s.count == 1 ? std::string("the whole sweep") : fmt::format("shard {}/{}", s.index, s.count);
}

void run_dry(const experiments::ExperimentSpec& spec, const ExperimentOptions& opts,
             const experiments::Shard& shard) {
  std::optional<experiments::ResultsDb> db;
  std::error_code ec;
  if (std::filesystem::exists(opts.db, ec))
    db = experiments::ResultsDb::open(opts.db, experiments::ResultsDb::OpenMode::existing);
  const experiments::ExperimentPlan plan = experiments::plan_experiment(spec, db ? &*db : nullptr, shard);
  if (opts.json) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const experiments::PlannedTask& t : plan.planned) {
      tasks.push_back(
          {{"label", t.task->label}, {"rows", t.task->configs.size()}, {"stored", t.all_stored()}});
    }
    std::cout
        << nlohmann::json{{"experiment", spec.name}, {"kind", spec.kind}, {"tasks_total", plan.tasks.size()},
                          {"tasks", tasks},          {"rows", plan.rows}, {"rows_stored", plan.rows_stored}}
               .dump(2)
        << "\n";
    return;
  }
  Table table({{"configuration", Align::left}, {"rows", Align::right}, {"stored", Align::left}});
  for (const experiments::PlannedTask& t : plan.planned) {
    table.add_row({t.task->label, std::to_string(t.task->configs.size()), t.all_stored() ? "yes" : "no"});
  }
  std::cout << fmt::format("{} ({}): {} of {} configurations in {}, {} rows, {} already in {}\n", spec.name,
                           spec.kind, plan.planned.size(), plan.tasks.size(), shard_text(shard), plan.rows,
                           plan.rows_stored, opts.db)
            << table.render();
}

void run_experiment_command(const ExperimentOptions& opts) {
  const experiments::ExperimentSpec spec = experiments::read_spec(opts.spec);
  const experiments::Shard shard = experiments::parse_shard(opts.shard);
  // Everything that can be checked is, before a file is created or a configuration run: the spec's
  // values and its size, then where the CSV goes, then the database (every page, table, column and
  // cell of an existing one), so a refused run leaves no file behind and no rows half way.
  experiments::validate_experiment(spec);
  if (opts.dry_run) return run_dry(spec, opts, shard);
  const std::string csv_path = (std::filesystem::path(opts.out) / (spec.name + ".csv")).string();
  try {
    experiments::check_csv_destination(csv_path);
  } catch (const Error& e) {
    throw Error(fmt::format("--out '{}': {}", opts.out, e.what()));
  }
  experiments::check_results_destination(opts.db, "--db");
  // The database is not the CSV, nor a folder on its way: the CSV overwrote a database whose sweep had
  // just run, and a folder named as the database failed only after the whole sweep.
  {
    namespace fs = std::filesystem;
    const auto resolved = [](const fs::path& path) {
      std::error_code ec;
      const fs::path r = fs::weakly_canonical(fs::absolute(path), ec);
      return ec ? fs::absolute(path).lexically_normal() : r;
    };
    const fs::path db_path = resolved(opts.db), csv = resolved(csv_path);
    for (fs::path p = csv; p.has_relative_path(); p = p.parent_path()) {
      if (p != db_path) continue;
      throw Error(
          p == csv ? fmt::format("--db '{}' is the CSV --out '{}' writes ({}): give each its own file",
                                 opts.db, opts.out, csv_path)
                   : fmt::format("--out '{}' needs '{}' to be a folder, and it is the --db file: give each "
                                 "its own path",
                                 opts.out, opts.db));
    }
  }

  experiments::ResultsDb db = experiments::ResultsDb::open(opts.db);
  g_stop = false;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  ProgressPrinter printer(isatty(STDERR_FILENO) != 0);
  bool announced = false;
  experiments::RunnerOptions options;
  options.jobs = opts.jobs;
  options.shard = shard;
  options.stop = &g_stop;
  options.on_progress = [&](const experiments::RunnerProgress& p) {
    if (!announced) {
      announced = true;
      std::cerr << fmt::format("{}: {} configurations in {}, {} already in {}; running {}\n", spec.name,
                               p.tasks, shard_text(shard), p.tasks_skipped, opts.db,
                               p.tasks - p.tasks_skipped);
    }
    printer(p);
  };
  experiments::RunnerReport report;
  try {
    report = experiments::run_experiment(spec, db, options);
  } catch (...) {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    throw;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const experiments::RunnerProgress& p = report.progress;
  printer.finish_line();

  std::string csv;
  if (!report.interrupted) {
    csv = csv_path;
    experiments::write_csv(experiments::experiment_table(spec, db), csv);
  }
  if (opts.json) {
    std::cout << api::experiment_json(spec, report, opts.db, opts.shard, csv).dump(2) << "\n";
  } else {
    std::cout << fmt::format(
        "{}: {} configurations in {}: {} run, {} already stored; {} rows written to {} in {}\n", spec.name,
        p.tasks, shard_text(shard), p.tasks_done, p.tasks_skipped, p.rows_written, opts.db,
        clock_text(p.elapsed_s));
    if (!csv.empty()) {
      std::cout << fmt::format("table: {}\n", csv);
      if (!spec.figures.empty()) {
        std::cout << fmt::format("figures: python3 scripts/plot.py {} --experiment {} --out {}\n", opts.db,
                                 spec.name, opts.out);
      }
    }
  }
  if (report.interrupted) {
    throw Error(
        fmt::format("interrupted: {} of {} configurations written, each row whole; run the same command "
                    "again to finish the rest",
                    p.tasks_done, p.tasks - p.tasks_skipped));
  }
}

std::string specs_help() {
  std::string text = "Shipped specs (run by name; experiments/*.toml in the source tree):";
  for (const experiments::ShippedSpec& s : experiments::shipped_specs())
    text += fmt::format("\n  {}", s.name);
  text += "\nKinds (a spec's `kind`):";
  for (const auto& k : experiments::builtin_experiment_kinds().kinds()) {
    text +=
        fmt::format("\n  {:<11} {}; figures: {}", k->name(), k->description(), fmt::join(k->figures(), ", "));
  }
  text += "\nSweep keys ([sweep]; each kind accepts some):";
  for (const experiments::SweepKeyInfo& k : experiments::sweep_key_table()) {
    text += fmt::format("\n  {:<16} {}", k.name, k.help);
  }
  text += "\nShards are numbered from 0: --shard 0/4 ... --shard 3/4; merge them with `mutwo db merge`.";
  return text;
}

}  // namespace

void add_experiment_command(CLI::App& app) {
  auto opts = std::make_shared<ExperimentOptions>();
  CLI::App* cmd = app.add_subcommand(
      "experiment",
      "Run an experiment spec (a sweep) into the results database, skipping configurations already stored; "
      "write its CSV");
  cmd->footer(specs_help());
  cmd->add_option("spec", opts->spec, "A spec file (*.toml) or a shipped spec's name (mutwo_throughput, ...)")
      ->required();
  cmd->add_option("--db", opts->db, "Results database (created if absent)")->capture_default_str();
  cmd->add_option("--shard", opts->shard, "Run only shard i of n (i/n, 0-based): every n-th configuration")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", opts->jobs, "Configurations run in parallel (0: one per CPU core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--out", opts->out, "Folder of the CSV (<out>/<experiment>.csv)")->capture_default_str();
  cmd->add_flag("--dry-run", opts->dry_run,
                "List the configurations and which are stored; run and write nothing");
  cmd->add_flag("--json", opts->json, "Print the summary as JSON");
  cmd->callback([opts] { run_experiment_command(*opts); });
}

}  // namespace mutwo::cli

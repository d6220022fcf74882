// `mutwo replay --dtr-log FILE`: DTR's simulated experiment on one of its operator logs, with
// simrd's semantics (sim/dtr_replay): the baseline (peak memory and compute with no budget), then
// for each heuristic and budget ratio (0.1 ... 1.0 of the baseline peak by default) whether the
// iteration fits, and at what compute overhead.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/number_flags.hpp"
#include "cli/table.hpp"
#include "io/dtr_log.hpp"
#include "io/trace_import.hpp"
#include "policies/dtr_heuristics.hpp"
#include "sim/dtr_replay.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::cli {
namespace {

struct ReplayOptions {
  std::string dtr_log;
  std::vector<std::string> heuristics = {"dtr"};
  std::vector<double> ratios;  // empty: the paper's 0.1 ... 1.0
  double overhead_limit = sim::kDtrOverheadLimit;
  bool no_start = false;
  int jobs = 0;
  bool json = false;
};

std::string outcome_cell(const sim::DtrSweepRow& row) {
  switch (row.result.outcome) {
    case sim::DtrOutcome::ok:
      return fmt::format("{:.4f}", row.overhead);
    case sim::DtrOutcome::oom:
      return "OOM";
    case sim::DtrOutcome::remat_limit_exceeded:
      return "remat limit exceeded";
  }
  return "?";
}

void run_replay(const ReplayOptions& opts) {
  const std::string text = support::read_text_file(opts.dtr_log);
  if (const auto format = io::detect_trace_format(text); format != io::TraceFormat::dtr) {
    throw FormatError(fmt::format(
        "{}: {}, not {}", opts.dtr_log,
        format ? "is " + std::string(io::trace_format_description(*format)) : std::string("unreadable"),
        io::trace_format_description(io::TraceFormat::dtr)));
  }
  const std::string source = std::filesystem::path(opts.dtr_log).filename().string();
  const io::DtrLog log = io::parse_dtr_log(text, source, {.skip_to_start = !opts.no_start});
  const sim::DtrBaseline baseline = sim::dtr_baseline(log);

  std::vector<std::string> names = opts.heuristics;
  if (names.size() > 1 && std::find(names.begin(), names.end(), "all") != names.end()) {
    throw Error(fmt::format("--heuristic all names every heuristic; give it alone, not with {}",
                            fmt::join(names, ", ")));
  }
  if (names.size() == 1 && names[0] == "all") {
    names.clear();
    for (const policies::DtrHeuristicInfo& h : policies::dtr_heuristics()) names.push_back(h.name);
  }
  std::vector<std::unique_ptr<sim::EvictionHeuristic>> owned;
  std::vector<const sim::EvictionHeuristic*> heuristics;
  for (const std::string& name : names) {
    owned.push_back(policies::make_dtr_heuristic(name));
    heuristics.push_back(owned.back().get());
  }
  const std::vector<double>& ratios = opts.ratios.empty() ? sim::dtr_paper_ratios() : opts.ratios;
  // Refuses, before any run, a log with no compute or no memory and a budget past int64.
  const std::vector<sim::DtrSweepRow> rows =
      sim::sweep_dtr_log(log, baseline, ratios, heuristics, opts.jobs, opts.overhead_limit, source);

  if (opts.json) {  // JSON Lines: one record per heuristic and ratio
    for (const sim::DtrSweepRow& row : rows) {
      const sim::DtrReplayResult& r = row.result;
      nlohmann::ordered_json j;
      j["log"] = source;
      j["heuristic"] = row.heuristic;
      j["ratio"] = row.ratio;
      j["budget_bytes"] = r.budget_bytes;
      j["outcome"] = std::string(sim::dtr_outcome_name(r.outcome));
      j["overhead"] = r.outcome == sim::DtrOutcome::ok ? nlohmann::ordered_json(row.overhead) : nullptr;
      j["peak_bytes"] = r.peak_bytes;
      j["remat_ns"] = r.remat_compute_ns;
      j["remat_ops"] = r.remat_ops;
      j["evictions"] = r.evictions;
      j["evictions_eager"] = r.evictions_eager;
      j["clock_ns"] = r.clock_ns;
      j["baseline_peak_bytes"] = baseline.peak_bytes;
      j["baseline_compute_ns"] = baseline.compute_ns;
      std::cout << j.dump() << "\n";
    }
    return;
  }
  std::cout << fmt::format("log        {} ({} ops, {} tensors; {} CALL, {} MUTATE, {} CONSTANT)\n", source,
                           log.ops.size(), log.tensors.size(), log.counts.calls, log.counts.mutates,
                           log.counts.constants);
  std::cout << fmt::format("baseline   peak {} ({} B), compute {} ({} ns), constants {}\n",
                           human_bytes(baseline.peak_bytes), baseline.peak_bytes,
                           human_duration(baseline.compute_ns), baseline.compute_ns,
                           human_bytes(baseline.constant_bytes));
  std::cout << fmt::format(
      "protocol   simrd RuntimeV2EagerOptimized; budget = ratio x baseline peak; runs stop "
      "when remat time passes {:.2f} x baseline compute\n\n",
      opts.overhead_limit - 1);
  Table table({{"heuristic", Align::left},
               {"ratio", Align::right},
               {"budget", Align::right},
               {"overhead", Align::right},
               {"peak", Align::right},
               {"remat", Align::right},
               {"remat ops", Align::right},
               {"evictions", Align::right}});
  for (const sim::DtrSweepRow& row : rows) {
    const sim::DtrReplayResult& r = row.result;
    table.add_row({row.heuristic, fmt::format("{:.2f}", row.ratio), human_bytes(r.budget_bytes),
                   outcome_cell(row), human_bytes(r.peak_bytes), human_duration(r.remat_compute_ns),
                   std::to_string(r.remat_ops), std::to_string(r.evictions)});
  }
  std::cout << table.render();
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto opts = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a DTR operator log under memory budgets with DTR's simulator semantics (simrd)");
  cmd->add_option("--dtr-log", opts->dtr_log, "DTR operator log (JSON Lines, .gz accepted)")->required();
  std::string valid;
  for (const policies::DtrHeuristicInfo& h : policies::dtr_heuristics())
    valid += (valid.empty() ? "" : ", ") + h.name;
  cmd->add_option("--heuristic", opts->heuristics, "Eviction heuristic(s): " + valid + ", or all")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--budget-ratio", opts->ratios,
                  "Budget as a fraction of the baseline peak (repeatable; default "
                  "0.1, 0.2, ..., 1.0)")
      ->delimiter(',')
      ->check(finite_number(0, true));
  cmd->add_option(
         "--overhead-limit", opts->overhead_limit,
         "Stop a run once remat time exceeds (limit - 1) x baseline compute (simrd's thrashing limit; a run "
         "takes longer the higher it is)")
      ->capture_default_str()
      ->check(finite_number(1, false, sim::kDtrMaxOverheadLimit));
  cmd->add_flag("--no-start", opts->no_start, "Replay from line 1 instead of after the first ANNOTATE START");
  cmd->add_option("--jobs", opts->jobs, "Runs in parallel (0: one per hardware thread)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            int value = 0;
            return CLI::detail::lexical_cast(text, value) && value >= 0
                       ? std::string()
                       : fmt::format("'{}' must be a whole number >= 0 (0: one per hardware thread)", text);
          },
          "INT >= 0"));
  cmd->add_flag("--json", opts->json, "Print one JSON record per heuristic and ratio (JSON Lines)");
  cmd->callback([opts] { run_replay(*opts); });
}

}  // namespace mutwo::cli

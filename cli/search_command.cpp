// `mutwo search`: searches sub-array partitions x swap/recompute policies for a model array on a
// catalog GPU and prints every strategy (sequential, hfta, hfta+capuchin, mutwo) sorted by
// throughput; optionally writes the winner's schedule and timeline.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/search.hpp"
#include "api/server_search.hpp"
#include "cli/array_flags.hpp"
#include "cli/commands.hpp"
#include "cli/device_flags.hpp"
#include "cli/number_flags.hpp"
#include "cli/progress_line.hpp"
#include "cli/server_search_output.hpp"
#include "cli/table.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "costmodel/server_catalog.hpp"
#include "io/schedule_json.hpp"
#include "io/server_schedule_json.hpp"
#include "ir/schedule.hpp"
#include "policies/model_array.hpp"
#include "policies/policy_registry.hpp"
#include "policies/search.hpp"
#include "policies/server_schemes.hpp"
#include "policies/server_search.hpp"
#include "policies/strategy.hpp"
#include "sim/simulator.hpp"
#include "sim/timeline_export.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"
#include "zoo/exported_model.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::zoo;

struct SearchOptions {
  std::vector<std::string> models;
  int32_t trace_models = 0;  // -k/--models: copies of a --trace model file (0: not given)
  std::vector<std::string> policies;
  int32_t top = 10;
  int32_t jobs = 0;  // threads for one partition's plans (0: one per hardware thread)
  policies::PartitionOptions partitions;
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  int64_t image_size = 0;
  std::string dtype = "fp32";
  std::string precision = "fp32";
  std::string lean_ops = "none";  // none, tempo, both, or a list (transforms/lean_ops.hpp)
  std::string host_mode = "eager";
  std::string optimizer = "adam";
  DeviceFlags device;
  std::string schedule_out;
  std::string timeline;
  bool json = false;
  double progress_s = -1;  // --progress: the least seconds between progress lines (-1: not given)
  // --server: placement, partition and policy over a multi-GPU server (policies/server_search.hpp).
  std::string server;
  std::vector<std::string> schemes;
  std::vector<int32_t> micro_batches{1, 2, 4, 8};
  std::vector<int32_t> packs{8, 16, 32};
  std::string parts_dir;  // --parts: each GPU's single-GPU schedule of an array placement
};

void print_table(const policies::SearchReport& report, const policies::SearchConfig& config,
                 const costmodel::DeviceSpec& device, double elapsed_s) {
  std::string array;
  for (const policies::ArchitectureCount& a : config.architectures) {
    array += fmt::format("{}{} x {}", array.empty() ? "" : " + ", a.count, a.model);
  }
  std::cout << fmt::format("{} on {}, memory limit {}, {} samples per step\n", array, device.name,
                           human_bytes(report.memory_limit_bytes), report.samples_per_step);
  // A lean column when Tempo's layers are a lever of this search.
  const bool lean = !config.lean_options.empty();
  std::vector<Table::Column> columns{{"strategy", Align::left}, {"partition", Align::left}, {"policy", Align::left}};
  if (lean) columns.push_back({"lean", Align::left});
  for (const char* c : {"runs", "step time", "samples/s", "vs hfta", "peak / limit", "GB swapped", "recompute ms",
                        "stall ms"}) {
    columns.push_back({c, Align::right});
  }
  Table table(std::move(columns));
  for (const policies::SearchRow& r : report.rows) {
    const std::string peak = fmt::format("{}{} / {}", r.pruned ? ">= " : "", human_bytes(r.peak_bytes),
                                         human_bytes(report.memory_limit_bytes));
    std::vector<std::string> cells{r.strategy, r.partition, r.policy};
    if (lean) cells.push_back(r.lean_ops);
    cells.push_back(std::to_string(r.runs));
    if (!r.feasible) {
      for (const char* c : {"infeasible", "-", "-"}) cells.emplace_back(c);
      cells.push_back(peak);
      for (const char* c : {"-", "-", "-"}) cells.emplace_back(c);
    } else {
      for (std::string c : {human_duration(r.step_time_ns), fmt::format("{:.1f}", r.samples_per_s),
                            r.speedup_over_hfta > 0 ? fmt::format("{:.2f}x", r.speedup_over_hfta) : "-", peak,
                            gb_cell(r.bytes_swapped), ms_cell(r.recompute_ns), ms_cell(r.compute_stall_ns)}) {
        cells.push_back(std::move(c));
      }
    }
    table.add_row(std::move(cells));
  }
  std::cout << table.render();
  for (const policies::LeanEffect& e : report.lean_effects) {
    std::cout << fmt::format(
        "lean ops {} on {}: {} GB less kept for backward per model and step, {:+.2f} ms of "
        "compute per model and step\n",
        e.lean_ops, e.model, gb_cell(e.saved_bytes), static_cast<double>(e.extra_compute_ns) / 1e6);
  }
  if (report.any_feasible()) {
    // What the winning plan moves (issue 17): activations and model state across the host link,
    // recomputation, and where the model state and the optimizer step live.
    const policies::SearchRow& w = report.rows.front();
    std::cout << fmt::format(
        "winner ({} {} {}{}): swaps {} GB of activations and {} GB of model state (out + in), recomputes {} "
        "ms; "
        "model state {}; optimizer step {}\n",
        w.strategy, w.partition, w.policy, lean ? ", lean ops " + w.lean_ops : std::string(),
        gb_cell(w.bytes_swapped - w.state_bytes_swapped), gb_cell(w.state_bytes_swapped),
        ms_cell(w.recompute_ns),
        w.optimizer_on_host
            ? "on the host (weights swapped in before its sub-array's forward, gradients out as "
              "backward writes them, optimizer state never on the device)"
        : w.state_offloaded
            ? "on the host between uses (swapped in before its sub-array's forward, out after its "
              "optimizer step)"
        : w.runs > 1 ? "on the device only while its run trains"
                     : "resident on the device",
        w.optimizer_on_host ? fmt::format("on the host CPU ({} ms, {})", ms_cell(w.host_optimizer_ns),
                                          device.host_optimizer.source)
                            : std::string("on the device"));
  }
  const policies::SearchStats& s = report.stats;
  std::cout << fmt::format(
      "searched {} partitions x {} policies: {} plans, {} pruned by memory, {} partitions pruned by "
      "throughput bound ({:.2f} s); runs > 1: sub-arrays trained one after another, each alone on the device; "
      "infeasible peaks are the smallest limit the plan meets\n",
      s.partitions, s.policies, s.plans, s.pruned_by_memory, s.partitions_pruned_by_bound, elapsed_s);
}

void run_search_command(SearchOptions opts) {
  support::FlagPaths inputs = input_files(opts.device);
  for (const std::string& m : opts.models) {
    if (const std::string name = m.substr(0, m.rfind(':')); zoo::is_model_file(name)) {
      inputs.emplace_back("--model", name);
    }
  }
  support::check_output_paths({{"--output", opts.schedule_out}, {"--timeline", opts.timeline}}, {}, inputs);
  if (!opts.parts_dir.empty() && opts.server.empty()) {
    throw Error("--parts writes each GPU's part of a --server search; give --server NAME");
  }
  std::optional<costmodel::ServerSpec> server;
  if (!opts.server.empty()) {
    server = api::find_server_for(opts.server, opts.device.gpu_given ? opts.device.gpu : std::string());
    opts.device.gpu = server->gpu;
    opts.device.gpu_given = true;
  }
  const costmodel::DeviceSpec device = resolve_device(opts.device);
  const std::unique_ptr<costmodel::OpCostModel> cost = make_cost_model(opts.device, device);

  api::SearchRequest request;
  request.models = opts.models;
  request.batch_size = opts.batch_size;
  request.seq_len = opts.seq_len;
  request.image_size = opts.image_size;
  request.dtype = opts.dtype;
  request.precision = opts.precision;
  request.lean_ops = opts.lean_ops;
  request.host_mode = opts.host_mode;
  request.optimizer = opts.optimizer;
  request.policies = opts.policies;
  request.partitions = opts.partitions;
  request.top = opts.top;
  request.jobs = opts.jobs;
  // Without --progress: a line rewritten 4 times a second on a terminal, none in a log.
  const auto start = std::chrono::steady_clock::now();
  const bool tty = isatty(STDERR_FILENO) != 0;
  ProgressLine line(std::cerr, tty, opts.progress_s >= 0 ? opts.progress_s : 0.25);
  if (!server && (tty || opts.progress_s >= 0)) {
    request.progress = [&](int64_t visited, int64_t partitions) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      line.update(
          fmt::format("search: partition {}/{} by compute bound, {} elapsed (the rest skipped once "
                      "none can beat the best plans)",
                      visited + 1, partitions, clock_text(s)));
    };
  }
  const policies::SearchConfig config = api::search_config(request, *cost, device.memory_bytes);

  if (server) {
    policies::ServerSearchConfig sc;
    sc.array =
        config;  // the per-GPU searches read its array, optimizer, cost, limit, policies, host mode, top
    sc.server = *server;
    sc.schemes = opts.schemes;
    sc.micro_batches = opts.micro_batches;
    sc.packs = opts.packs;
    run_server_search_and_print(std::move(sc), {opts.json, opts.timeline, opts.schedule_out, opts.parts_dir});
    return;
  }
  const auto searched = std::chrono::steady_clock::now();
  policies::SearchReport report;
  try {
    report = policies::run_search(config);
  } catch (...) {
    line.clear();  // the error starts on an empty line
    throw;
  }
  line.clear();
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - searched).count();

  if (opts.json) {
    std::cout << api::search_json(report, device, opts.device.cost_source).dump(2) << "\n";
  } else {
    print_table(report, config, device, elapsed_s);
  }
  if (!report.any_feasible()) {
    const int64_t pruned = report.smallest_pruned_bytes;
    throw Error(fmt::format(
        "no plan fits in {}; the smallest limit any plan met is {}{}", human_bytes(report.memory_limit_bytes),
        human_bytes(report.smallest_limit_bytes),
        pruned > 0 && pruned < report.smallest_limit_bytes
            ? fmt::format(", and plans with state offload pruned unplanned need at least {} (try a limit "
                          "from there)",
                          human_bytes(pruned))
            : std::string()));
  }
  if (!opts.schedule_out.empty()) {
    write_schedule(*report.best_schedule, opts.schedule_out);
    // What the file holds, said where a reader compares it with the table.
    std::cerr << (report.best_schedule_is_whole_step
                      ? fmt::format(
                            "wrote {}: the winner's step; its step time above is the first, cold step "
                            "(mutwo simulate --schedule prints it as \"the first took\", beside the "
                            "steady state)\n",
                            opts.schedule_out)
                      : fmt::format("wrote {}: one run of the winner's separate runs (the one of the highest "
                                    "peak), not the whole step; the table's step time is every run's\n",
                                    opts.schedule_out));
  }
  if (!opts.timeline.empty()) {
    sim::SimOptions sim_options;
    sim_options.record_timeline = true;
    sim_options.host_mode = config.host_mode;
    // Strategies of several separate runs keep one run's schedule; it may not fit beside the
    // others' state, so its timeline is replayed without a limit.
    sim_options.memory_limit_bytes = report.best_schedule_is_whole_step ? report.memory_limit_bytes : -1;
    const sim::Prediction p = sim::simulate(*report.best_schedule, *cost, sim_options);
    sim::write_chrome_trace(p, opts.timeline, report.best_schedule->graph.name);
  }
}

std::string policies_help() {
  std::string text = fmt::format("Policies (default: {}):",
                                 joined(policies::default_search_policies(policies::builtin_policies())));
  for (const policies::PolicyInfo& p : policies::builtin_policies().policies()) {
    text += fmt::format("\n  {:<12} {} ({})", p.name, p.description, p.citation);
  }
  text += "\nStrategies (every search reports all four):";
  for (const policies::StrategyInfo& s : policies::builtin_strategies()) {
    text += fmt::format("\n  {:<14} {}", s.name, s.description);
  }
  return text;
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto opts = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Search sub-array partitions x swap/recompute policies for a model array under a memory limit "
      "(default: 8 x mobilenet-v3-large, batch 128, a100-40gb)");
  cmd->footer(policies_help());
  const std::string model_names =
      joined(builtin_models().names()) + "; test-scale: " + joined(mini_models().names());

  cmd->add_option(
      "--model,-m", opts->models,
      "Architecture and count, name:count, repeatable (default mobilenet-v3-large:8 at batch 128): " + model_names);
  cmd->add_option("--policies", opts->policies,
                  "Policies to search, comma-separated (default: " +
                      joined(policies::default_search_policies(policies::builtin_policies())) + ")")
      ->delimiter(',');
  cmd->add_option("--top", opts->top,
                  "Rows of the mutwo strategy to print (the baselines are always printed)")
      ->check(kPositiveNumber)
      ->capture_default_str();
  cmd->add_option("--jobs,-j", opts->jobs,
                  "Threads for each partition's policy plans (0: one per hardware thread); the rows are the "
                  "same on any number")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmd->add_option("--max-sub-arrays", opts->partitions.max_sub_arrays,
                  "Partitions with at most this many sub-arrays over all architectures (default: any)")
      ->check(CLI::Range(1, policies::kMaxArrayModels));
  cmd->add_option("--min-width", opts->partitions.min_width,
                  "Partitions whose sub-arrays fuse at least this many models (a count below it stays whole)")
      ->check(CLI::Range(1, policies::kMaxArrayModels));
  cmd->add_option("--max-width", opts->partitions.max_width,
                  "Partitions whose sub-arrays fuse at most this many models (default: any)")
      ->check(CLI::Range(1, policies::kMaxArrayModels));
  cmd->add_option("--batch", opts->batch_size,
                  "Batch size per model (default: the model's; 128 for the default array)")
      ->check(kPositiveNumber);
  cmd->add_option("--seq-len", opts->seq_len, "Sequence length (transformers)")->check(kPositiveNumber);
  cmd->add_option("--image-size", opts->image_size, "Image side in pixels (vision models)")
      ->check(kPositiveNumber);
  cmd->add_option("--dtype", opts->dtype, "Element type: fp32, bf16, fp16")->capture_default_str();
  cmd->add_option("--precision", opts->precision, precision_help())->capture_default_str();
  cmd->add_option("--lean-ops", opts->lean_ops,
                  lean_ops_help() + "; both: every partition and policy with and without tempo's")
      ->capture_default_str();
  cmd->add_option("--host-mode", opts->host_mode,
                  "How the host issues work: eager (PyTorch eager dispatch and launches from a Python training "
                  "loop, the device catalog's figures), libtorch (the same from C++, as mutwo's executor runs a "
                  "plan), cuda-graph (each plan captured and replayed), none (GPU time alone)")
      ->capture_default_str();
  cmd->add_option("--optimizer", opts->optimizer, "Optimizer: " + std::string(transforms::optimizer_names()))
      ->capture_default_str();
  add_device_flags(cmd, opts->device);
  cmd->add_option(
      "-o,--output", opts->schedule_out,
      "Write the winner's schedule to this file (with --server: a mutwo-server-schedule file); for "
      "a plan of separate runs, the run of the highest peak. The table's step time is the first, "
      "cold step: mutwo simulate --schedule prints the steady state beside it");
  cmd->add_option("--timeline", opts->timeline,
                  "Write the winner's Chrome-trace timeline (Perfetto, chrome://tracing)");
  cmd->add_flag("--json", opts->json, "Print the rows as JSON");
  cmd->add_option("--progress", opts->progress_s,
                  "Progress on stderr at most every SECONDS (0: each partition; default: a line rewritten 4 "
                  "times a second on a terminal, none otherwise)")
      ->check(finite_number(0, false));
  CLI::Option* server = cmd->add_option(
      "--server", opts->server,
      "Search placement, partition and policy over a multi-GPU server: " +
          joined(costmodel::builtin_servers().names()) +
          " (one model: the schemes below over GPU and micro-batch counts; an array: spread over the GPUs)");
  cmd->add_option("--schemes", opts->schemes,
                  "With --server and one model, schemes to try, comma-separated (default all): " +
                      joined(policies::builtin_server_schemes().names()))
      ->delimiter(',')
      ->needs(server);
  cmd->add_option("--micro-batches", opts->micro_batches,
                  "With --server and one model, micro-batch counts M to try, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, policies::kMaxMicroBatches))
      ->capture_default_str()
      ->needs(server);
  cmd->add_option("--packs", opts->packs,
                  "With --server and one model, layer pack counts to try (Harmony's unit of scheduling), "
                  "comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, policies::kMaxLayerPacks))
      ->capture_default_str()
      ->needs(server);
  cmd->add_option("--parts", opts->parts_dir,
                  "With --server and a model array: write each GPU's part of the winner (its single-GPU schedule) "
                  "to DIR/gpuN.json, to run alone with `mutwo run --schedule`");
  cmd->add_option("-k,--models", opts->trace_models,
                  "Copies of the model a --trace file holds (a forward graph from scripts/export_model.py; "
                  "default 1): `--trace my_model.json --models 4` is `--model my_model.json:4`")
      ->check(CLI::Range(1, policies::kMaxArrayModels));
  cmd->callback([opts] {
    // A --trace file that is a model (a forward graph) is searched as one; the others stay measured
    // traces for --cost-source measured.
    std::vector<std::string> measured;
    for (const std::string& file : opts->device.traces) {
      if (zoo::is_forward_graph_file(file)) {
        opts->models.push_back(fmt::format("{}:{}", file, std::max(opts->trace_models, 1)));
      } else {
        measured.push_back(file);
      }
    }
    if (opts->trace_models > 0 && measured.size() == opts->device.traces.size()) {
      throw Error(fmt::format("--models {} counts copies of a --trace model file (a forward graph from "
                              "scripts/export_model.py) and none was given; zoo models take --model NAME:COUNT",
                              opts->trace_models));
    }
    opts->device.traces = std::move(measured);
    run_search_command(*opts);
  });
}

}  // namespace mutwo::cli

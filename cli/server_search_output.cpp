#include "cli/server_search_output.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include "api/server_search.hpp"
#include "cli/table.hpp"
#include "io/schedule_json.hpp"
#include "io/server_schedule_json.hpp"
#include "sim/host_mode.hpp"
#include "support/error.hpp"

namespace mutwo::cli {
namespace {

void print_server_table(const policies::ServerSearchReport& report,
                        const policies::ServerSearchConfig& config, double elapsed_s) {
  std::string array;
  for (const policies::ArchitectureCount& a : config.array.architectures) {
    array += fmt::format("{}{} x {}", array.empty() ? "" : " + ", a.count, a.model);
  }
  std::cout << fmt::format("{} on {} ({}), memory limit {} per GPU\n", array, config.server.name,
                           config.server.description, human_bytes(report.memory_limit_bytes));
  Table table({{"strategy", Align::left},
               {"placement", Align::left},
               {"step time", Align::right},
               {"samples/s", Align::right},
               {"peak / GPU", Align::right},
               {"GB swapped", Align::right},
               {"GB peer", Align::right},
               {"stall ms", Align::right},
               {"busiest link", Align::left}});
  for (const policies::ServerSearchRow& r : report.rows) {
    const std::string busiest =
        r.busiest_link.empty() ? "-" : fmt::format("{} {:.0f}%", r.busiest_link, 100 * r.busiest_link_share);
    if (!r.feasible) {
      table.add_row(
          {r.strategy, r.placement, "infeasible", "-", human_bytes(r.peak_bytes), "-", "-", "-", "-"});
      continue;
    }
    table.add_row({r.strategy, r.placement, human_duration(r.step_time_ns),
                   fmt::format("{:.1f}", r.samples_per_s), human_bytes(r.peak_bytes), gb_cell(r.swap_bytes),
                   gb_cell(r.peer_bytes), ms_cell(r.compute_stall_ns), busiest});
  }
  std::cout << table.render();
  if (report.any_feasible()) {
    const policies::ServerSearchRow& w = report.rows.front();
    std::cout << fmt::format("winner: {} on {}; {}{}\n", w.strategy, w.placement, w.plan,
                             w.note.empty() ? "" : " (" + w.note + ")");
  }
  const policies::ServerSearchStats& s = report.stats;
  std::cout << fmt::format(
      "simulated {} server schedules ({} single-GPU searches, {} placements pruned by compute bound) in "
      "{:.2f} s; "
      "every copy shares the links it crosses; stall: the most stalled GPU's compute idle time\n",
      s.candidates, s.gpu_searches, s.placements_pruned, elapsed_s);
}

// --parts: every GPU's schedule written (each file atomically) only once every part has one.
void write_gpu_parts(const policies::ServerSearchReport& report, const policies::ServerSearchConfig& config,
                     const std::string& dir) {
  const policies::ServerSearchRow& winner = report.rows.front();
  if (report.best_parts.empty()) {
    throw Error(
        fmt::format("--parts: the winner is scheme '{}' of one model, whose GPUs run layer packs, not "
                    "single-GPU schedules; --parts takes a model array (--model NAME:COUNT)",
                    winner.strategy));
  }
  for (const policies::ServerGpuPart& part : report.best_parts) {
    if (!part.schedule) {
      throw Error(
          fmt::format("--parts: GPU {}'s plan is {} ({} runs one after another), several schedules, not "
                      "one; nothing written",
                      part.gpu, part.strategy, part.partition));
    }
  }
  std::filesystem::create_directories(dir);
  for (const policies::ServerGpuPart& part : report.best_parts) {
    const std::string path = (std::filesystem::path(dir) / fmt::format("gpu{}.json", part.gpu)).string();
    io::write_schedule(*part.schedule, path);
    std::cout << fmt::format(
        "GPU {}: {} {} {}, alone {} at peak {}: mutwo run --schedule {} --gpu {} --memory {} --host-mode "
        "{}\n",
        part.gpu, part.strategy, part.partition, part.policy, human_duration(part.step_time_ns),
        human_bytes(part.peak_bytes), path, config.server.gpu, report.memory_limit_bytes,
        sim::host_mode_name(config.array.host_mode));
  }
}

}  // namespace

void run_server_search_and_print(policies::ServerSearchConfig config, const ServerSearchOutput& opts) {
  const auto start = std::chrono::steady_clock::now();
  const policies::ServerSearchReport report = policies::run_server_search(config);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (opts.json) {
    std::cout << api::server_search_json(report, config).dump(2) << "\n";
  } else {
    print_server_table(report, config, elapsed_s);
  }
  if (!report.any_feasible()) {
    throw Error(fmt::format("no placement fits in {} per GPU on server '{}'",
                            human_bytes(report.memory_limit_bytes), config.server.name));
  }
  if (!opts.timeline.empty())
    throw Error("--timeline draws a single-GPU schedule; with --server it is not available yet");
  if (!opts.schedule_out.empty()) {
    if (report.best.tasks.empty()) {
      throw Error(
          "--output: the winner was priced per GPU alone (a GPU runs separate runs), no server schedule");
    }
    io::write_server_schedule(report.best, opts.schedule_out);
  }
  if (!opts.parts_dir.empty()) write_gpu_parts(report, config, opts.parts_dir);
}

}  // namespace mutwo::cli

// `mutwo simulate`: predicts one training step of a model array (k models, split into fused
// sub-arrays), of a schedule file, or of a trace (a mutwo trace, a PyTorch profiler trace or a DTR
// log: its graph in its own order, at its measured durations) on a catalog GPU, without a GPU:
// step time, throughput, peak memory against the limit, swap and stall figures; optionally a
// Chrome-trace timeline.
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/simulate.hpp"
#include "api/simulate_trace.hpp"
#include "cli/array_flags.hpp"
#include "cli/commands.hpp"
#include "cli/device_flags.hpp"
#include "cli/exec_flags.hpp"
#include "cli/table.hpp"
#include "costmodel/device_catalog.hpp"
#include "experiments/padded_lengths.hpp"
#include "io/schedule_json.hpp"
#include "io/trace_import.hpp"
#include "ir/schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/host_mode.hpp"
#include "sim/simulator.hpp"
#include "sim/timeline_export.hpp"
#include "support/error.hpp"
#include "support/percent.hpp"
#include "support/text_file.hpp"
#include "zoo/exported_model.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::ir;
using namespace mutwo::io;

struct SimulateOptions {
  ArrayFlags array;
  std::string schedule_out;
  DeviceFlags device;
  std::string timeline;
  bool json = false;
  bool strict = false;
  std::string host_mode;  // empty: eager, except none for a replayed trace without measured host times
  int32_t iterations = 0;  // 0: 3, except 1 for a replayed trace (compared with its one profiled step)
  bool wrap = false;
  // Planning the array as `mutwo run` does (empty policy and no state offload: the plain schedule).
  std::string policy;
  std::string order = "best";
  bool state_offload = false;
  std::string optimizer_on = "best";
  // Batches padded to their longest sequence (api/simulate.hpp).
  std::string length_histogram;
  int64_t length_bin_tokens = 64;
  int64_t length_align_tokens = 8;
};

using TraceStep = api::TracedStep;

// (predicted - profiled) / profiled, as a signed percentage.
std::string replay_error(int64_t predicted_ns, int64_t profiled_ns) {
  return fmt::format("{:+.2f} %", 100.0 * static_cast<double>(predicted_ns - profiled_ns) /
                                      static_cast<double>(profiled_ns));
}

void print_report(const Schedule& schedule, const costmodel::DeviceSpec& device,
                  const std::string& cost_source, const sim::Prediction& p, int64_t samples,
                  const TraceStep& traced, sim::HostMode host_mode) {
  std::string sub_arrays;
  for (const SubArray& s : schedule.sub_arrays) sub_arrays += (sub_arrays.empty() ? "" : ", ") + s.name;
  Table table({{"field", Align::left}, {"value", Align::left}});
  table.add_row({"schedule", fmt::format("{} ({} instructions, policy {})", schedule.graph.name,
                                         schedule.instructions.size(), schedule.policy)});
  table.add_row({"sub-arrays", sub_arrays.empty() ? "-" : sub_arrays});
  table.add_row(
      {"device", fmt::format("{} ({}), host link {}", device.name, device.description, device.host_link)});
  table.add_row({"cost source", cost_source});
  if (p.oom) {
    table.add_row({"step time", "- (out of memory)"});
    table.add_row({"throughput", "-"});
  } else if (samples == 0) {
    table.add_row({"step time", human_duration(p.step_time_ns)});
    table.add_row({"throughput", "- (batch size unknown)"});
  } else {
    table.add_row({"step time", p.iterations > 1 ? fmt::format("{} (steady state: iteration {} of {}{}; the first "
                                                               "took {})",
                                                               human_duration(p.step_time_ns), p.iterations,
                                                               p.iterations, p.wrapped ? ", boundaries wrapped" : "",
                                                               human_duration(p.first_step_ns))
                                                 : human_duration(p.step_time_ns)});
    table.add_row(
        {"throughput",
         fmt::format("{:.1f} samples/s ({} samples per step)",
                     static_cast<double>(samples) * 1e9 / static_cast<double>(p.step_time_ns), samples)});
  }
  if (traced.profiled_step_ns > 0 && !p.oom) {
    table.add_row({"profiled step", fmt::format("{} (the trace's ProfilerStep; prediction {})",
                                                human_duration(traced.profiled_step_ns),
                                                replay_error(p.step_time_ns, traced.profiled_step_ns))});
  }
  // Busy, stall, swap and recompute figures cover every simulated step (sim/simulator.hpp): with
  // several, they are said to be totals and their shares are of the time all of them took.
  const bool several = p.iterations > 1 && !p.iteration_end_ns.empty();
  const int64_t span_ns = several ? p.iteration_end_ns.back() : p.step_time_ns;
  const std::string over = several ? fmt::format(" over the {} steps", p.iterations) : "";
  const std::string of_span = several
                                  ? fmt::format(" of the {} steps' {}", p.iterations, human_duration(span_ns))
                                  : std::string(" of the step");
  if (host_mode != sim::HostMode::none) {
    table.add_row(
        {"host", fmt::format("{}: busy {}, GPU idle waiting on it {}{}", sim::host_mode_name(host_mode),
                             human_duration(p.host_busy_ns), human_duration(p.host_bound_idle_ns), over)});
  }
  if (p.host_optimizer_ns > 0) {
    table.add_row({"host optimizer", fmt::format("{} of updates on the host CPU ({})", human_duration(p.host_optimizer_ns),
                                                 device.host_optimizer.source)});
  }
  table.add_row(
      {"peak memory",
       fmt::format("{} of {} limit ({}), at {}", human_bytes(p.peak_bytes), human_bytes(p.memory_limit_bytes),
                   support::percent_of(p.peak_bytes, p.memory_limit_bytes),
                   p.peak_instruction == kNoId ? std::string("t=0 (resident state)")
                                               : sim::describe_instruction(schedule, p.peak_instruction))});
  table.add_row({"resident", human_bytes(p.resident_bytes)});
  table.add_row({"swapped", fmt::format("out {}, in {}{}", human_bytes(p.bytes_swapped_out),
                                        human_bytes(p.bytes_swapped_in), over)});
  table.add_row({"compute stall", fmt::format("{} ({}{})", human_duration(p.compute_stall_ns),
                                              support::percent_of(p.compute_stall_ns, span_ns), of_span)});
  table.add_row({"recompute", human_duration(p.recompute_ns) + over});
  for (size_t s = 0; s < p.busy_ns.size(); ++s) {
    if (p.busy_ns[s] == 0 && p.stall_ns[s] == 0) continue;
    table.add_row({sim::stream_track_name(static_cast<int32_t>(s), p.host_stream),
                   fmt::format("busy {} ({}{}), stalled {}", human_duration(p.busy_ns[s]),
                               support::percent_of(p.busy_ns[s], span_ns), of_span,
                               human_duration(p.stall_ns[s]))});
  }
  if (p.oom) table.add_row({"OOM", p.oom_message});
  std::cout << table.render();
}

// The padded lengths' summary below the longest length's report.
void print_padded(const api::SimulateRequest& request, const api::SimulateResult& result) {
  const nlohmann::json j = api::padded_lengths_json(request, result);
  Table table({{"field", Align::left}, {"value", Align::left}});
  table.add_row({"padded lengths",
                 fmt::format("{} lengths, mean {:.1f} tokens: {} in bins of {} tokens, aligned to {}",
                             result.padded_steps.size(), j.at("mean_seq_len").get<double>(), request.length_histogram,
                             request.length_bin_tokens, request.length_align_tokens)});
  table.add_row({"mean step", fmt::format("{} over the padded lengths (the figures above are the longest batch's, "
                                          "{} tokens)",
                                          human_duration(std::llround(j.at("mean_step_ns").get<double>())),
                                          result.padded_steps.back().tokens)});
  const nlohmann::json& sps = j.at("throughput_samples_per_s");
  table.add_row({"mean throughput", sps.is_null() ? std::string("- (a padded length runs out of memory)")
                                                  : fmt::format("{:.1f} samples/s", sps.get<double>())});
  std::cout << table.render();
}

void run_simulate(const SimulateOptions& opts) {
  support::FlagPaths inputs = input_files(opts.device);
  inputs.emplace_back("--schedule", opts.array.schedule);
  if (zoo::is_model_file(opts.array.model)) inputs.emplace_back("--model", opts.array.model);
  inputs.emplace_back("--length-histogram", opts.length_histogram);
  support::check_output_paths({{"--save-schedule", opts.schedule_out}, {"--timeline", opts.timeline}}, {},
                              inputs);
  const costmodel::DeviceSpec device = resolve_device(opts.device);
  const std::unique_ptr<costmodel::OpCostModel> cost = make_cost_model(opts.device, device);

  // Trace mode (api/simulate_trace.hpp): the trace replayed as it ran, priced from that replay.
  const bool trace_mode = opts.array.model.empty() && opts.array.schedule.empty();
  api::SimulateRequest request;
  if (!trace_mode) request.source = schedule_source(opts.array);
  request.policy = opts.policy;
  request.order = opts.order;
  request.state_offload = opts.state_offload;
  request.optimizer_on = opts.optimizer_on;
  request.host_mode = opts.host_mode;  // empty: eager (trace mode: none for a trace without host times)
  request.iterations = opts.iterations > 0 ? opts.iterations : (trace_mode ? 0 : 3);
  request.wrap = opts.wrap;
  request.record_timeline = !opts.timeline.empty();
  request.length_histogram = opts.length_histogram;
  request.length_bin_tokens = opts.length_bin_tokens;
  request.length_align_tokens = opts.length_align_tokens;
  if (trace_mode && !request.length_histogram.empty())
    throw Error("--length-histogram pads a model array's batches (--model), not a replayed trace's");
  api::SimulateResult result;
  api::TracedStep traced;
  std::string cost_detail;
  if (trace_mode) {
    (void)measured_traces(opts.device);  // read once, warnings shown
    api::TraceSimulation t = api::simulate_trace(std::move(request), cost_setup(opts.device),
                                                 *opts.device.loaded_inputs, device, *cost);
    result = std::move(t.result);
    traced = t.traced;
    cost_detail = std::move(t.cost_source_detail);
  } else {
    if (request.host_mode.empty()) request.host_mode = "eager";
    result = api::simulate(request, *cost, device);
    cost_detail = describe_cost_source(*cost, result.schedule.graph);
  }
  const Schedule& simulated = result.schedule;
  const sim::Prediction& p = result.prediction;
  // --strict makes running out of memory a failure: its outputs are not written.
  const bool failed = p.oom && opts.strict;
  if (!failed && !opts.schedule_out.empty()) write_schedule(simulated, opts.schedule_out);
  if (!failed && !opts.timeline.empty()) sim::write_chrome_trace(p, opts.timeline, simulated.graph.name);

  const int64_t samples = ir::samples_per_step(simulated);
  if (opts.json) {
    nlohmann::json j = api::simulate_json(simulated, p, result.host_mode, device, opts.device.cost_source,
                                          cost_detail, trace_mode ? &traced : nullptr);
    if (!result.padded_steps.empty()) j["padded_lengths"] = api::padded_lengths_json(request, result);
    std::cout << j.dump(2) << "\n";
  } else {
    print_report(simulated, device, cost_detail, p, samples, traced, result.host_mode);
    if (!result.padded_steps.empty()) print_padded(request, result);
  }
  if (p.oom && opts.strict) throw Error(p.oom_message);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Predict one training step of a model array (or a schedule file) on a GPU, without a GPU");
  add_array_flags(cmd, opts->array, "Simulate this schedule file instead of a model array");
  cmd->add_option("--save-schedule", opts->schedule_out, "Write the simulated schedule to this file");
  add_device_flags(cmd, opts->device);
  cmd->add_option("--timeline", opts->timeline, "Write a Chrome-trace timeline (Perfetto, chrome://tracing)");
  cmd->add_flag("--json", opts->json, "Print the prediction as JSON");
  cmd->add_flag("--strict", opts->strict, "Exit non-zero when the step runs out of memory");
  cmd->add_option("--host-mode", opts->host_mode,
                  "How the host issues work: eager (PyTorch eager from a Python training loop: each op's "
                  "dispatch and launches; a trace's measured host times), libtorch (the same issued from C++, "
                  "as mutwo's executor issues a step), cuda-graph (one captured graph replayed), none (the host "
                  "never limits the GPU); default: eager, except none when replaying a trace that measured no "
                  "host side (a DTR log, a CPU profile)")
      ->check(CLI::IsMember(sim::host_mode_names()));
  cmd->add_option("--iterations", opts->iterations,
                  "Training steps simulated back to back; the step reported is the last (the steady state: the "
                  "next iteration's swap-ins and batch upload overlap this one's end) beside the first; busy, "
                  "swap and stall figures cover all of them. Default: 3, except 1 when replaying a trace")
      ->check(CLI::Range(1, 1000));
  CLI::Option* policy = cmd->add_option(
      "--policy", opts->policy,
      "Plan the array (or the replayed --trace) with this swap/recompute policy at the device's "
      "memory, as `mutwo run` does: " +
          joined(policies::builtin_policies().names()) + " (default: the plain schedule, no plan)");
  cmd->add_option("--order", opts->order,
                  "With --policy: sub-arrays multiplexed, back-to-back, or best (plan both, keep the faster)")
      ->capture_default_str()
      ->needs(policy);  // a flag that would change nothing is refused, not ignored
  CLI::Option* offload = cmd->add_flag(
      "--state-offload", opts->state_offload,
      "Plan with every model's weights, gradients and optimizer state in pinned host memory between uses");
  cmd->add_option("--optimizer-on", opts->optimizer_on,
                  "With --state-offload, where the optimizer step runs: device, host or best")
      ->check(CLI::IsMember({"best", "device", "host"}))
      ->capture_default_str()
      ->needs(offload);
  cmd->add_flag("--wrap", opts->wrap,
                "Wrap the iteration boundaries as μ-TWO's steady state: the last sub-array's backward runs merged "
                "with the first sub-array's next forward (needs a multiplexed schedule of two or more sub-arrays "
                "and --iterations 2 or more)");
  cmd->add_option("--length-histogram", opts->length_histogram,
                  "Pad each batch only to its longest sequence, as a length-binned loader does (NVIDIA's LDDL): "
                  "the data set's sequence lengths, a CSV 'length,sequences' (docs/wikipedia_seq512_lengths.csv: "
                  "BERT's Wikipedia at 512). The plain step is simulated at every padded length and their mean "
                  "reported beside the longest's");
  cmd->add_option("--length-bin-tokens", opts->length_bin_tokens,
                  "With --length-histogram: the loader's bin, in tokens (each batch drawn from one bin)")
      ->check(CLI::Range(int64_t{1}, experiments::kMaxBinnedTokens))
      ->capture_default_str()
      ->needs(cmd->get_option("--length-histogram"));
  cmd->add_option("--length-align-tokens", opts->length_align_tokens,
                  "With --length-histogram: a batch's length rounded up to a multiple of this")
      ->check(CLI::Range(int64_t{1}, experiments::kMaxBinnedTokens))
      ->capture_default_str()
      ->needs(cmd->get_option("--length-histogram"));
  cmd->add_option(
         "--format", opts->device.trace_format,
         "Format of the --trace files: mutwo, kineto (PyTorch profiler), dtr (DTR log), et (PyTorch "
         "execution trace, followed by the profiler trace of its step); default: detected from the content")
      ->check(CLI::IsMember(io::trace_formats().names()))
      ->needs(cmd->get_option("--trace"));
  cmd->callback([opts, cmd] {
    if (opts->array.model_option->count() == 0 && opts->array.schedule_option->count() == 0) {
      // Without --model or --schedule, one --trace is simulated itself, at its measured durations.
      // (two files: an execution trace and the profiler trace of its step, joined into one)
      if (opts->device.traces.empty() || opts->device.traces.size() > 2) {
        throw CLI::RequiredError("simulate: one of --model, --schedule or a single --trace");
      }
      // The trace is the step: a model array's settings would go unread (as mutwo.simulate(trace=)
      // refuses them).
      for (const char* flag : {"--models", "--partition", "--batch", "--seq-len", "--image-size", "--dtype",
                               "--precision", "--lean-ops", "--optimizer", "--lr", "--order",
                               "--state-offload", "--optimizer-on", "--length-histogram"}) {
        if (cmd->get_option(flag)->count() > 0) {
          throw Error(
              fmt::format("simulate: {} sets a model array (--model); a --trace alone is simulated as "
                          "it ran",
                          flag));
        }
      }
      if (!opts->device.cost_source_given) opts->device.cost_source = "measured";
      opts->device.traces_are_step = true;  // any --cost-source may price it
    }
    run_simulate(*opts);
  });
}

}  // namespace mutwo::cli

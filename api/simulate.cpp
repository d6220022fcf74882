#include "api/simulate.hpp"

#include <fmt/format.h>

#include "experiments/padded_lengths.hpp"
#include "sim/prediction_json.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::api {
namespace {

// The plain step at every length a binned loader pads the array's batches to.
SimulateResult simulate_padded(const SimulateRequest& request, const costmodel::OpCostModel& cost) {
  if (!request.source.schedule_file.empty())
    throw Error("--length-histogram pads a model array's batches (--model), not a --schedule file's");
  if (!request.policy.empty() || request.state_offload)
    throw Error(
        "--length-histogram prices the plain step at each padded length; --policy and --state-offload "
        "plan one length: leave them out");
  const experiments::ArrayRequest& array = request.source.array;
  const zoo::ModelInfo& info = zoo::find_model(array.model);
  const int64_t default_seq_len = info.default_seq_len;
  if (default_seq_len == 0)
    throw Error(fmt::format("--length-histogram: model '{}' takes no sequence length", array.model));
  const int64_t seq_len = array.seq_len > 0 ? array.seq_len : default_seq_len;
  const experiments::LengthHistogram histogram = experiments::read_length_histogram(request.length_histogram);
  if (histogram.longest_tokens() > seq_len) {
    throw Error(fmt::format("--length-histogram '{}' holds sequences of {} tokens, more than --seq-len {}",
                            request.length_histogram, histogram.longest_tokens(), seq_len));
  }
  // Every model of the array takes the same padded batch (one loader feeds them all, as HFTA's do).
  const int64_t batch = array.batch_size > 0 ? array.batch_size : info.default_batch_size;
  const std::vector<experiments::PaddedLength> lengths =
      experiments::padded_lengths(histogram, {batch, request.length_bin_tokens, request.length_align_tokens});
  std::vector<PaddedStep> steps;
  SimulateResult out;
  for (const experiments::PaddedLength& l : lengths) {
    experiments::ScheduleSource source = request.source;
    source.array.seq_len = l.tokens;
    // Only the longest length's result is kept: only it records a timeline.
    SimulateRequest at = request;
    at.record_timeline = request.record_timeline && &l == &lengths.back();
    out = simulate_schedule(experiments::plain_schedule(source), at, cost);
    steps.push_back({l.tokens, l.batch_share, out.prediction.step_time_ns, out.prediction.oom});
  }
  out.padded_steps = std::move(steps);
  return out;
}

}  // namespace

double mean_step_ns(const SimulateResult& result) {
  if (result.padded_steps.empty()) return static_cast<double>(result.prediction.step_time_ns);
  double ns = 0;
  for (const PaddedStep& s : result.padded_steps) ns += s.batch_share * static_cast<double>(s.step_time_ns);
  return ns;
}

SimulateResult simulate(const SimulateRequest& request, const costmodel::OpCostModel& cost,
                        const costmodel::DeviceSpec& device) {
  if (!request.length_histogram.empty()) return simulate_padded(request, cost);
  ir::Schedule schedule;
  if (!request.policy.empty() || request.state_offload) {
    if (!request.source.schedule_file.empty())
      throw Error("--policy and --state-offload plan a model array (--model), not a --schedule file");
    if (device.memory_bytes <= 0)
      throw Error(fmt::format("--policy needs a memory limit; device '{}' has none", device.name));
    experiments::RunRequest run;
    run.source = request.source;
    run.policy = request.policy.empty() ? "none" : request.policy;
    run.order = request.order;
    run.state_offload = request.state_offload;
    run.optimizer_on = request.optimizer_on;
    run.wrap = request.wrap;
    run.host_mode = request.host_mode;  // the plan judged under the host timeline simulated
    run.allow_oom = true;
    schedule = experiments::plan_run(run, cost, device.memory_bytes).schedule;
  } else {
    schedule = experiments::plain_schedule(request.source);
  }
  return simulate_schedule(std::move(schedule), request, cost);
}

SimulateResult simulate_schedule(ir::Schedule schedule, const SimulateRequest& request,
                                 const costmodel::OpCostModel& cost) {
  if (request.wrap && request.iterations < 2)
    throw Error(fmt::format("--wrap merges iteration boundaries: it needs --iterations 2 or more, not {}",
                            request.iterations));
  SimulateResult out;
  out.schedule = std::move(schedule);
  sim::SimOptions options;
  options.record_timeline = request.record_timeline;
  options.host_mode = sim::parse_host_mode(request.host_mode);
  options.iterations = request.iterations;
  options.wrap_iterations = request.wrap;
  out.host_mode = options.host_mode;
  out.prediction = sim::simulate(out.schedule, cost, options);
  out.samples_per_step = ir::samples_per_step(out.schedule);
  return out;
}

nlohmann::json padded_lengths_json(const SimulateRequest& request, const SimulateResult& result) {
  if (result.padded_steps.empty()) return nullptr;
  nlohmann::json steps = nlohmann::json::array();
  double mean_tokens = 0;
  bool oom = false;
  for (const PaddedStep& s : result.padded_steps) {
    steps.push_back({{"tokens", s.tokens},
                     {"batch_share", s.batch_share},
                     {"step_time_ns", s.step_time_ns},
                     {"oom", s.oom}});
    mean_tokens += s.batch_share * static_cast<double>(s.tokens);
    oom = oom || s.oom;
  }
  const double step_ns = mean_step_ns(result);
  return {{"histogram", request.length_histogram},
          {"bin_tokens", request.length_bin_tokens},
          {"align_tokens", request.length_align_tokens},
          {"mean_seq_len", mean_tokens},
          {"mean_step_ns", step_ns},
          {"throughput_samples_per_s",
           oom || result.samples_per_step == 0
               ? nlohmann::json(nullptr)
               : nlohmann::json(static_cast<double>(result.samples_per_step) * 1e9 / step_ns)},
          {"steps", std::move(steps)}};
}

nlohmann::json simulate_json(const ir::Schedule& schedule, const sim::Prediction& p, sim::HostMode host_mode,
                             const costmodel::DeviceSpec& device, const std::string& cost_source,
                             const std::string& cost_source_detail, const TracedStep* traced) {
  const int64_t samples = ir::samples_per_step(schedule);
  nlohmann::json j;
  j["schedule"] = {{"graph", schedule.graph.name},
                   {"policy", schedule.policy},
                   {"instructions", schedule.instructions.size()},
                   {"samples_per_step", samples}};
  nlohmann::json subs = nlohmann::json::array();
  for (const ir::SubArray& s : schedule.sub_arrays) subs.push_back({{"name", s.name}, {"width", s.width}});
  j["schedule"]["sub_arrays"] = subs;
  j["device"] = {{"name", device.name},
                 {"memory_bytes", device.memory_bytes},
                 {"h2d_bytes_per_ns", device.h2d_bytes_per_ns},
                 {"d2h_bytes_per_ns", device.d2h_bytes_per_ns},
                 {"full_duplex", device.full_duplex}};
  j["cost_source"] = cost_source;
  j["cost_source_detail"] = cost_source_detail;
  j["host_mode"] = sim::host_mode_name(host_mode);
  j["prediction"] = sim::prediction_to_json(p, schedule);
  if (traced != nullptr) {
    // The step the trace measured beside the prediction; error = (predicted - profiled) / profiled.
    j["profiled_step_ns"] =
        traced->profiled_step_ns > 0 ? nlohmann::json(traced->profiled_step_ns) : nlohmann::json(nullptr);
    j["trace_gpu_time_ns"] = traced->gpu_time_ns;
    j["trace_host_time_ns"] = traced->host_time_ns;
    j["replay_error"] = traced->profiled_step_ns > 0 && !p.oom
                            ? nlohmann::json(static_cast<double>(p.step_time_ns - traced->profiled_step_ns) /
                                             static_cast<double>(traced->profiled_step_ns))
                            : nlohmann::json(nullptr);
  }
  j["throughput_samples_per_s"] =
      p.oom || samples == 0
          ? nlohmann::json(nullptr)
          : nlohmann::json(static_cast<double>(samples) * 1e9 / static_cast<double>(p.step_time_ns));
  return j;
}

}  // namespace mutwo::api

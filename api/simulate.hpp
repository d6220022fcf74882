#pragma once
// One training step of a model array (or a schedule file) predicted on a GPU: the schedule planned
// as `mutwo run` plans it (experiments/run_pipeline.hpp) or plain, simulated, and reported as the
// fields `mutwo simulate --json` prints and `mutwo.simulate()` returns.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/device_spec.hpp"
#include "costmodel/op_cost_model.hpp"
#include "experiments/run_pipeline.hpp"
#include "ir/schedule.hpp"
#include "sim/host_mode.hpp"
#include "sim/prediction.hpp"

namespace mutwo::api {

struct SimulateRequest {
  experiments::ScheduleSource source;  // the array, or a schedule file
  // Planning as `mutwo run` does (empty policy and no state offload: the plain schedule).
  std::string policy;
  std::string order = "best";
  bool state_offload = false;
  std::string optimizer_on = "best";
  std::string host_mode = "eager";  // sim/host_mode.hpp
  int32_t iterations = 3;           // the steady state: the last of these
  bool wrap = false;                // wrap the iteration boundaries (needs iterations >= 2)
  bool record_timeline = false;     // keep the prediction's timeline (sim::Prediction::timeline)
  // Batches padded only to their longest sequence, as a length-binned loader pads them (NVIDIA's LDDL;
  // experiments/padded_lengths.hpp): the data set's length histogram (a CSV "length,sequences"), and
  // the loader's bin and alignment in tokens. Empty: every sequence at the array's seq_len.
  std::string length_histogram;
  int64_t length_bin_tokens = 64;
  int64_t length_align_tokens = 8;
};

// One length the batches are padded to: its share of batches and its simulated step.
struct PaddedStep {
  int64_t tokens = 0;
  double batch_share = 0;
  int64_t step_time_ns = 0;
  bool oom = false;
};

struct SimulateResult {
  ir::Schedule schedule;
  sim::Prediction prediction;
  sim::HostMode host_mode = sim::HostMode::eager;
  int64_t samples_per_step = 0;
  // With a length histogram: every padded length's step, ascending; the schedule and prediction above
  // are the longest length's (its peak memory is the run's).
  std::vector<PaddedStep> padded_steps;
};

// The batches' mean step over the padded lengths (their shares as weights); the prediction's step
// without a length histogram.
double mean_step_ns(const SimulateResult& result);

// The schedule as asked (planned at the device's memory when a policy or state offload is asked;
// infeasible plans are simulated too: the prediction shows the OOM), simulated with `cost`; with a
// length histogram, the plain schedule at every padded length. Throws Error naming the option and
// value that cannot hold (a policy on a schedule file, --wrap with one iteration, no memory limit, a
// length histogram with a schedule file or a plan, on a model without a sequence length or longer
// than its seq_len), UnknownNameError for an unknown model, policy or host mode.
SimulateResult simulate(const SimulateRequest& request, const costmodel::OpCostModel& cost,
                        const costmodel::DeviceSpec& device);

// A schedule already built (a replayed trace's, say) simulated as the request asks (host mode,
// iterations, wrap, timeline); the request's source and planning fields are not read.
SimulateResult simulate_schedule(ir::Schedule schedule, const SimulateRequest& request,
                                 const costmodel::OpCostModel& cost);

// A replayed trace's own step, printed beside the prediction (trace mode of `mutwo simulate`).
struct TracedStep {
  int64_t profiled_step_ns = 0;  // 0: the trace does not say
  int64_t gpu_time_ns = 0;       // the replayed ops' measured GPU time, summed over streams
  int64_t host_time_ns = 0;      // their measured host time (0 without a host side)
};

// schedule {graph, policy, instructions, samples_per_step, sub_arrays}, device {name, memory_bytes,
// h2d/d2h_bytes_per_ns, full_duplex}, cost_source, cost_source_detail, host_mode, prediction
// (sim/prediction_json.hpp), throughput_samples_per_s (null when OOM or samples unknown); with a
// traced step: profiled_step_ns, trace_gpu_time_ns, trace_host_time_ns, replay_error.
// The padded lengths of a result (null without a length histogram): histogram, bin_tokens,
// align_tokens, mean_seq_len, mean_step_ns, throughput_samples_per_s (null when a length OOMs), and
// steps [{tokens, batch_share, step_time_ns, oom}].
nlohmann::json padded_lengths_json(const SimulateRequest& request, const SimulateResult& result);

nlohmann::json simulate_json(const ir::Schedule& schedule, const sim::Prediction& prediction,
                             sim::HostMode host_mode, const costmodel::DeviceSpec& device,
                             const std::string& cost_source, const std::string& cost_source_detail,
                             const TracedStep* traced = nullptr);

}  // namespace mutwo::api

#include "experiments/profile_pipeline.hpp"

#include <memory>
#include <vector>

#include <fmt/format.h>

#include "costmodel/cost_setup.hpp"
#include "costmodel/device_file.hpp"
#include "experiments/content_hash.hpp"
#include "experiments/db_merge.hpp"
#include "experiments/results_db.hpp"
#include "ir/op_kind.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {

void check_profile_outputs(const ProfileRequest& request) {
  support::FlagPaths inputs = input_files(request.source);
  if (costmodel::is_device_path(request.gpu)) inputs.emplace_back("--gpu", request.gpu);
  support::check_output_paths({{"--output", request.output}, {"--db", request.db}}, {}, inputs);
}

ProfileOutcome profile_pipeline(const ProfileRequest& request, ir::Executor& executor) {
  // Every output and the stored predictions' GPU checked before the step is profiled: a bad --db or
  // --gpu used to fail after the trace was measured and written.
  check_profile_outputs(request);
  if (!request.db.empty()) check_results_destination(request.db, "--db");
  ProfileOutcome out;
  out.target = resolve_exec_target(executor, request.device, "");
  const ir::Schedule schedule = plain_schedule(request.source);
  // The stored op predictions come from the one cost setup (analytic on the catalog GPU).
  std::unique_ptr<costmodel::OpCostModel> analytic;
  if (!request.db.empty()) {
    costmodel::CostSetup cost_setup;
    cost_setup.gpu = request.gpu;
    cost_setup.default_gpu = out.target.catalog_gpu.value_or(costmodel::kDefaultGpu);
    analytic = costmodel::make_cost_model(cost_setup);
  }

  ir::ProfileOptions options;
  options.device = out.target.device;
  options.warmup_iterations = request.warmup_iterations;
  options.time_host = request.time_host;
  options.measured_iterations = request.measured_iterations;
  options.seed = request.seed;
  options.stop_requested = request.stop_requested;
  out.trace = executor.profile(schedule, options);
  io::write_trace(out.trace, request.output);
  if (request.db.empty()) return out;

  const costmodel::DeviceSpec& gpu = analytic->device();
  const ir::Graph& g = out.trace.graph;
  std::vector<OpTimeRecord> op_times;
  for (const ir::Op& op : g.ops) {
    op_times.push_back(
        {op.id, op.name, std::string(ir::kind_name(op.kind)), std::string(ir::phase_name(op.phase)), op.width,
         out.trace.op_duration_ns[static_cast<size_t>(op.id)], analytic->op_duration_ns(g, op)});
  }
  RunRecord record = executed_run_record("profile", request.source, schedule, out.target);
  record.gpu = gpu.name;
  record.cost_source = "analytic";
  record.config_hash = config_hash({{"command", "profile"},
                                    {"schedule_hash", record.schedule_hash},
                                    {"device", out.target.label},
                                    {"warmup", request.warmup_iterations},
                                    {"iterations", request.measured_iterations},
                                    {"seed", request.seed}});
  record.notes = fmt::format("{} warm-up + {} measured steps, median per op; trace {}", request.warmup_iterations,
                             request.measured_iterations, request.output);
  out.run_id = ResultsDb::open(request.db).insert(record, std::nullopt, std::nullopt, op_times);
  return out;
}

}  // namespace mutwo::experiments

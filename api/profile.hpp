#pragma once
// A profiled training step (`mutwo profile`, `mutwo.profile()`): the pipeline is
// experiments::profile_pipeline; this is its summary (time per phase, the slowest ops) and the
// fields `mutwo profile --json` prints and the Python module returns.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/profile_pipeline.hpp"

namespace mutwo::api {

struct ProfileSummary {
  std::array<int64_t, 3> phase_ns{0, 0, 0};  // forward, backward, optimizer: summed op times
  int64_t total_ns = 0;
  int64_t host_ns = 0;              // summed host issue times (0 when the trace has none)
  std::vector<size_t> slowest_ops;  // op indices, slowest first, at most `top`
};

ProfileSummary summarize_profile(const ir::Trace& trace, int32_t top);

// trace (the written file), graph, device, ops, sum_op_ns, forward_ns, backward_ns, optimizer_ns,
// sum_op_host_ns (null without host times), run_id (null unless stored), top [{op, kind, ns}].
nlohmann::json profile_json(const experiments::ProfileOutcome& out, const std::string& output, int32_t top);

}  // namespace mutwo::api

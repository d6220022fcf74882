#pragma once
// A Prediction as JSON, the form `mutwo simulate --json` prints and the results database stores.
#include <nlohmann/json.hpp>

#include "ir/schedule.hpp"
#include "sim/prediction.hpp"

namespace mutwo::sim {

// Every figure of the Prediction with its unit in the key ("step_time_ns", "peak_bytes"); streams
// by track name ("compute", "d2h copy", ...); instructions by id and description
// (describe_instruction). On OOM, "oom" holds the failing instruction, the bytes it asked for and
// the bytes in use, and "step_time_ns" is null: the step did not finish, so it has no time.
// The timeline is not included (see timeline_export.hpp). Deterministic: same input, same bytes.
nlohmann::json prediction_to_json(const Prediction& prediction, const ir::Schedule& schedule);

}  // namespace mutwo::sim

#include "sim/prediction_json.hpp"

#include "sim/simulator.hpp"
#include "sim/timeline_export.hpp"

namespace mutwo::sim {

namespace {

nlohmann::json instruction_ref(const ir::Schedule& schedule, ir::InstrId id) {
  if (id == ir::kNoId) return nullptr;
  return {{"id", id}, {"description", describe_instruction(schedule, id)}};
}

// {"compute": 123, "d2h copy": 4, ...} over the streams the schedule uses.
nlohmann::json per_stream(const std::vector<int64_t>& values, int32_t host_stream) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t s = 0; s < values.size(); ++s) out[stream_track_name(static_cast<int32_t>(s), host_stream)] = values[s];
  return out;
}

}  // namespace

nlohmann::json prediction_to_json(const Prediction& p, const ir::Schedule& schedule) {
  nlohmann::json j;
  j["step_time_ns"] = p.oom ? nlohmann::json(nullptr) : nlohmann::json(p.step_time_ns);
  j["instructions_simulated"] = p.instructions_simulated;
  if (p.iterations > 1) {
    j["iterations"] = p.iterations;
    j["first_step_ns"] = p.first_step_ns;
    j["wrapped"] = p.wrapped;
    j["iteration_end_ns"] = p.iteration_end_ns;
  }
  j["instructions_total"] = schedule.instructions.size();
  j["busy_ns"] = per_stream(p.busy_ns, p.host_stream);
  j["stall_ns"] = per_stream(p.stall_ns, p.host_stream);
  j["compute_stall_ns"] = p.compute_stall_ns;
  j["host_busy_ns"] = p.host_busy_ns;
  j["host_optimizer_ns"] = p.host_optimizer_ns;
  j["host_bound_idle_ns"] = p.host_bound_idle_ns;
  j["recompute_ns"] = p.recompute_ns;
  j["bytes_swapped_out"] = p.bytes_swapped_out;
  j["bytes_swapped_in"] = p.bytes_swapped_in;
  j["state_bytes_swapped_out"] = p.state_bytes_swapped_out;
  j["state_bytes_swapped_in"] = p.state_bytes_swapped_in;
  j["resident_bytes"] = p.resident_bytes;
  j["peak_bytes"] = p.peak_bytes;
  j["peak_time_ns"] = p.peak_time_ns;
  j["peak_instruction"] = instruction_ref(schedule, p.peak_instruction);
  j["memory_limit_bytes"] =
      p.memory_limit_bytes > 0 ? nlohmann::json(p.memory_limit_bytes) : nlohmann::json(nullptr);
  if (p.oom) {
    j["oom"] = {{"instruction", instruction_ref(schedule, p.oom_instruction)},
                {"requested_bytes", p.oom_requested_bytes},
                {"in_use_bytes", p.oom_in_use_bytes},
                {"message", p.oom_message}};
  } else {
    j["oom"] = nullptr;
  }
  return j;
}

}  // namespace mutwo::sim

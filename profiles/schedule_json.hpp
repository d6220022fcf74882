#pragma once
// Schedule files: JSON with "format": "mutwo-schedule" and a "version", the graph embedded.
#include <string>

#include "profiles/schedule.hpp"

namespace mutwo::profiles {

std::string schedule_to_json(const Schedule& schedule);  // embeds the graph; "format": "mutwo-schedule"
// Parses and validates: FormatError (syntax, format, version, field types, unknown or missing fields,
// naming the instruction and field), GraphError (graph invariants), ScheduleError (schedule rules).
Schedule schedule_from_json(const std::string& text);
void write_schedule(const Schedule& schedule, const std::string& path);  // atomic
Schedule read_schedule(const std::string& path);

}  // namespace mutwo::profiles

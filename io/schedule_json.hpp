#pragma once
// Schedule files: JSON with "format": "mutwo-schedule" and a "version", the graph embedded.
#include <string>

#include "ir/schedule.hpp"

namespace mutwo::io {

std::string schedule_to_json(const ir::Schedule& schedule);  // embeds the graph; "format": "mutwo-schedule"
// Parses and validates: FormatError (syntax, format, version, field types, unknown or missing fields,
// naming the instruction and field), GraphError (graph invariants), ScheduleError (schedule rules).
ir::Schedule schedule_from_json(const std::string& text);
void write_schedule(const ir::Schedule& schedule, const std::string& path);  // atomic
ir::Schedule read_schedule(const std::string& path);

}  // namespace mutwo::io

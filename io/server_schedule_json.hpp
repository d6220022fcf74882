#pragma once
// Server schedule files: JSON with "format": "mutwo-server-schedule" and a "version".
#include <string>

#include "ir/server_schedule.hpp"

namespace mutwo::io {

inline constexpr int kServerScheduleVersion = 1;

std::string server_schedule_to_json(const ir::ServerSchedule& schedule);
// Parses and validates: FormatError (syntax, format, version, field types, unknown or missing
// fields, naming the task and field), ServerScheduleError (validate_server_schedule's rules).
ir::ServerSchedule server_schedule_from_json(const std::string& text);
void write_server_schedule(const ir::ServerSchedule& schedule, const std::string& path);  // atomic

}  // namespace mutwo::io

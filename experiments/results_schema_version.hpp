#pragma once
// Schema versions of the results database (results_schema.cpp holds the SQL of each).

namespace mutwo::experiments {

// The layout this mutwo writes. Version 2 added the experiment tables to version 1.
inline constexpr int kResultsSchemaVersion = 2;
// The oldest layout it still reads; writers upgrade such a file in place on open.
inline constexpr int kOldestReadableSchemaVersion = 1;

}  // namespace mutwo::experiments

#pragma once
// The SQL layout of the results database, version kResultsSchemaVersion: creating it in an empty
// file and checking that an existing file holds it.
#include <string>
#include <string_view>
#include <vector>

#include "experiments/sqlite.hpp"

namespace mutwo::experiments {

// Tables of the current version, in creation order (schema_version first).
const std::vector<std::string_view>& results_tables();

// The CREATE statements of the current version, as one script.
std::string_view results_schema_sql();

// Creates every table and the version row in one write transaction, unless another connection did
// so first (the check is repeated under the write lock, so concurrent creators agree).
void create_results_schema(const sqlite::Connection& connection);

// Throws ResultsDbError unless the database holds exactly one schema_version row equal to
// kResultsSchemaVersion and every table of results_tables().
void check_results_schema(const sqlite::Connection& connection);

// Names of the tables the database has (reading them also proves the file is a SQLite database).
std::vector<std::string> table_names(const sqlite::Connection& connection);

}  // namespace mutwo::experiments

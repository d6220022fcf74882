#pragma once
// The SQL layout of the results database, version kResultsSchemaVersion: creating it in an empty
// file, checking that an existing file holds it, and upgrading a version-1 file (which lacks only
// the experiment tables) in place.
#include <string>
#include <string_view>
#include <vector>

#include "experiments/results_schema_version.hpp"
#include "experiments/sqlite.hpp"

namespace mutwo::experiments {

// Tables of a schema version (1, or else the current one), in creation order (schema_version first).
const std::vector<std::string_view>& results_tables(int version = kResultsSchemaVersion);

// The CREATE statements of the current version, as one script.
std::string results_schema_sql();

// Creates every table and the version row in one write transaction, unless another connection did
// so first (the check is repeated under the write lock, so concurrent creators agree).
void create_results_schema(const sqlite::Connection& connection);

// Throws ResultsDbError unless the database holds exactly one schema_version row, an integer equal
// to kResultsSchemaVersion or kOldestReadableSchemaVersion, and every table of that version with
// exactly its columns (a renamed, dropped or added column is named). Returns the version.
int check_results_schema(const sqlite::Connection& connection);

// Brings a version-1 database to the current version in one write transaction (adds the
// experiment tables; nothing else changes). A database already current is left as it is.
void upgrade_results_schema(const sqlite::Connection& connection);

// Names of the tables the database has (reading them also proves the file is a SQLite database).
std::vector<std::string> table_names(const sqlite::Connection& connection);

}  // namespace mutwo::experiments

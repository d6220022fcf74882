#pragma once
// CSV export of an experiment's table (RFC 4180: comma-separated, CRLF-free "\n" lines, cells with
// a comma, quote, newline or edge space quoted, quotes doubled). The file is written beside its
// final name and renamed into place, so a reader never sees half a table.
#include <filesystem>
#include <string>

#include "experiments/experiment_kind.hpp"

namespace mutwo::experiments {

std::string csv_text(const CsvTable& table);

// Writes csv_text(table) to path (creating its folder). Throws mutwo::Error naming the path.
void write_csv(const CsvTable& table, const std::filesystem::path& path);

// Checks, before a sweep runs, that write_csv(table, path) could write there: path is not a folder,
// and its folder is one that takes a new file, or can be created (its nearest existing ancestor is a
// folder that takes a new folder). Probes with a temporary file or folder, removed at once; creates
// nothing that stays. Throws mutwo::Error naming the path and what is wrong ("'afile' is a file, not
// a folder", "cannot create folder '/proc/rz': ...").
void check_csv_destination(const std::filesystem::path& path);

}  // namespace mutwo::experiments

#pragma once
// Whole files in and out: the one reader and the one atomic writer of the project. Reading accepts
// gzip-compressed text transparently, since traces from torch.profiler are commonly stored as
// .json.gz; writing replaces the target only once the whole text is on disk.
#include <filesystem>
#include <string>
#include <string_view>

namespace mutwo::profiles {

// The file's bytes, as they are. `what` names the file in errors ("trace file", "schedule file";
// empty: just the path): Error "cannot open <what> '<path>' for reading: <reason>" when it cannot
// be opened, Error "cannot read ..." when reading fails.
std::string read_file_bytes(const std::filesystem::path& path, std::string_view what = {});

// The file's text; gunzipped when it starts with the gzip magic (1f 8b), whatever its name.
// Errors as read_file_bytes, plus FormatError when the gzip stream is corrupt or truncated, each
// naming the path.
std::string read_text_file(const std::filesystem::path& path, std::string_view what = {});

// Writes `text` to a temporary file beside `path` (same file system, name unique to this process),
// then renames it over `path`: readers see the old file or the new one, never half of one. Throws
// Error "cannot write <what> '<path>': <reason>" (the temporary file removed).
void write_file_atomic(const std::filesystem::path& path, std::string_view text, std::string_view what = {});

}  // namespace mutwo::profiles

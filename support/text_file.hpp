#pragma once
// Whole files in and out: the one reader and the one atomic writer of the project. Reading accepts
// gzip-compressed text transparently, since traces from torch.profiler are commonly stored as
// .json.gz; writing replaces the target only once the whole text is on disk.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mutwo::support {

// The largest input mutwo reads, on disk or decompressed: 2 GiB. Larger traces, logs or graphs are
// refused before they are read (or, for gzip, as soon as the output passes it), not after they
// have taken the machine's memory.
inline constexpr int64_t kMaxInputBytes = int64_t{1} << 31;

// The file's bytes, as they are. `what` names the file in errors ("trace file", "schedule file";
// empty: just the path): Error "cannot open <what> '<path>' for reading: <reason>" when it cannot
// be opened, Error "cannot read ..." when reading fails.
// Error "<what> '<path>' is N bytes, more than the M mutwo reads" past max_bytes (a pipe, which has
// no size, is read up to max_bytes); a device (/dev/zero), socket or directory is refused unread.
std::string read_file_bytes(const std::filesystem::path& path, std::string_view what = {},
                            int64_t max_bytes = kMaxInputBytes);

// The file's text; gunzipped when it starts with the gzip magic (1f 8b), whatever its name.
// Errors as read_file_bytes, plus FormatError when the gzip stream is corrupt or truncated, each
// naming the path.
// FormatError when it decompresses to more than max_bytes.
std::string read_text_file(const std::filesystem::path& path, std::string_view what = {},
                           int64_t max_bytes = kMaxInputBytes);

// Bytes read from `source` (a path, for messages) as text: gunzipped when they start with the gzip
// magic, as read_text_file does; FormatError on a corrupt or truncated stream or past max_bytes.
std::string text_of_bytes(std::string bytes, const std::filesystem::path& source,
                          int64_t max_bytes = kMaxInputBytes);

// Writes `text` to a temporary file beside `path` (same file system, name unique to this process),
// then renames it over `path`: readers see the old file or the new one, never half of one. Throws
// Error "cannot write <what> '<path>': <reason>" (the temporary file removed).
// A link is written through to its target. Refused before anything is written: a target that
// exists and is not a regular file (a directory, /dev/null, a pipe), a directory that is missing or
// not writable (writable_target).
void write_file_atomic(const std::filesystem::path& path, std::string_view text, std::string_view what = {});

// The file write_file_atomic(path) would replace (a link's target), or Error naming `what`, the path
// and the reason it cannot be written. Commands call it on every output before they work or write,
// so that one bad output path loses none of the others.
std::filesystem::path writable_target(const std::filesystem::path& path, std::string_view what = {});

// A command's outputs as {flag, path} pairs (an empty path: not asked for), checked before it works
// or writes any of them: each writable_target, and no two the same file (after links), so that one
// bad path neither costs the work nor leaves the other outputs written. Errors start with `context`
// ("calibrate: "), then "<flag> and <flag> are the same file '<path>'".
// `inputs` (flag, path) are the files the command reads: an output that is one of them (after links)
// is refused too, "<flag> '<path>' is the <flag> file read ('<path>'): ...", as writing it would
// replace what was read (a calibration CSV overwritten by its profile).
using FlagPaths = std::vector<std::pair<std::string_view, std::string>>;
void check_output_paths(const FlagPaths& outputs, std::string_view context = {},
                        const FlagPaths& inputs = {});

// The lines of a text with their 1-based numbers (views into `text`), a trailing '\r' dropped; a
// final newline adds no empty line. What the line-oriented readers (CSVs) walk.
std::vector<std::pair<int, std::string_view>> numbered_lines(std::string_view text);

}  // namespace mutwo::support

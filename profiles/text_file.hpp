#pragma once
// Reading the text files users hand to mutwo (traces, logs), gzip-compressed or not: traces from
// torch.profiler are commonly stored as .json.gz.
#include <filesystem>
#include <string>

namespace mutwo::profiles {

// The file's text; gunzipped when it starts with the gzip magic (1f 8b), whatever its name.
// Throws mutwo::Error when it cannot be opened, FormatError when the gzip stream is corrupt or
// truncated, each naming the path.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace mutwo::profiles

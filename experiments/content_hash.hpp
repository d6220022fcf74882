#pragma once
// Content hashes that key stored results: a run's configuration (sweeps skip what is stored) and
// the schedule that ran. 64-bit FNV-1a (Fowler, Noll, Vo) over the exact bytes, as 16 lower-case
// hex digits: stable across platforms and runs, not cryptographic.
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mutwo::experiments {

std::string content_hash(std::string_view text);
// The hash of a configuration's canonical JSON (keys sorted, compact: nlohmann's dump()).
std::string config_hash(const nlohmann::json& config);
// content_hash of a file's bytes; `what` names it in a read error. Remembered by the file's stamp
// (support/file_stamp.hpp): a sweep keys thousands of configurations by the same model file or trace.
std::string file_content_hash(const std::filesystem::path& path, std::string_view what);

}  // namespace mutwo::experiments

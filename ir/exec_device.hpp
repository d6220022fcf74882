#pragma once
// The names of where the executor runs: "cpu", "cuda" (device 0) or "cuda:N". Read by the executor's
// backends and checked by whatever takes a device before it loads the executor (experiment specs).
#include <optional>
#include <string_view>

namespace mutwo::ir {

// nullopt for "cpu"; the CUDA device index for "cuda" (0) and "cuda:N". Throws UnknownNameError
// "unknown device 'x'; valid: cpu, cuda, cuda:N" for another name, Error "device 'cuda:x': expected
// cuda:N with N a device index" for an index that is not one.
std::optional<int> parse_exec_device(std::string_view device);

}  // namespace mutwo::ir

#pragma once
// Opening exec/'s LibTorch module (the executor interface: ir/executor.hpp) for whatever runs
// schedules on a device: the measured experiment kind and the commands run, profile, bench-ops and
// bench-host.
#include <memory>
#include <string_view>

#include "ir/executor.hpp"

namespace mutwo::experiments {

// Loads the LibTorch executor module ($MUTWO_EXEC_MODULE, else libmutwo_exec.so in the running
// program's directory) once per process and returns a new Executor from it. `who` names the caller
// in errors ("'mutwo run'"). Throws mutwo::Error when this build has no LibTorch executor, or the
// module is missing or cannot be loaded (naming the path and the loader's reason).
std::unique_ptr<ir::Executor> load_executor(std::string_view who = "this command");

}  // namespace mutwo::experiments

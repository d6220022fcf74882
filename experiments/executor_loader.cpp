#include "experiments/executor_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::experiments {
namespace {

using Factory = ir::Executor* (*)();

// The module next to the running program (cli/ puts it there), or where the environment says.
std::string module_path() {
  if (const char* env = std::getenv(ir::kExecutorModuleEnv); env != nullptr && *env != '\0') return env;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return ir::kExecutorModuleName;  // the loader's search path
  return (self.parent_path() / ir::kExecutorModuleName).string();
}

// Opened once per process and never closed: executors and the exceptions they throw live in it.
Factory load_factory(std::string_view who) {
  static std::mutex mutex;
  static Factory factory = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (factory != nullptr) return factory;
  const std::string path = module_path();
#ifndef MUTWO_WITH_TORCH
  if (std::getenv(ir::kExecutorModuleEnv) == nullptr) {
    throw Error(
        fmt::format("{} needs the LibTorch executor, and this mutwo was built without LibTorch: install "
                    "libtorch-dev (scripts/setup.sh) and reconfigure with -DMUTWO_WITH_TORCH=ON",
                    who));
  }
#endif
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error(
        fmt::format("{} needs the LibTorch executor module, which cannot be loaded from '{}': {}; "
                    "build the mutwo_exec_module target, or set {} to its path",
                    who, path, reason != nullptr ? reason : "unknown reason", ir::kExecutorModuleEnv));
  }
  void* symbol = dlsym(handle, ir::kExecutorFactorySymbol);
  if (symbol == nullptr) {
    dlclose(handle);
    throw Error(fmt::format("'{}' is not a mutwo executor module: it has no symbol {}", path,
                            ir::kExecutorFactorySymbol));
  }
  factory = reinterpret_cast<Factory>(symbol);
  return factory;
}

}  // namespace

std::unique_ptr<ir::Executor> load_executor(std::string_view who) {
  return std::unique_ptr<ir::Executor>(load_factory(who)());
}

}  // namespace mutwo::experiments

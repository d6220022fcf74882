#include "cli/exec_flags.hpp"

#include <fmt/format.h>

namespace mutwo::cli {

void add_exec_flags(CLI::App* cmd, ExecFlags& flags) {
  // The executor module is not loaded for --help: the build's CUDA option says the default.
#ifdef MUTWO_WITH_CUDA
  const char* default_device = "cuda";
#else
  const char* default_device = "cpu";
#endif
  cmd->add_option("--device", flags.device,
                  fmt::format("Where to execute: cpu, cuda, cuda:N (default: {})", default_device));
  cmd->add_option("--memory-cap", flags.memory_cap,
                  "Emulate a smaller device: a fraction of the CUDA device's memory (0.5) or a size "
                  "(16GiB; on the cpu enforced by accounting the step's tensors)");
  cmd->add_option("--seed", flags.seed, "Seed of the weights, inputs and dropout masks")
      ->capture_default_str();
}

experiments::ScheduleSource schedule_source(const ArrayFlags& flags) {
  experiments::ScheduleSource source;
  source.schedule_file = flags.schedule;
  experiments::ArrayRequest& a = source.array;
  a.model = flags.model;
  a.models = flags.models;
  a.partition = flags.partition;
  a.batch_size = flags.batch_size;
  a.seq_len = flags.seq_len;
  a.image_size = flags.image_size;
  a.dtype = flags.dtype;
  a.precision = std::string(ir::precision_name(precision_flag(flags.precision)));  // names the flag
  a.optimizer = flags.optimizer;
  a.lr = flags.lr;
  a.lean_ops = flags.lean_ops;
  return source;
}

}  // namespace mutwo::cli

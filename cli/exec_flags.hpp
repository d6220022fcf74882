#pragma once
// The executor flags `run` and `profile` share (--device, --memory-cap, --seed), and the array
// flags as the run and profile pipelines (experiments/) take them. The device is opened there,
// through the executor the command loads.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/array_flags.hpp"
#include "experiments/run_pipeline.hpp"

namespace mutwo::cli {

struct ExecFlags {
  std::string device;      // "cpu", "cuda", "cuda:N"; empty: cuda in a CUDA build, else cpu
  std::string memory_cap;  // "0.5" (a fraction of the CUDA device) or "2GiB"; empty: none
  uint64_t seed = 0;
};

void add_exec_flags(CLI::App* cmd, ExecFlags& flags);

// What the array flags (or --schedule) name, as the run and profile pipelines take it.
experiments::ScheduleSource schedule_source(const ArrayFlags& flags);

}  // namespace mutwo::cli

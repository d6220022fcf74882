#pragma once
// The subcommands of `mutwo`, one file each. Each adds itself to the app; its callback calls the
// libraries and prints, and lets mutwo::Error propagate to main() (message to stderr, exit 1).
#include <CLI/CLI.hpp>

namespace mutwo::cli {

void add_models_command(CLI::App& app);    // models_command.cpp
void add_trace_command(CLI::App& app);     // trace_command.cpp
void add_simulate_command(CLI::App& app);  // simulate_command.cpp
void add_search_command(CLI::App& app);    // search_command.cpp
void add_compare_command(CLI::App& app);   // compare_command.cpp
void add_db_command(CLI::App& app);        // db_command.cpp
void add_replay_command(CLI::App& app);    // replay_command.cpp
void add_replay_trace_command(CLI::App& app);  // replay_trace_command.cpp
void add_experiment_command(CLI::App& app);  // experiment_command.cpp
void add_calibrate_command(CLI::App& app);   // calibrate_command.cpp
// Executor commands: they load exec/'s module on demand (experiments::load_executor), and refuse with
// how to build it when this mutwo has no LibTorch.
void add_profile_command(CLI::App& app);  // profile_command.cpp
void add_run_command(CLI::App& app);      // run_command.cpp
void add_bench_ops_command(CLI::App& app);  // bench_ops_command.cpp
void add_bench_host_command(CLI::App& app);  // bench_host_command.cpp

}  // namespace mutwo::cli

#pragma once
// The model-array flags `simulate`, `run` and `profile` share (--model, --models, --partition,
// --batch, --seq-len, --image-size, --dtype, --optimizer, --lr, or --schedule FILE), and what they
// build: the array, its partition and the plain or multiplexed base schedule.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/schedule.hpp"
#include "policies/model_array.hpp"

namespace mutwo::cli {

struct ArrayFlags {
  std::string model;
  int32_t models = 1;
  std::vector<int32_t> partition;  // empty: one sub-array of all models
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  int64_t image_size = 0;
  std::string dtype = "fp32";
  std::string precision = "fp32";
  std::string lean_ops = "none";  // Tempo's lean layers (transforms/lean_ops.hpp)
  std::string optimizer = "adam";
  std::vector<double> lr;  // one, or one per model
  std::string schedule;    // a schedule file instead of a model array
  CLI::Option* model_option = nullptr;
  CLI::Option* schedule_option = nullptr;
};

// Adds the flags; --schedule excludes the array flags. `schedule_help` says what --schedule does.
void add_array_flags(CLI::App* cmd, ArrayFlags& flags, const std::string& schedule_help);
// Throws CLI::RequiredError unless --model or --schedule was given.
void require_model_or_schedule(const ArrayFlags& flags, std::string_view command);

// The plain schedule of the array (sub-arrays one after another) or the --schedule file.
ir::Schedule plain_schedule(const ArrayFlags& flags);

// --precision's value parsed; throws UnknownNameError naming the flag and the value.
ir::Precision precision_flag(const std::string& value);
// Help text of --lean-ops (simulate, run, trace; search adds "both").
std::string lean_ops_help();
// Help text of --precision (every command that builds a model array takes it).
std::string precision_help();

// "bert-base, ...; test-scale: bert-mini, ..." for help texts.
std::string model_names_help();

}  // namespace mutwo::cli

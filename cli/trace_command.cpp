// `mutwo trace`: writes the training-step trace of a zoo model (optionally k models fused), or
// checks an existing trace file and summarises it.
#include <array>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/trace.hpp"
#include "cli/array_flags.hpp"
#include "cli/commands.hpp"
#include "cli/number_flags.hpp"
#include "cli/table.hpp"
#include "io/trace_file.hpp"
#include "ir/schedule_check.hpp"
#include "policies/plain_schedule.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"
#include "zoo/exported_model.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

struct TraceOptions {
  std::string model;
  std::string check;
  std::string output;
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  int64_t image_size = 0;
  int32_t models = 1;
  std::string dtype = "fp32";
  std::string precision = "fp32";
  std::string optimizer = "adam";
  std::vector<double> lr;  // one value for all models, or one per model
};

int64_t count_phase(const Graph& g, Phase phase) {
  int64_t n = 0;
  for (const Op& op : g.ops) n += op.phase == phase;
  return n;
}

int64_t total_flops(const Graph& g) {
  return flops_in_phase(g, Phase::forward) + flops_in_phase(g, Phase::backward) +
         flops_in_phase(g, Phase::optimizer);
}

void write_model_trace(const TraceOptions& opts) {
  api::TraceRequest request;
  request.model = opts.model;
  request.models = opts.models;
  request.batch_size = opts.batch_size;
  request.seq_len = opts.seq_len;
  request.image_size = opts.image_size;
  request.dtype = opts.dtype;
  request.precision = opts.precision;
  request.optimizer = opts.optimizer;
  request.lr = opts.lr;
  Trace trace;
  trace.graph = api::training_step(request);
  const std::string path =
      opts.output.empty()
          ? (opts.models > 1 ? fmt::format("{}-x{}.json", opts.model, opts.models) : opts.model + ".json")
          : opts.output;
  support::FlagPaths inputs;
  if (zoo::is_model_file(opts.model)) inputs.emplace_back("--model", opts.model);
  support::check_output_paths({{"--output", path}}, {}, inputs);
  write_trace(trace, path);
  const Graph& g = trace.graph;
  std::cout << fmt::format("{}: {} ops, {} tensors, {} params, {} GFLOPs/step -> {}\n", g.name, g.ops.size(),
                           g.tensors.size(), human_count(parameter_count(g)),
                           gflops(static_cast<double>(total_flops(g))), path);
}

void check_trace(const std::string& path) {
  const Trace trace = read_trace(path);
  const Graph& g = trace.graph;
  // Held to what simulate --trace holds it to (its width and batch against its ops): "valid" was
  // printed for a graph simulate then refused, with the width and batch its ops contradict.
  ir::validate_schedule(policies::build_plain_schedule({g}));
  const int64_t params = parameter_count(g);
  std::cout << fmt::format("{}: valid mutwo-trace version {}\n", path, kTraceVersion);
  Table table({{"field", Align::left}, {"value", Align::left}});
  table.add_row({"graph", g.name});
  table.add_row({"width", fmt::format("{} model(s)", g.width)});
  table.add_row({"batch", g.batch_size > 0 ? fmt::format("{} per model", g.batch_size) : "unknown"});
  table.add_row({"tensors", std::to_string(g.tensors.size())});
  table.add_row({"ops", fmt::format("{} (forward {}, backward {}, optimizer {})", g.ops.size(),
                                    count_phase(g, Phase::forward), count_phase(g, Phase::backward),
                                    count_phase(g, Phase::optimizer))});
  table.add_row({"parameters", fmt::format("{} ({}), {} per model", human_count(params),
                                           human_bytes(parameter_bytes(g)), human_count(params / g.width))});
  table.add_row({"FLOPs", fmt::format("forward {}, backward {}, optimizer {}",
                                      human_flops(flops_in_phase(g, Phase::forward)),
                                      human_flops(flops_in_phase(g, Phase::backward)),
                                      human_flops(flops_in_phase(g, Phase::optimizer)))});
  table.add_row({"activations", human_bytes(activation_bytes(g))});
  if (trace.op_duration_ns.empty()) {
    table.add_row({"durations", "none measured"});
  } else {
    const int64_t total_ns =
        std::accumulate(trace.op_duration_ns.begin(), trace.op_duration_ns.end(), int64_t{0});
    table.add_row({"durations", fmt::format("measured on {}: {} per step (sum of {} ops)",
                                            trace.device.empty() ? "an unnamed device" : trace.device,
                                            human_duration(total_ns), trace.op_duration_ns.size())});
  }
  std::cout << table.render();
}

}  // namespace

void add_trace_command(CLI::App& app) {
  auto opts = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trace", "Write the training-step trace of a zoo model (k models fused), or --check a trace file");
  const std::string model_names =
      joined(builtin_models().names()) + "; test-scale: " + joined(mini_models().names());
  CLI::Option* model = cmd->add_option("--model,-m", opts->model, "Model to trace: " + model_names);
  CLI::Option* check =
      cmd->add_option("--check", opts->check, "Read and validate a trace file, print a summary");
  model->excludes(check);
  CLI::Option* batch =
      cmd->add_option("--batch", opts->batch_size, "Batch size per model (default: the model's)")
          ->check(kPositiveNumber);
  CLI::Option* seq =
      cmd->add_option("--seq-len", opts->seq_len, "Sequence length (transformers)")->check(kPositiveNumber);
  CLI::Option* image =
      cmd->add_option("--image-size", opts->image_size, "Image side in pixels (vision models)")
          ->check(kPositiveNumber);
  // 1 to 1024 as simulate's and search's: a million-wide trace is gigabytes before any check.
  CLI::Option* width =
      cmd->add_option("--models,-k", opts->models, "Models fused horizontally (HFTA width, 1 to 1024)")
          ->check(CLI::Range(1, 1024))
          ->capture_default_str();
  CLI::Option* dtype =
      cmd->add_option("--dtype", opts->dtype, "Element type: fp32, bf16, fp16")->capture_default_str();
  CLI::Option* precision =
      cmd->add_option("--precision", opts->precision, precision_help())->capture_default_str();
  CLI::Option* optimizer = cmd->add_option("--optimizer", opts->optimizer,
                                           "Optimizer: " + std::string(transforms::optimizer_names()))
                               ->capture_default_str();
  CLI::Option* lr =
      cmd->add_option("--lr", opts->lr, "Learning rate; comma-separated for one per model")->delimiter(',');
  CLI::Option* output =
      cmd->add_option("--output,-o", opts->output, "Trace file to write (default: <model>[-x<k>].json)");
  for (CLI::Option* o : {batch, seq, image, width, dtype, precision, optimizer, lr, output}) o->excludes(check);
  cmd->callback([opts, model, check] {
    if (model->count() == 0 && check->count() == 0) {
      throw CLI::RequiredError("trace: one of --model or --check");
    }
    if (check->count() > 0) {
      check_trace(opts->check);
    } else {
      write_model_trace(*opts);
    }
  });
}

}  // namespace mutwo::cli

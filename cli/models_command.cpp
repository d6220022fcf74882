// `mutwo models`: every registered model with its size, forward cost and activation memory; with
// --mini, the test-scale variants instead of the published zoo.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::ir;
using namespace mutwo::zoo;

struct ModelsOptions {
  bool json = false;
  bool mini = false;       // list the test-scale variants (mini_models()) instead of the zoo
  int64_t batch_size = 0;  // 0: each model's default
  std::string dtype = "fp32";
};

struct ModelRow {
  const ModelInfo* info = nullptr;
  ModelConfig config;
  int64_t parameters = 0;
  int64_t parameter_bytes = 0;
  int64_t forward_flops = 0;
  int64_t activation_bytes = 0;
};

// Builds each model once at its default config (batch and dtype as given).
std::vector<ModelRow> measure_models(const ModelsOptions& opts) {
  const DType dtype = parse_dtype(opts.dtype);
  std::vector<ModelRow> rows;
  const ModelRegistry& registry = opts.mini ? mini_models() : builtin_models();
  for (const ModelInfo& info : registry.models()) {
    ModelRow row;
    row.info = &info;
    row.config.batch_size = opts.batch_size > 0 ? opts.batch_size : info.default_batch_size;
    row.config.seq_len = info.default_seq_len;
    row.config.image_size = info.default_image_size;
    row.config.dtype = dtype;
    Graph g;
    try {
      g = build_model(info.name, row.config);
    } catch (const Error& e) {
      throw Error(fmt::format("model '{}' does not build: {}", info.name, e.what()));
    }
    row.parameters = parameter_count(g);
    row.parameter_bytes = parameter_bytes(g);
    row.forward_flops = flops_in_phase(g, Phase::forward);
    row.activation_bytes = activation_bytes(g);
    rows.push_back(row);
  }
  return rows;
}

void print_json(const std::vector<ModelRow>& rows, const ModelsOptions& opts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ModelRow& r : rows) {
    nlohmann::ordered_json j;
    j["name"] = r.info->name;
    j["family"] = r.info->family;
    j["description"] = r.info->description;
    j["reference"] = r.info->reference;
    j["dtype"] = opts.dtype;
    j["batch_size"] = r.config.batch_size;
    j["default_batch_size"] = r.info->default_batch_size;
    j["seq_len"] = r.config.seq_len;
    j["image_size"] = r.config.image_size;
    j["parameters"] = r.parameters;
    j["parameter_bytes"] = r.parameter_bytes;
    j["forward_flops"] = r.forward_flops;  // the whole batch; divide by batch_size per sample
    j["activation_bytes"] = r.activation_bytes;
    out.push_back(std::move(j));
  }
  std::cout << out.dump(2) << "\n";
}

void print_table(const std::vector<ModelRow>& rows, const ModelsOptions& opts) {
  Table table({{"model", Align::left},
               {"family", Align::left},
               {"params", Align::right},
               {"fwd GFLOPs/sample", Align::right},
               {"activations", Align::right},
               {"batch", Align::right},
               {"reference", Align::left}});
  for (const ModelRow& r : rows) {
    table.add_row({r.info->name, r.info->family, human_count(r.parameters),
                   gflops(static_cast<double>(r.forward_flops) / static_cast<double>(r.config.batch_size)),
                   human_bytes(r.activation_bytes), std::to_string(r.config.batch_size), r.info->reference});
  }
  std::cout << table.render();
  std::cout << fmt::format(
      "{} models, {}; activations: forward-produced tensors of one model at the batch shown\n", rows.size(),
      opts.dtype);
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto opts = std::make_shared<ModelsOptions>();
  CLI::App* cmd =
      app.add_subcommand("models", "List the model zoo: parameters, forward GFLOPs, activation memory");
  cmd->add_flag("--json", opts->json, "Print a JSON array with exact integers instead of a table");
  cmd->add_flag("--mini", opts->mini,
                "List the test-scale variants of each family (bert-mini, ...) instead of the published zoo");
  cmd->add_option("--batch", opts->batch_size, "Batch size per model (default: each model's own)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", opts->dtype, "Element type: fp32, bf16, fp16")->capture_default_str();
  cmd->callback([opts] {
    const std::vector<ModelRow> rows = measure_models(*opts);
    if (opts->json) {
      print_json(rows, *opts);
    } else {
      print_table(rows, *opts);
    }
  });
}

}  // namespace mutwo::cli

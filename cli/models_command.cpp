// `mutwo models`: every registered model with its size, forward cost and activation memory; with
// --mini, the test-scale variants instead of the published zoo.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "api/models.hpp"
#include "cli/commands.hpp"
#include "cli/number_flags.hpp"
#include "cli/table.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::ir;
using namespace mutwo::zoo;

struct ModelsOptions {
  bool json = false;
  api::ModelsRequest request;
};

void print_table(const std::vector<api::ModelRow>& rows, const ModelsOptions& opts) {
  Table table({{"model", Align::left},
               {"family", Align::left},
               {"params", Align::right},
               {"fwd GFLOPs/sample", Align::right},
               {"activations", Align::right},
               {"batch", Align::right},
               {"reference", Align::left}});
  for (const api::ModelRow& r : rows) {
    table.add_row({r.info->name, r.info->family, human_count(r.parameters),
                   gflops(static_cast<double>(r.forward_flops) / static_cast<double>(r.config.batch_size)),
                   human_bytes(r.activation_bytes), std::to_string(r.config.batch_size), r.info->reference});
  }
  std::cout << table.render();
  std::cout << fmt::format(
      "{} models, {}; activations: forward-produced tensors of one model at the batch shown\n", rows.size(),
      opts.request.dtype);
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto opts = std::make_shared<ModelsOptions>();
  CLI::App* cmd =
      app.add_subcommand("models", "List the model zoo: parameters, forward GFLOPs, activation memory");
  cmd->add_flag("--json", opts->json, "Print a JSON array with exact integers instead of a table");
  cmd->add_flag("--mini", opts->request.mini,
                "List the test-scale variants of each family (bert-mini, ...) instead of the published zoo");
  cmd->add_option("--batch", opts->request.batch_size, "Batch size per model (default: each model's own)")
      ->check(kPositiveNumber);
  cmd->add_option("--dtype", opts->request.dtype, "Element type: fp32, bf16, fp16")->capture_default_str();
  cmd->callback([opts] {
    const std::vector<api::ModelRow> rows = api::list_models(opts->request);
    if (opts->json) {
      std::cout << api::models_json(rows, opts->request).dump(2) << "\n";
    } else {
      print_table(rows, *opts);
    }
  });
}

}  // namespace mutwo::cli

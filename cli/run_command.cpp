// `mutwo run` (placeholder until the executor lands).
#include "cli/commands.hpp"

namespace mutwo::cli {

void add_run_command(CLI::App& app) {
  app.add_subcommand("run", "placeholder");
}

}  // namespace mutwo::cli

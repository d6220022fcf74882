// `mutwo compare`: predicted against measured step time and peak memory from the results database.
// (Placeholder; filled in with the results store.)
#include "cli/commands.hpp"

namespace mutwo::cli {

void add_compare_command(CLI::App& app) {
  app.add_subcommand("compare", "Predicted vs measured step time and peak memory from a results database");
}

}  // namespace mutwo::cli

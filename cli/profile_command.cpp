// `mutwo profile` (placeholder until the executor lands).
#include "cli/commands.hpp"

namespace mutwo::cli {

void add_profile_command(CLI::App& app) {
  app.add_subcommand("profile", "placeholder");
}

}  // namespace mutwo::cli

// `mutwo profile` and `mutwo run` in a build without LibTorch: the commands exist (so --help lists
// them) and refuse with how to get them.
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "profiles/error.hpp"

namespace mutwo::cli {
namespace {

void add_unavailable(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* cmd = app.add_subcommand(name, description + " (needs the LibTorch executor)");
  cmd->allow_extras();
  cmd->callback([name] {
    throw Error("'mutwo " + name +
                "' needs the LibTorch executor, and this mutwo was built without LibTorch: install "
                "libtorch-dev (scripts/setup.sh) and reconfigure with -DMUTWO_WITH_TORCH=ON");
  });
}

}  // namespace

void add_profile_command(CLI::App& app) {
  add_unavailable(app, "profile", "Measure per-op times of a model array's training step");
}

void add_run_command(CLI::App& app) {
  add_unavailable(app, "run", "Execute a schedule and store the measurement next to its prediction");
}

}  // namespace mutwo::cli

// mutwo: train many models at once on one GPU under a memory limit (μ-TWO, HFTA) — command line.
// Thin: parses flags, calls the libraries; a mutwo::Error becomes "error: <message>" and exit 1,
// a usage error CLI11's message and exit 2.
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "support/error.hpp"

namespace {

// An empty value is never what a flag means: `--gpu ""` or `-o ""` used to fall back to the default
// silently, since "" is also "not given". Every flag that takes a value refuses one, in every command.
void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_items_expected_max() == 0) continue;  // a switch
    option->check(CLI::Validator(
        [](std::string& value) { return value.empty() ? std::string("must not be empty") : std::string(); },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mutwo: simulate and schedule training many models at once on one GPU under a memory limit"};
  app.name("mutwo");
  app.require_subcommand(1);
  app.fallthrough(false);
  mutwo::cli::add_models_command(app);
  mutwo::cli::add_trace_command(app);
  mutwo::cli::add_simulate_command(app);
  mutwo::cli::add_search_command(app);
  mutwo::cli::add_replay_command(app);
  mutwo::cli::add_replay_trace_command(app);
  mutwo::cli::add_profile_command(app);
  mutwo::cli::add_run_command(app);
  mutwo::cli::add_compare_command(app);
  mutwo::cli::add_experiment_command(app);
  mutwo::cli::add_db_command(app);
  mutwo::cli::add_calibrate_command(app);
  mutwo::cli::add_bench_ops_command(app);
  mutwo::cli::add_bench_host_command(app);
  refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints --help, or the usage error and a hint
    return code == 0 ? 0 : 2;
  } catch (const mutwo::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

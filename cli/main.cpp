// mutwo: train many models at once on one GPU under a memory limit (μ-TWO, HFTA) — command line.
// Thin: parses flags, calls the libraries; a mutwo::Error becomes "error: <message>" and exit 1,
// a usage error CLI11's message and exit 2.
#include <charconv>
#include <cstdint>
#include <exception>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "support/error.hpp"

namespace {

// CLI11 reads an integer with strtoll or strtoull in base 0: "010" was 8, "0x10" 16, a value past 64
// bits saturated silently and an unsigned "-1" wrapped to 2^64 - 1. An integer flag's value is decimal
// digits that fit its 64 bits, rewritten without a sign or leading zeros (010 is ten) before CLI11's
// range checks and conversion see it (a narrower flag's own range still applies).
template <typename Integer>
std::string decimal_whole_number(std::string& value) {
  const char* begin = value.data() + (value.starts_with('+') ? 1 : 0);
  const char* end = value.data() + value.size();
  Integer number = 0;
  const auto [stop, error] = std::from_chars(begin, end, number);
  if (begin == end || error != std::errc() || stop != end) {
    return fmt::format("'{}' must be a whole number from {} to {}", value,
                       std::numeric_limits<Integer>::min(), std::numeric_limits<Integer>::max());
  }
  value = std::to_string(number);
  return {};
}

// Every flag that takes a value, in every command: an empty value is never what a flag means
// (`--gpu ""` or `-o ""` fell back to the default silently, since "" is also "not given"), and an
// integer is a decimal_whole_number.
void check_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_items_expected_max() == 0) continue;  // a switch
    option->check(CLI::Validator(
        [](std::string& value) { return value.empty() ? std::string("must not be empty") : std::string(); },
        ""));
    const std::string type = option->get_type_name();
    if (type.starts_with("UINT")) {
      option->transform(CLI::Validator(decimal_whole_number<uint64_t>, ""));
    } else if (type.starts_with("INT")) {
      option->transform(CLI::Validator(decimal_whole_number<int64_t>, ""));
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) check_values(*sub);
}

// A comma list with an empty item: CLI11 drops empty items, so "4096,,8192" read as two sizes and
// "--sizes , -o f" as no size, after which CLI11 took the next word ("-o") as the list. The error
// names the flag (the word before, or the part before '=') and the value.
std::string empty_list_item(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view flag = i > 1 ? std::string_view(argv[i - 1]) : std::string_view("command");
    if (arg.starts_with("--") && arg.find('=') != std::string_view::npos) {
      flag = arg.substr(0, arg.find('='));
      arg.remove_prefix(flag.size() + 1);
    }
    if (arg.find(',') == std::string_view::npos) continue;
    const bool empty_item =
        arg.starts_with(',') || arg.ends_with(',') || arg.find(",,") != std::string_view::npos;
    if (empty_item)
      return fmt::format("{}: '{}' lists an empty item: give values separated by single commas", flag, arg);
  }
  return {};
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
  check_values(app);
  if (const std::string error = empty_list_item(argc, argv); !error.empty()) {
    std::cerr << error << "\nRun with --help for more information.\n";
    return 2;
  }
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

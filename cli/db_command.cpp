// `mutwo db`: maintenance of results databases. `mutwo db merge OUT IN...` merges sweep shards into
// one file (experiments/db_merge.hpp says what counts as already present).
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "experiments/db_merge.hpp"
#include "experiments/results_db.hpp"

namespace mutwo::cli {
namespace {

using experiments::MergeCounts;
using experiments::ResultsDb;

struct MergeOptions {
  std::string out;
  std::vector<std::string> inputs;
};

std::string plural(int64_t n, const char* noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string describe(const MergeCounts& c) {
  return fmt::format("{} added, {} already present; {} added, {} updated", plural(c.runs_added, "run"),
                     c.runs_skipped, plural(c.experiments_added, "experiment"), c.experiments_updated);
}

void run_merge(const MergeOptions& opts) {
  // Every input, and OUT when it exists, is opened and read through (every page, every cell) before
  // OUT is written: a missing, foreign, damaged or badly typed file stops the merge with OUT as it was.
  std::vector<ResultsDb> inputs;
  for (const std::string& path : opts.inputs) {
    if (experiments::same_file(opts.out, path)) {
      throw experiments::ResultsDbError(
          fmt::format("cannot merge results database '{}' into itself (it is OUT, '{}')", path, opts.out));
    }
    inputs.push_back(ResultsDb::open(path, ResultsDb::OpenMode::existing));
    experiments::check_sound(inputs.back());
  }
  experiments::check_results_destination(opts.out, "OUT");
  ResultsDb out = ResultsDb::open(opts.out, ResultsDb::OpenMode::create);
  MergeCounts total;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const MergeCounts counts = experiments::merge_results(out, inputs[i]);
    std::cout << fmt::format("merged {}: {}\n", opts.inputs[i], describe(counts)) << std::flush;
    total += counts;
  }
  const int64_t runs =
      std::stoll(out.connection().query_text("SELECT count(*) FROM runs", "cannot count runs"));
  std::cout << fmt::format("total: {}; {} now holds {}\n", describe(total), opts.out, plural(runs, "run"));
}

}  // namespace

void add_db_command(CLI::App& app) {
  CLI::App* db = app.add_subcommand("db", "Maintain results databases");
  db->require_subcommand(1);

  auto opts = std::make_shared<MergeOptions>();
  CLI::App* merge = db->add_subcommand(
      "merge",
      "Merge results databases (sweep shards) into OUT, created when absent: every run OUT lacks is copied "
      "with its prediction, measurement, op times and experiment row; a run whose config hash and mutwo "
      "version OUT already holds (or, without a config hash, an identical run) is skipped, so merging again "
      "adds nothing. Each experiment spec is added, or replaced by a later one");
  merge->add_option("OUT", opts->out, "Results database to merge into (created when absent)")->required();
  merge->add_option("IN", opts->inputs, "Results databases to merge from (they must exist; never changed)")
      ->required();
  merge->callback([opts] { run_merge(*opts); });
}

}  // namespace mutwo::cli

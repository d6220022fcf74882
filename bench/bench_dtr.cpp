// DTR replay speed: simrd's whole "pareto" sweep (6 heuristics x 10 budget ratios) on DTR's own
// logs, against simrd's wall time for the same runs (tests/fixtures/dtr/simrd_results.json,
// "seconds", on a 2-core machine). Target (issue 6): at least 100x faster than simrd per log.
// Counters: speedup = simrd's summed seconds / this sweep's time; runs/s.
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/dtr_log.hpp"
#include "policies/dtr_heuristics.hpp"
#include "sim/dtr_replay.hpp"
#include "support/text_file.hpp"

namespace {

const std::string kFixtures = std::string(MUTWO_BENCH_FIXTURES) + "/dtr/";
const char* const kHeuristics[] = {"dtr", "dtr-eqclass", "dtr-local", "msps", "lru", "largest"};

double simrd_seconds(const std::string& log) {
  std::ifstream in(kFixtures + "simrd_results.json");
  const nlohmann::json results = nlohmann::json::parse(in);
  double seconds = 0;
  for (const nlohmann::json& run : results["runs"]) {
    if (run["log"] == log) seconds += run["seconds"].get<double>();
  }
  return seconds;
}

// The full sweep over `jobs` threads (1: one core, as simrd ran).
void sweep(benchmark::State& state, const std::string& log_name, bool include_parse) {
  const int jobs = static_cast<int>(state.range(0));
  const std::string text = mutwo::support::read_text_file(kFixtures + log_name + ".gz");
  std::vector<std::unique_ptr<mutwo::sim::EvictionHeuristic>> owned;
  std::vector<const mutwo::sim::EvictionHeuristic*> heuristics;
  for (const char* h : kHeuristics) {
    owned.push_back(mutwo::policies::make_dtr_heuristic(h));
    heuristics.push_back(owned.back().get());
  }
  const mutwo::io::DtrLog parsed = mutwo::io::parse_dtr_log(text, log_name);
  for (auto _ : state) {
    if (include_parse) {
      const mutwo::io::DtrLog log = mutwo::io::parse_dtr_log(text, log_name);
      const auto baseline = mutwo::sim::dtr_baseline(log);
      benchmark::DoNotOptimize(
          mutwo::sim::sweep_dtr_log(log, baseline, mutwo::sim::dtr_paper_ratios(), heuristics, jobs));
    } else {
      const auto baseline = mutwo::sim::dtr_baseline(parsed);
      benchmark::DoNotOptimize(
          mutwo::sim::sweep_dtr_log(parsed, baseline, mutwo::sim::dtr_paper_ratios(), heuristics, jobs));
    }
  }
  const double simrd = simrd_seconds(log_name);
  state.counters["simrd_s"] = simrd;
  state.counters["speedup"] =
      benchmark::Counter(simrd * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["runs/s"] =
      benchmark::Counter(60.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

const std::string kResNet = "resnet32-56-9000000000.0-2020-10-1-13-3-30-default.log";
const std::string kUNet = "unet-6-8000000000.0-2020-10-1-10-57-18-default.log";

void BM_SweepResNet32(benchmark::State& state) {
  sweep(state, kResNet, false);
}
void BM_SweepUNet(benchmark::State& state) {
  sweep(state, kUNet, false);
}
void BM_ParseAndSweepResNet32(benchmark::State& state) {
  sweep(state, kResNet, true);
}
void BM_ParseAndSweepUNet(benchmark::State& state) {
  sweep(state, kUNet, true);
}

}  // namespace

BENCHMARK(BM_SweepResNet32)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepUNet)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ParseAndSweepResNet32)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ParseAndSweepUNet)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();

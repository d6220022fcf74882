// The search over a server's GPUs (policies/server_search.hpp) and what each GPU runs alone: a model
// array's placement is a single-GPU plan per GPU, lifted onto the server (policies/server_lift.hpp)
// so that its swaps share the links. The parts must be what the single-GPU simulator priced.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/server_catalog.hpp"
#include "ir/schedule_check.hpp"
#include "policies/search.hpp"
#include "policies/server_lift.hpp"
#include "policies/server_search.hpp"
#include "sim/server_simulator.hpp"
#include "sim/simulator.hpp"
#include "tests/support/server_arrays.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;

namespace {


// `s` lifted onto GPU 0 of Harmony's server, alone.
ir::ServerSchedule lifted_alone(const ir::Schedule& s, const costmodel::OpCostModel& cost,
                                sim::HostMode mode) {
  ir::ServerSchedule lifted;
  lifted.server = "4x-gtx1080ti";
  lifted.gpu_count = 1;
  lifted.initial_bytes = {0};
  policies::lift_schedule(s, cost, 0, lifted, mode);
  return lifted;
}

int64_t task_count(const ir::ServerSchedule& s, int32_t gpu) {
  int64_t n = 0;
  for (const ir::ServerTask& t : s.tasks) n += t.gpu == gpu ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("an array spread over a server: each GPU's part is the single-GPU plan the search priced") {
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  const policies::ServerSearchReport report = policies::run_server_search(test::gpt2_mini_array(7, cost));
  REQUIRE(report.any_feasible());
  const policies::ServerSearchRow& winner = report.rows.front();
  CHECK(winner.placement == "4 GPUs: gpt2-mini:2 | gpt2-mini:2 | gpt2-mini:2 | gpt2-mini:1");
  REQUIRE(report.best_parts.size() == 4);
  int32_t models = 0;
  int64_t swapped_alone = 0;
  int64_t slowest_alone_ns = 0;
  for (size_t g = 0; g < report.best_parts.size(); ++g) {
    const policies::ServerGpuPart& part = report.best_parts[g];
    CAPTURE(g);
    CHECK(part.gpu == static_cast<int32_t>(g));
    REQUIRE(part.architectures.size() == 1);
    models += part.architectures.front().count;
    REQUIRE(part.schedule.has_value());
    ir::validate_schedule(*part.schedule);
    // Alone, on its own host link, the part is exactly what the search priced.
    sim::SimOptions alone;
    alone.memory_limit_bytes = report.memory_limit_bytes;
    const sim::Prediction p = sim::simulate(*part.schedule, cost, alone);
    CHECK_FALSE(p.oom);
    CHECK(p.peak_bytes == part.peak_bytes);
    CHECK(p.step_time_ns == part.step_time_ns);
    swapped_alone += p.bytes_swapped_out + p.bytes_swapped_in;
    slowest_alone_ns = std::max(slowest_alone_ns, p.step_time_ns);
    CHECK(part.peak_bytes <= report.memory_limit_bytes);
    // The server schedule holds the part's instructions on that GPU, one task each.
    CHECK(task_count(report.best, part.gpu) == static_cast<int64_t>(part.schedule->instructions.size()));
  }
  CHECK(models == 7);
  // Together the three swapping GPUs share the one x16 root link: every byte each swaps alone
  // crosses it, and the step is no shorter than the slowest part alone (1,115,176 ns).
  CHECK(winner.swap_bytes == swapped_alone);
  CHECK(swapped_alone == 3 * 262'144);
  CHECK(winner.step_time_ns >= slowest_alone_ns);
  CHECK(slowest_alone_ns == 1'115'176);
  CHECK(winner.busiest_link == "switch0-host (up)");
  // Two fused models swap and recompute under 1 MiB (capuchin-style mutwo plan); one alone fits plainly.
  CHECK(report.best_parts[0].partition == "gpt2-mini:2");
  CHECK(report.best_parts[0].policy == "mutwo");
  CHECK(report.best_parts[3].strategy == "sequential");
  CHECK(report.best_parts[3].policy == "none");
}

TEST_CASE("a single-GPU plan lifted onto one GPU of a server, alone, takes the single-GPU simulator's time") {
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  const policies::ServerSearchReport report = policies::run_server_search(test::gpt2_mini_array(7, cost));
  REQUIRE(report.best_parts.size() == 4);
  const costmodel::ServerSpec server = costmodel::find_server("4x-gtx1080ti");
  // GPU 0's plan swaps and recomputes; GPU 3's runs one model plainly. Frees stay on their stream
  // (a compute stream waits behind the free of a tensor still being swapped out) and, with a host
  // mode, each task carries its issue cost and the launch queue's depth, so the two engines agree
  // to the nanosecond: GPU time alone, PyTorch eager (the GTX 1080 Ti's host figures) and CUDA graphs.
  for (const int gpu : {0, 3}) {
    const ir::Schedule& s = *report.best_parts[static_cast<size_t>(gpu)].schedule;
    for (const sim::HostMode mode : {sim::HostMode::none, sim::HostMode::eager, sim::HostMode::cuda_graph}) {
      CAPTURE(gpu);
      CAPTURE(sim::host_mode_name(mode));
      const ir::ServerSchedule lifted = lifted_alone(s, cost, mode);
      const sim::ServerPrediction on_server = sim::simulate_server(lifted, server, {.memory_limit_bytes = -1});
      sim::SimOptions options;
      options.host_mode = mode;
      const sim::Prediction single = sim::simulate(s, cost, options);
      CHECK(on_server.step_time_ns == single.step_time_ns);
      CHECK(on_server.gpus[0].host_busy_ns == single.host_busy_ns);
      if (mode == sim::HostMode::none) CHECK(single.host_busy_ns == 0);
      if (mode == sim::HostMode::eager) CHECK(single.host_bound_idle_ns > 0);  // the GPU waits for the host
    }
  }
}

TEST_CASE("a plan with the optimizer on the host CPU lifts too, its updates on the GPU's host CPU stream") {
  // 2 fused bert-mini under 500 KiB on a 1080 Ti: the best plan keeps the model state on the host and
  // runs Adam there (ZeRO-Offload); lifted alone it takes the single-GPU simulator's time.
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  policies::SearchConfig sc;
  policies::ArchitectureCount a;
  a.model = "bert-mini";
  a.count = 2;
  sc.architectures = {a};
  sc.optimizer.kind = transforms::OptimizerKind::adam;
  sc.cost = &cost;
  sc.memory_limit_bytes = 500 * 1024;
  sc.top = 1;
  const policies::SearchReport r = policies::run_search(sc);
  REQUIRE(r.any_feasible());
  REQUIRE(r.best_schedule.has_value());
  const ir::Schedule& s = *r.best_schedule;
  REQUIRE(s.host_stream != ir::kNoStream);
  const costmodel::ServerSpec server = costmodel::find_server("4x-gtx1080ti");
  for (const sim::HostMode mode : {sim::HostMode::none, sim::HostMode::eager}) {
    CAPTURE(sim::host_mode_name(mode));
    const ir::ServerSchedule lifted = lifted_alone(s, cost, mode);
    int64_t host_cpu_ns = 0;
    for (const ir::ServerTask& t : lifted.tasks) {
      if (t.stream == ir::kServerHostCpuStream) host_cpu_ns += t.duration_ns;
    }
    sim::SimOptions options;
    options.host_mode = mode;
    const sim::Prediction single = sim::simulate(s, cost, options);
    CHECK(host_cpu_ns == single.host_optimizer_ns);
    CHECK(host_cpu_ns > 0);
    CHECK(sim::simulate_server(lifted, server, {.memory_limit_bytes = -1}).step_time_ns == single.step_time_ns);
  }
}

TEST_CASE("a server search refuses micro-batch and layer-pack counts past their bounds before it plans") {
  // 100,000 micro-batches did not end: each count is a schedule planned and simulated per GPU count.
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  policies::ServerSearchConfig config = test::gpt2_mini_array(1, cost);
  config.micro_batches = {2, policies::kMaxMicroBatches + 1};
  CHECK_THROWS_WITH_AS(policies::run_server_search(config),
                       "server search: micro-batch count 1025 must be from 1 to 1024", Error);
  config.micro_batches = {2};
  config.packs = {policies::kMaxLayerPacks + 1};
  CHECK_THROWS_WITH_AS(policies::run_server_search(config),
                       "server search: layer pack count 4097 must be from 1 to 4096", Error);
}

TEST_CASE("a server search refuses a scheme, micro-batch count or pack count given twice") {
  // Each was searched twice and its rows printed twice.
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  policies::ServerSearchConfig config = test::gpt2_mini_array(1, cost);
  config.schemes = {"harmony-pp", "dp", "harmony-pp"};
  CHECK_THROWS_WITH_AS(policies::run_server_search(config),
                       "server search: scheme 'harmony-pp' is given twice; give each scheme once", Error);
  config.schemes = {"harmony-pp"};
  config.micro_batches = {2, 4, 2};
  CHECK_THROWS_WITH_AS(policies::run_server_search(config),
                       "server search: micro-batch count 2 is given twice; give each count once", Error);
  config.micro_batches = {2};
  config.packs = {8, 8};
  CHECK_THROWS_WITH_AS(policies::run_server_search(config),
                       "server search: layer pack count 8 is given twice; give each count once", Error);
  config.packs = {8};
  CHECK(policies::run_server_search(config).rows.size() > 0);
}

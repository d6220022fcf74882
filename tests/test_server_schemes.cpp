// Harmony's schemes on its server: layer packs, the schedules each scheme builds, and the swap and
// peer volumes the simulator measures against the table's formulas (policies/server_schemes.hpp).
#include <doctest/doctest.h>

#include <string>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/server_catalog.hpp"
#include "policies/layer_packs.hpp"
#include "policies/server_schemes.hpp"
#include "sim/server_simulator.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;
using ir::Payload;

namespace {

ir::Graph step_of(const char* model, int64_t batch, int64_t seq_len) {
  zoo::ModelConfig config;
  config.batch_size = batch;
  config.seq_len = seq_len;
  transforms::OptimizerConfig adam;
  adam.kind = transforms::OptimizerKind::adam;
  return transforms::build_training_step(zoo::build_model(model, config), adam);
}

int64_t swapped(const sim::ServerPrediction& p, Payload payload) {
  return p.swap_bytes[static_cast<size_t>(payload)];
}
int64_t peer(const sim::ServerPrediction& p) {
  int64_t total = 0;
  for (const int64_t b : p.peer_bytes) total += b;
  return total;
}

}  // namespace

TEST_CASE("layer packs keep every byte and nanosecond of the step") {
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  const ir::Graph step = step_of("bert-large", 4, 128);
  const policies::PackedModel packed = policies::pack_training_step(step, cost, 8);
  REQUIRE(packed.packs.size() == 8);
  // W and dW: BERT-Large's 336.2M fp32 parameters; K: Adam's two moments.
  CHECK(packed.weight_bytes() == ir::parameter_bytes(step));
  CHECK(packed.gradient_bytes() == packed.weight_bytes());
  CHECK(packed.optimizer_bytes() == 2 * packed.weight_bytes());
  CHECK(packed.stash_bytes() == ir::saved_for_backward_bytes(step));
  int64_t ns = 0;
  for (const auto& p : packed.packs) ns += p.forward_ns + p.backward_ns + p.update_ns;
  int64_t step_ns = 0;
  for (const int64_t d : costmodel::op_durations_ns(cost, step)) step_ns += d;
  CHECK(ns == step_ns);
  // Between encoder layers only the hidden state (4 x 128 x 1024 fp32 = 2 MiB) and the attention
  // mask cross; no boundary is empty, none is the whole stash.
  for (size_t p = 0; p + 1 < packed.packs.size(); ++p) {
    CHECK(packed.packs[p].output_bytes >= 4 * 128 * 1024 * 4);
    CHECK(packed.packs[p].output_bytes < packed.packs[p].stash_bytes);
  }
  CHECK(packed.packs.back().output_bytes == 0);
  CHECK_THROWS_WITH_AS(policies::pack_training_step(step, cost, 0), doctest::Contains("layer packs = 0 must be in [1,"), Error);
}

TEST_CASE("simulated swap and peer volumes equal Harmony's table for N in {2, 4}, M in {1, 4}") {
  const costmodel::ServerSpec server = costmodel::find_server("4x-gtx1080ti");
  const costmodel::AnalyticCostModel cost(costmodel::find_device(server.gpu));
  struct Case {
    const char* model;
    int64_t batch;
    int64_t seq_len;
  };
  for (const Case& model : {Case{"bert-large", 4, 128}, Case{"gpt2-xl", 1, 512}}) {
    const policies::PackedModel packed = policies::pack_training_step(step_of(model.model, model.batch, model.seq_len), cost, 8);
    const int64_t w = packed.weight_bytes();
    const int64_t k = packed.optimizer_bytes();
    const int64_t x = packed.stash_bytes();
    for (const int32_t n : {2, 4}) {
      for (const int32_t m : {1, 4}) {
        for (const auto& scheme : policies::builtin_server_schemes().schemes()) {
          CAPTURE(model.model);
          CAPTURE(n);
          CAPTURE(m);
          CAPTURE(scheme.name);
          const policies::SchemeConfig config{n, m};
          const auto schedule = policies::build_server_schedule(scheme.name, packed, server, config);
          const auto p = sim::simulate_server(schedule, server, {.memory_limit_bytes = -1});
          const policies::SchemeVolumes v = policies::expected_volumes(scheme.name, packed, config);
          CHECK(swapped(p, Payload::weights) == v.swap_weights);
          CHECK(swapped(p, Payload::weight_gradients) == v.swap_gradients);
          CHECK(swapped(p, Payload::optimizer_state) == v.swap_optimizer);
          CHECK(swapped(p, Payload::stashed_activations) == v.swap_stash);
          CHECK(peer(p) == v.peer_bytes);
          // The formulas themselves, in W, dW = W, K and X (X per micro-batch of the whole model).
          if (scheme.name == "dp-swap") {
            CHECK(v.swap_weights == n * (4 * m + 2) * w);  // Harmony's slide: 4 M_slide + 2N with M_slide = N M
            CHECK(v.swap_gradients == 2 * m * n * w);
          }
          if (scheme.name == "harmony-dp") {
            CHECK(v.swap_weights == 3 * n * w);
            CHECK(v.swap_gradients == 0);
            CHECK(v.peer_bytes == 2 * (n - 1) * w);  // ring all-reduce
          }
          if (scheme.name == "harmony-dp-p2p") {  // one GPU swaps, the peers pass W and K on
            CHECK(v.swap_weights == 3 * w);
            CHECK(v.peer_bytes == 2 * (n - 1) * w + (n - 1) * (2 * w + k));
          }
          if (scheme.name == "pp-swap") CHECK(v.swap_weights == (4 * m + 2) * w);
          if (scheme.name == "harmony-pp") {
            CHECK(v.swap_weights == 3 * w);
            CHECK(v.swap_optimizer == 2 * k);
            CHECK(v.swap_stash == 2 * m * x);
          }
          if (!scheme.swaps) CHECK(p.swap_bytes == std::array<int64_t, ir::kPayloadCount>{});
        }
      }
    }
  }
}

TEST_CASE("Harmony's schemes swap less and stall less than per-GPU swapping on its server") {
  const costmodel::ServerSpec server = costmodel::find_server("4x-gtx1080ti");
  const costmodel::AnalyticCostModel cost(costmodel::find_device(server.gpu));
  const policies::PackedModel packed = policies::pack_training_step(step_of("bert-large", 4, 128), cost, 8);
  const policies::SchemeConfig config{4, 4};
  auto run = [&](const char* scheme) {
    return sim::simulate_server(policies::build_server_schedule(scheme, packed, server, config), server);
  };
  const auto dp_swap = run("dp-swap");
  const auto harmony_dp = run("harmony-dp");
  const auto pp_swap = run("pp-swap");
  const auto harmony_pp = run("harmony-pp");
  CHECK(harmony_dp.step_time_ns < dp_swap.step_time_ns);
  CHECK(harmony_pp.step_time_ns < pp_swap.step_time_ns);
  CHECK(harmony_dp.compute_stall_ns < dp_swap.compute_stall_ns);
  // Swapping over the peer links instead of the one root link: faster again.
  CHECK(run("harmony-dp-p2p").step_time_ns < harmony_dp.step_time_ns);
  // Every per-GPU swap crosses the switch's one root link (resource 1 up, 2 down): it is the
  // busiest resource of dp-swap.
  CHECK(dp_swap.resource_busy_ns[1] > dp_swap.step_time_ns / 2);
  // Per-GPU swapping in the pipeline loads stage 0 (the embeddings' weights) most.
  CHECK(pp_swap.gpus[0].bytes_from_host > pp_swap.gpus[3].bytes_from_host);
}

TEST_CASE("scheme configs are checked, naming the field") {
  const costmodel::ServerSpec server = costmodel::find_server("4x-gtx1080ti");
  const costmodel::AnalyticCostModel cost(costmodel::find_device(server.gpu));
  const policies::PackedModel packed = policies::pack_training_step(step_of("bert-large", 1, 128), cost, 2);
  CHECK_THROWS_WITH_AS(policies::build_server_schedule("dp", packed, server, {8, 1}),
                       "scheme 'dp': gpus = 8 must be in [1, 4] (server '4x-gtx1080ti')", Error);
  CHECK_THROWS_WITH_AS(policies::build_server_schedule("pp", packed, server, {4, 1}),
                       "scheme 'pp': gpus = 4 needs at least as many layer packs (the model has 2)", Error);
  CHECK_THROWS_WITH_AS(policies::build_server_schedule("dp", packed, server, {2, 0}),
                       "scheme 'dp': micro_batches = 0 must be >= 1", Error);
  CHECK_THROWS_WITH_AS(policies::build_server_schedule("zero", packed, server, {2, 1}),
                       doctest::Contains("unknown server scheme 'zero'"), UnknownNameError);
}

#pragma once
// The search on a multi-GPU server (`mutwo search --server`): placement, partition and policy
// together. Two kinds of candidates, every one simulated on the server (sim/server_simulator.hpp)
// with its GPUs' copies sharing the server's links:
// - One model (an array of one): the schemes of server_schemes.hpp (dp, dp-swap, harmony-dp, pp,
//   pp-swap, harmony-pp) on 1, 2, 4, ... and all of the server's GPUs, for each micro-batch count
//   and layer-pack count.
// - A model array (μ-TWO): the models spread over g = 1 .. N GPUs, each architecture's count split
//   as evenly as the GPUs allow (largest single-model compute first onto the least loaded GPU);
//   every GPU's share planned by the single-GPU search (search.hpp; memoised per distinct share),
//   its best one-run plan lifted onto that GPU (server_lift.hpp). Placements are visited by their
//   compute bound (the most loaded GPU's compute), and stop once the best feasible plan is faster
//   than the next bound.
// A candidate is feasible when no GPU's memory exceeds the limit. Rows: feasible by throughput,
// descending, then the rest. Deterministic.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "costmodel/server_spec.hpp"
#include "ir/schedule.hpp"
#include "ir/server_schedule.hpp"
#include "policies/model_array.hpp"
#include "policies/search.hpp"
#include "sim/host_mode.hpp"
#include "transforms/autodiff.hpp"

namespace mutwo::policies {

// The most micro-batches and layer packs a one-model search tries (each is a schedule to plan and
// simulate per GPU count): 100,000 micro-batches did not end.
inline constexpr int32_t kMaxMicroBatches = 1024;
inline constexpr int32_t kMaxLayerPacks = 4096;

struct ServerSearchConfig {
  // The model array, its optimizer and cost model, and how each GPU's share is searched (policies,
  // host mode, rows kept), as a single-GPU search takes them; memory_limit_bytes is per GPU (0: the
  // GPU's memory). The per-GPU searches use these fields and no others of it.
  SearchConfig array;
  costmodel::ServerSpec server;
  std::vector<std::string> schemes;                // one model; empty: every registered scheme
  std::vector<int32_t> micro_batches{1, 2, 4, 8};  // one model: M values tried
  std::vector<int32_t> packs{8, 16,
                             32};  // one model: layer pack counts tried (each clamped to the forward ops)
};

struct ServerSearchRow {
  std::string strategy;   // a scheme name, or "mutwo" (an array spread over GPUs)
  std::string placement;  // "4 GPUs, M = 4", "8 GPUs: bert-base 2+2+2+2+2+2+2+2"
  std::string plan;       // arrays: each distinct share's plan, "bert-base:2 -> bert-base:1+1 capuchin"
  int32_t gpus = 0;
  int32_t micro_batches = 0;
  bool feasible = false;
  int64_t step_time_ns = 0;
  int64_t samples_per_step = 0;
  double samples_per_s = 0;
  int64_t peak_bytes = 0;        // the highest GPU's
  int64_t swap_bytes = 0;        // to and from the host, all GPUs
  int64_t peer_bytes = 0;        // between GPUs
  int64_t compute_stall_ns = 0;  // the most stalled GPU's
  std::string busiest_link;      // the resource carrying most of its capacity over the step, and how much
  double busiest_link_share = 0;  // bytes / (capacity x step time)
  std::string note;
};

// What one GPU of an array placement runs, alone: its share of the models and the single-GPU plan
// the search made for it. The executor stays single-GPU (issue 21): a server plan is checked on
// real hardware one GPU's part at a time (`mutwo search --server ... --parts DIR`, then `mutwo run
// --schedule DIR/gpuN.json`), and the simulator prices the part alone exactly as the search did.
struct ServerGpuPart {
  int32_t gpu = 0;
  std::vector<ArchitectureCount> architectures;  // this GPU's share
  std::string strategy;   // the share's best plan: sequential, hfta, hfta+capuchin, mutwo
  std::string partition;
  std::string policy;
  int64_t step_time_ns = 0;  // predicted alone, on a private host link
  int64_t peak_bytes = 0;    // predicted
  // The plan's schedule; absent for separate runs one after another (sequential, hfta groups), which
  // are several schedules, not one.
  std::optional<ir::Schedule> schedule;
};

struct ServerSearchStats {
  int64_t candidates = 0;            // server schedules simulated
  int64_t gpu_searches = 0;          // single-GPU searches run (arrays)
  int64_t placements_pruned = 0;     // by the compute bound
};

struct ServerSearchReport {
  int64_t memory_limit_bytes = 0;
  std::vector<ServerSearchRow> rows;
  ir::ServerSchedule best;  // the first row's schedule (empty when none is feasible)
  // The first row's GPUs, each part alone, when it is a feasible model-array placement (empty for a
  // scheme of one model: its GPUs run layer packs, not single-GPU schedules).
  std::vector<ServerGpuPart> best_parts;
  ServerSearchStats stats;
  bool any_feasible() const { return !rows.empty() && rows.front().feasible; }
};

// Throws Error naming the field: no architectures, no cost model, a cost model for another GPU than
// the server's, micro-batch counts outside 1..kMaxMicroBatches or pack counts outside 1..kMaxLayerPacks,
// a scheme, micro-batch count or pack count given twice, top < 1; UnknownNameError on an unknown
// scheme, policy or model.
ServerSearchReport run_server_search(const ServerSearchConfig& config);

}  // namespace mutwo::policies

#pragma once
// A model array (or one model) placed over a multi-GPU server (`mutwo search --server`,
// `mutwo.search(..., server=...)`): the search is policies::run_server_search; this is its
// configuration from a single-GPU search's and the fields both print.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/server_catalog.hpp"
#include "policies/server_search.hpp"

namespace mutwo::api {

// The GPU a server search prices its kernels on: the server's. Throws Error when `gpu` (the one
// a caller named, empty: none) is another, UnknownNameError for an unknown server.
costmodel::ServerSpec find_server_for(const std::string& server, const std::string& gpu);

// The server catalog: name, description, gpu, gpu_count, nvlink, source per server.
nlohmann::json servers_json();

// server, gpu, memory_limit_bytes (per GPU), feasible, rows {strategy, placement, plan, gpus,
// micro_batches, feasible, step_time_ns, samples_per_step, samples_per_s, peak_bytes, swap_bytes,
// peer_bytes, compute_stall_ns, busiest_link, busiest_link_share, note}, stats {candidates,
// gpu_searches, placements_pruned}.
nlohmann::json server_search_json(const policies::ServerSearchReport& report,
                                  const policies::ServerSearchConfig& config);

}  // namespace mutwo::api

#include "api/server_search.hpp"

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::api {

costmodel::ServerSpec find_server_for(const std::string& server, const std::string& gpu) {
  costmodel::ServerSpec spec = costmodel::find_server(server);
  if (!gpu.empty() && gpu != spec.gpu) {
    throw Error(
        fmt::format("--gpu {} conflicts with --server {}, whose GPUs are {}", gpu, spec.name, spec.gpu));
  }
  return spec;
}

nlohmann::json servers_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const costmodel::ServerSpec& s : costmodel::builtin_servers().servers()) {
    out.push_back({{"name", s.name},
                   {"description", s.description},
                   {"gpu", s.gpu},
                   {"gpu_count", s.gpu_count},
                   {"nvlink", !s.nvlink_of_gpu.empty()},
                   {"source", s.source}});
  }
  return out;
}

nlohmann::json server_search_json(const policies::ServerSearchReport& report,
                                  const policies::ServerSearchConfig& config) {
  nlohmann::json j;
  j["server"] = config.server.name;
  j["gpu"] = config.server.gpu;
  j["memory_limit_bytes"] = report.memory_limit_bytes;
  j["feasible"] = report.any_feasible();
  nlohmann::json rows = nlohmann::json::array();
  for (const policies::ServerSearchRow& r : report.rows) {
    rows.push_back({{"strategy", r.strategy},
                    {"placement", r.placement},
                    {"plan", r.plan},
                    {"gpus", r.gpus},
                    {"micro_batches", r.micro_batches},
                    {"feasible", r.feasible},
                    {"step_time_ns", r.step_time_ns},
                    {"samples_per_step", r.samples_per_step},
                    {"samples_per_s", r.samples_per_s},
                    {"peak_bytes", r.peak_bytes},
                    {"swap_bytes", r.swap_bytes},
                    {"peer_bytes", r.peer_bytes},
                    {"compute_stall_ns", r.compute_stall_ns},
                    {"busiest_link", r.busiest_link},
                    {"busiest_link_share", r.busiest_link_share},
                    {"note", r.note}});
  }
  j["rows"] = rows;
  j["stats"] = {{"candidates", report.stats.candidates},
                {"gpu_searches", report.stats.gpu_searches},
                {"placements_pruned", report.stats.placements_pruned}};
  return j;
}

}  // namespace mutwo::api

#include "api/experiment.hpp"

namespace mutwo::api {

nlohmann::json experiment_json(const experiments::ExperimentSpec& spec,
                               const experiments::RunnerReport& report, const std::string& db,
                               const std::string& shard, const std::string& csv) {
  const experiments::RunnerProgress& p = report.progress;
  return nlohmann::json{{"experiment", spec.name},
                        {"kind", spec.kind},
                        {"db", db},
                        {"shard", shard},
                        {"tasks_total", report.tasks_total},
                        {"tasks", p.tasks},
                        {"tasks_skipped", p.tasks_skipped},
                        {"tasks_run", p.tasks_done},
                        {"rows_written", p.rows_written},
                        {"rows_present", report.rows_present},
                        {"interrupted", report.interrupted},
                        {"csv", csv.empty() ? nlohmann::json(nullptr) : nlohmann::json(csv)},
                        {"elapsed_s", p.elapsed_s}};
}

nlohmann::ordered_json table_json(const experiments::CsvTable& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const std::vector<std::string>& r : table.rows) {
    nlohmann::ordered_json row;
    for (size_t c = 0; c < table.header.size() && c < r.size(); ++c) row[table.header[c]] = r[c];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace mutwo::api

// simrd's baseline (RuntimeV1) and the paper's pareto sweep over budgets and heuristics.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sim/dtr_log_graph.hpp"
#include "sim/dtr_replay.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"
#include "support/parallel_for.hpp"

namespace mutwo::sim {

using io::DtrCommandKind;
using io::DtrLog;

DtrBaseline dtr_baseline(const DtrLog& log) {
  const DtrLogGraph graph(log);
  const size_t storages = graph.storage_size.size();
  std::vector<int32_t> refs(storages, 0);
  std::vector<uint8_t> live(storages, 0);
  DtrBaseline b;
  int64_t memory = 0;
  for (const io::DtrCommand& cmd : log.commands) {
    switch (cmd.kind) {
      case DtrCommandKind::compute: {
        const io::DtrOp& op = log.ops[static_cast<size_t>(cmd.id)];
        for (int32_t i = 0; i < op.output_count(); ++i) {
          const auto s = static_cast<size_t>(graph.storage_of[static_cast<size_t>(op.first_output + i)]);
          ++refs[s];
          live[s] = 1;
        }
        memory += op.total_size_bytes();
        b.peak_bytes = std::max(b.peak_bytes, memory);
        b.compute_ns += op.time_ns;
        if (op.origin == io::DtrOpOrigin::constant) b.constant_bytes += op.total_size_bytes();
        break;
      }
      case DtrCommandKind::get:
        ++refs[static_cast<size_t>(graph.storage_of[static_cast<size_t>(cmd.id)])];
        break;
      case DtrCommandKind::release: {
        const auto s = static_cast<size_t>(graph.storage_of[static_cast<size_t>(cmd.id)]);
        if (--refs[s] == 0 && live[s]) {  // V1 banishes it, pinned or not
          live[s] = 0;
          memory -= graph.storage_size[s];
        }
        break;
      }
      case DtrCommandKind::pin:
        if (!live[static_cast<size_t>(graph.storage_of[static_cast<size_t>(cmd.id)])]) {
          throw Error(fmt::format("DTR baseline: tensor '{}' is held at the end but its storage was freed",
                                  log.tensors[static_cast<size_t>(cmd.id)].name));
        }
        break;
    }
  }
  return b;
}

const std::vector<double>& dtr_paper_ratios() {
  static const std::vector<double> ratios = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  return ratios;
}

void check_dtr_sweep(const DtrLog& log, const DtrBaseline& baseline, std::string_view log_name) {
  const std::string where =
      log.start_line > 0 ? fmt::format("after START (line {})", log.start_line) : std::string("in the log");
  if (log.ops.empty())
    throw Error(fmt::format("log {}: no CALL, MUTATE or CONSTANT {}: nothing to replay", log_name, where));
  if (baseline.compute_ns <= 0) {
    throw Error(fmt::format(
        "log {}: no compute {}: {}, and each overhead is a ratio over the baseline compute", log_name, where,
        log.counts.calls + log.counts.mutates == 0
            ? fmt::format("no CALL or MUTATE ({} CONSTANT)", log.counts.constants)
            : fmt::format("every CALL's and MUTATE's TIME is 0 ({} CALL, {} MUTATE)", log.counts.calls,
                          log.counts.mutates)));
  }
  if (baseline.peak_bytes <= 0) {
    throw Error(
        fmt::format("log {}: baseline peak memory is 0 bytes (every MEMORY {} is 0), and every budget "
                    "would be 0 B",
                    log_name, where));
  }
}

std::vector<DtrSweepRow> sweep_dtr_log(const DtrLog& log, const DtrBaseline& baseline,
                                       const std::vector<double>& ratios,
                                       const std::vector<const EvictionHeuristic*>& heuristics, int jobs,
                                       double overhead_limit, std::string_view log_name) {
  if (!(overhead_limit >= 1 && overhead_limit <= kDtrMaxOverheadLimit)) {
    throw Error(
        fmt::format("overhead limit {} must be a number in [1, {}]", overhead_limit, kDtrMaxOverheadLimit));
  }
  for (double ratio : ratios) {
    if (!(ratio > 0) || !std::isfinite(ratio))
      throw Error(fmt::format("budget ratio {} must be a finite number > 0", ratio));
  }
  if (const auto twice = support::first_repeat(ratios)) {
    throw Error(fmt::format("budget ratio {:g} is given twice; give each ratio once", ratios[twice->second]));
  }
  std::vector<std::string_view> names;
  for (const EvictionHeuristic* h : heuristics) names.push_back(h->name());
  if (const auto twice = support::first_repeat(names)) {
    throw Error(fmt::format("heuristic '{}' is given twice; give each heuristic once", names[twice->second]));
  }
  check_dtr_sweep(log, baseline, log_name);
  for (double ratio : ratios) {  // int(peak * ratio) must be an int64 byte count
    if (!(static_cast<double>(baseline.peak_bytes) * ratio < 0x1p63)) {
      throw Error(fmt::format(
          "budget ratio {:g} x the baseline peak {} B of log {} = {:.4g} B, past the {} B a budget may be "
          "(a ratio up to {:.4g} fits)",
          ratio, baseline.peak_bytes, log_name, static_cast<double>(baseline.peak_bytes) * ratio, INT64_MAX,
          0x1p63 / static_cast<double>(baseline.peak_bytes) * (1 - 1e-15)));
    }
  }
  const DtrLogGraph graph(log);
  const double remat_limit = static_cast<double>(baseline.compute_ns) * (overhead_limit - 1);
  std::vector<DtrSweepRow> rows(heuristics.size() * ratios.size());
  auto run_one = [&](size_t i) {
    const EvictionHeuristic& heuristic = *heuristics[i / ratios.size()];
    DtrSweepRow& row = rows[i];
    row.heuristic = std::string(heuristic.name());
    row.ratio = ratios[i % ratios.size()];
    const auto budget =
        static_cast<int64_t>(static_cast<double>(baseline.peak_bytes) * row.ratio);  // int(x * r)
    row.result = replay_dtr_log(log, graph, budget, remat_limit, heuristic);
    row.overhead = static_cast<double>(row.result.clock_ns) / static_cast<double>(baseline.compute_ns);
  };
  // Runs longest first would balance better, but their lengths are unknown: handed out in order.
  support::parallel_for(rows.size(), jobs, run_one);
  return rows;
}

}  // namespace mutwo::sim

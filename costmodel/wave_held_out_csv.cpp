#include "costmodel/wave_held_out_csv.hpp"

#include <fmt/format.h>

#include "costmodel/csv_fields.hpp"
#include "costmodel/wave_kernel.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

std::string wave_held_out_csv(const WaveRows& w, const WaveHeldOut& h) {
  const size_t n = w.rows.size();
  if (h.scored.size() != n || h.measured.size() != n || h.predicted.size() != n) {
    throw Error(
        fmt::format("held-out CSV: the held-out prices cover {} rows, the rows are {}", h.scored.size(), n));
  }
  std::string out(kWaveHeldOutCsvHeader);
  out += '\n';
  for (size_t i = 0; i < n; ++i) {
    if (!h.scored[i]) continue;
    const CalibrationRow& r = w.rows[i];
    // The harness the held-out run took out: the row's time less the kernel time it scored.
    const double harness_ns = static_cast<double>(r.time_ns) - h.measured[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0f},{:.0f},{:.0f},{:.6f}\n",
                       csv_field(r.device), wave_dataset(w, i), csv_field(r.source), wave_category(r),
                       csv_field(r.kernel), csv_field(r.variant), csv_field(r.precision),
                       csv_field(wave_group_text(w.kernels[i].group)), r.batch, r.m, r.n, r.k, r.flops,
                       r.bytes, r.time_ns, harness_ns, h.measured[i], h.predicted[i],
                       (h.predicted[i] - h.measured[i]) / h.measured[i]);
  }
  return out;
}

}  // namespace mutwo::costmodel

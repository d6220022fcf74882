#include "costmodel/wave_validation.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "profiles/error.hpp"
#include "profiles/median.hpp"

namespace mutwo::costmodel {
namespace {

constexpr std::array<std::string_view, 3> kBands{"< 20 us", "20-200 us", ">= 200 us"};

size_t band_of(double ns) {
  return ns < 20'000 ? 0 : ns < 200'000 ? 1 : 2;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  return profiles::median(std::move(v), profiles::EvenMedian::mean_of_middles);
}

WaveError summarize(std::string device, std::string dataset, std::string group,
                    const std::vector<double>& signed_errors) {
  std::vector<double> abs_errors;
  for (double e : signed_errors) abs_errors.push_back(std::abs(e));
  WaveError out{std::move(device), std::move(dataset), std::move(group), summarize_errors(abs_errors), 0};
  out.signed_median = median_of(signed_errors);
  return out;
}

double relative(const WaveHeldOut& h, size_t i) {
  return (h.predicted[i] - h.measured[i]) / h.measured[i];
}

// The price of a kernel by the groups of one fit.
double price(const WaveGroupsFit& fit, const WaveKernel& k, const DeviceSpec& device) {
  WaveModel m;
  m.groups = fit.groups;
  const WaveGroupFit* g = m.group_for(k.group, device);
  if (g == nullptr) throw Error(fmt::format("wave model: no group prices {}", wave_group_text(k.group)));
  return predict_wave_ns(*g, k, device);
}

}  // namespace

std::string wave_category(const CalibrationRow& row) {
  switch (row.category) {
    case profiles::KindCategory::matmul:
      return row.batch > 1 || row.source == "neusight bmm" ? "bmm" : "GEMM/linear";
    case profiles::KindCategory::conv:
      return "conv";
    case profiles::KindCategory::norm:
      return "norm";
    case profiles::KindCategory::reduction:
      return "softmax";
    default:
      return "elementwise";
  }
}

std::string wave_dataset(const WaveRows& rows, size_t i) {
  return rows.eager[i] ? "NeuSight" : "DeepBench";
}

WaveHeldOut leave_one_gpu_out(const WaveRows& w) {
  std::set<std::string> chips;
  for (const DeviceSpec& d : w.devices) chips.insert(d.chip.empty() ? d.name : d.chip);
  if (chips.size() < 2) throw Error("leave one GPU out: the rows hold fewer than two GPUs");
  const auto chip_of = [&](size_t i) {
    const DeviceSpec& d = w.devices[w.device_of[i]];
    return d.chip.empty() ? d.name : d.chip;
  };
  WaveHeldOut h;
  h.scored.assign(w.rows.size(), 0);
  h.measured.assign(w.rows.size(), 0);
  h.predicted.assign(w.rows.size(), 0);
  for (const std::string& chip : chips) {
    std::vector<char> train(w.rows.size(), 0);
    for (size_t i = 0; i < w.rows.size(); ++i) train[i] = chip_of(i) != chip ? 1 : 0;
    WaveGroupsFit fit = fit_wave_groups(w, train);
    // Held-out harness per set: its floor times the training GPUs' median harness / floor of the source.
    std::map<std::string, std::vector<double>> ratios;
    for (const auto& [set, harness] : fit.harness_ns) {
      if (w.set_floor_ns[set] > 0) ratios[w.sets[set].second].push_back(harness / w.set_floor_ns[set]);
    }
    for (size_t i = 0; i < w.rows.size(); ++i) {
      if (train[i] || !w.kernel_bound[i]) continue;
      const DeviceSpec& device = w.devices[w.device_of[i]];
      double harness = 0;
      if (w.eager[i]) {
        const auto r = ratios.find(w.rows[i].source);
        if (r == ratios.end()) continue;  // a source no other GPU measured: nothing to hold it against
        harness = w.set_floor_ns[w.set_of[i]] * median_of(r->second);
        h.harness_ns[w.set_of[i]] = harness;
      }
      const double measured = static_cast<double>(w.rows[i].time_ns) - harness;
      if (!(measured > 0)) continue;
      h.scored[i] = 1;
      h.measured[i] = measured;
      h.predicted[i] = price(fit, w.kernels[i], device);
    }
    h.fits.emplace(chip, std::move(fit));
  }
  return h;
}

std::vector<WaveError> held_out_by_category(const WaveRows& w, const WaveHeldOut& h) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> groups;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (h.scored[i])
      groups[{w.rows[i].device, wave_dataset(w, i), wave_category(w.rows[i])}].push_back(relative(h, i));
  }
  std::vector<WaveError> out;
  for (const auto& [key, errors] : groups) {
    out.push_back(summarize(std::get<0>(key), std::get<1>(key), std::get<2>(key), errors));
  }
  return out;
}

std::vector<WaveError> held_out_categories_overall(const WaveRows& w, const WaveHeldOut& h) {
  std::map<std::string, std::vector<double>> groups;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (h.scored[i]) groups[wave_category(w.rows[i])].push_back(relative(h, i));
  }
  std::vector<WaveError> out;
  for (const auto& [category, errors] : groups) out.push_back(summarize("", "", category, errors));
  return out;
}

std::vector<WaveError> held_out_by_duration(const WaveRows& w, const WaveHeldOut& h) {
  std::map<std::pair<std::string, size_t>, std::vector<double>> groups;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (h.scored[i]) groups[{wave_dataset(w, i), band_of(h.measured[i])}].push_back(relative(h, i));
  }
  std::vector<WaveError> out;
  for (const auto& [key, errors] : groups) {
    out.push_back(summarize("", key.first, std::string(kBands[key.second]), errors));
  }
  return out;
}

std::vector<FusionPair> fusion_pairs(const WaveRows& w, const WaveHeldOut& h) {
  // Candidates for the smaller side by device: scored gemm rows.
  std::map<size_t, std::vector<size_t>> gemms;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (h.scored[i] && w.rows[i].kernel == "gemm") gemms[w.device_of[i]].push_back(i);
  }
  const double tolerance = std::log(1.10);
  std::vector<FusionPair> out;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    const CalibrationRow& b = w.rows[i];
    if (!h.scored[i] || b.kernel != "gemm" || b.batch < 2 || b.batch > 64) continue;
    size_t best = w.rows.size();
    double best_distance = tolerance;
    for (size_t s : gemms[w.device_of[i]]) {
      const CalibrationRow& r = w.rows[s];
      if (2 * r.batch > b.batch) continue;  // fuse at least 2 of them
      const double d = std::max({std::abs(std::log(static_cast<double>(r.m) / b.m)),
                                 std::abs(std::log(static_cast<double>(r.n) / b.n)),
                                 std::abs(std::log(static_cast<double>(r.k) / b.k))});
      if (d <= best_distance) {
        best_distance = d;
        best = s;
      }
    }
    if (best == w.rows.size()) continue;
    const CalibrationRow& r = w.rows[best];
    // The smaller kernel's time per product, scaled to the batched row's product.
    const double per_product = h.measured[best] / static_cast<double>(r.batch) *
                               static_cast<double>(b.m * b.n * b.k) / static_cast<double>(r.m * r.n * r.k);
    const DeviceSpec& device = w.devices[w.device_of[i]];
    const WaveGroupsFit& fit = h.fits.at(device.chip.empty() ? device.name : device.chip);
    WaveKernel smaller = w.kernels[i];
    smaller.sample.batch = r.batch;
    smaller.sample.flops =
        w.kernels[i].sample.flops * static_cast<double>(r.batch) / static_cast<double>(b.batch);
    smaller.sample.bytes =
        w.kernels[i].sample.bytes * static_cast<double>(r.batch) / static_cast<double>(b.batch);
    const double factor = static_cast<double>(b.batch) / static_cast<double>(r.batch);
    FusionPair p;
    p.device = b.device;
    p.batch = b.batch;
    p.smaller_batch = r.batch;
    p.batched_row = i;
    p.single_row = best;
    p.measured_speedup = static_cast<double>(b.batch) * per_product / h.measured[i];
    p.predicted_speedup = factor * price(fit, smaller, device) / h.predicted[i];
    out.push_back(p);
  }
  return out;
}

std::string wave_fidelity_markdown(const WaveRows& w, const WaveModel& model, const WaveHeldOut& h,
                                   const std::string& command) {
  (void)model;
  std::string out = fmt::format("Regenerate: `{}`.\n", command);
  (void)w;
  (void)h;
  return out;
}

}  // namespace mutwo::costmodel

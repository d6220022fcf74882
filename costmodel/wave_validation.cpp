#include "costmodel/wave_validation.hpp"
#include "costmodel/calibration_csv.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/neusight_csv.hpp"
#include "costmodel/wave_groups_markdown.hpp"
#include "support/error.hpp"
#include "support/median.hpp"
#include "support/percent.hpp"

namespace mutwo::costmodel {
namespace {

constexpr std::array<std::string_view, 3> kBands{"< 20 us", "20-200 us", ">= 200 us"};

size_t band_of(double ns) {
  return ns < 20'000 ? 0 : ns < 200'000 ? 1 : 2;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  return support::median(std::move(v), support::EvenMedian::mean_of_middles);
}

WaveError summarize(std::string device, std::string dataset, std::string group,
                    const std::vector<double>& signed_errors) {
  std::vector<double> abs_errors;
  for (double e : signed_errors) abs_errors.push_back(std::abs(e));
  WaveError out{std::move(device), std::move(dataset), std::move(group), summarize_errors(abs_errors), 0};
  out.signed_median = median_of(signed_errors);
  return out;
}

// The held-out harness rule (header): per (source, group), the median harness / floor over `fits`, the
// terms of `left_out` (a device name; "" for none) left out. A held-out set's harness is its floor times it.
std::map<std::pair<std::string, WaveGroupKey>, double> harness_rule_ratios(
    const std::vector<HarnessFit>& fits, std::string_view left_out) {
  std::map<std::pair<std::string, WaveGroupKey>, std::vector<double>> ratios;
  for (const HarnessFit& f : fits) {
    if (f.device != left_out && f.floor_ns > 0)
      ratios[{f.source, f.group}].push_back(f.harness_ns / f.floor_ns);
  }
  std::map<std::pair<std::string, WaveGroupKey>, double> out;
  for (auto& [source, values] : ratios) out[source] = median_of(std::move(values));
  return out;
}

double relative(const WaveHeldOut& h, size_t i) {
  return (h.predicted[i] - h.measured[i]) / h.measured[i];
}

// The price of a kernel by a model's groups, with the device's refinement (nullptr for a held-out
// fit: the GPU's own kernels are out).
double price(const WaveModel& fit, const WaveKernel& k, const DeviceSpec& device,
             RefinementMatch refinement = {}) {
  const WaveGroupFit* g = fit.group_for(k.group, refinement);
  if (g == nullptr) throw Error(fmt::format("wave model: no group prices {}", wave_group_text(k.group)));
  return predict_wave_ns(*g, k, device, fit.clock_ratio(device));
}

// What a GPU is held out as: its chip, or its name when the device file names none.
const std::string& held_out_unit(const DeviceSpec& d) {
  return d.chip.empty() ? d.name : d.chip;
}

// "a100-pcie-40gb 0.30, ...": each device's median harness / floor over its eager-op sources.
std::string harness_ratios(const WaveModel& model) {
  std::map<std::string, std::vector<double>> ratios;
  for (const HarnessFit& f : model.harness) {
    if (f.floor_ns > 0) ratios[f.device].push_back(f.harness_ns / f.floor_ns);
  }
  std::vector<std::string> parts;
  for (auto& [device, r] : ratios) parts.push_back(fmt::format("{} {:.2f}", device, median_of(std::move(r))));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string wave_category(const CalibrationRow& row) {
  switch (row.category) {
    case ir::KindCategory::matmul:
      return row.batch > 1 || is_neusight_bmm(row) ? "bmm" : "GEMM/linear";
    case ir::KindCategory::conv:
      return "conv";
    case ir::KindCategory::norm:
      return "norm";
    case ir::KindCategory::reduction:
      return "softmax";
    default:
      return "elementwise";
  }
}

std::string wave_dataset(const WaveRows& rows, size_t i) {
  switch (rows.rows[i].timing) {
    case Timing::eager_op:
      return "NeuSight";
    case Timing::host_paced:
      return "bench-ops";
    case Timing::kernel:
      break;
  }
  return "DeepBench";
}

WaveHeldOut leave_one_gpu_out(const WaveRows& w, int jobs) {
  std::set<std::string> chips;
  for (const DeviceSpec& d : w.devices) chips.insert(held_out_unit(d));
  if (chips.size() < 2) throw Error("leave one GPU out: the rows hold fewer than two GPUs");
  const auto chip_of = [&](size_t i) -> const std::string& {
    return held_out_unit(w.devices[w.device_of[i]]);
  };
  WaveHeldOut h;
  h.scored.assign(w.rows.size(), 0);
  h.measured.assign(w.rows.size(), 0);
  h.predicted.assign(w.rows.size(), 0);
  for (const std::string& chip : chips) {
    std::vector<char> train(w.rows.size(), 0);
    for (size_t i = 0; i < w.rows.size(); ++i) train[i] = chip_of(i) != chip ? 1 : 0;
    const WaveGroupsFit fit = fit_wave_groups(w, train, std::nullopt, jobs);
    WaveModel model;
    model.groups = fit.groups;
    model.energy_pj_per_flop = fit.energy_pj_per_flop;
    // Held-out harness per set and group: its floor times the training GPUs' median harness / floor of
    // the source in that group.
    std::vector<HarnessFit> trained;
    for (const auto& [key, harness] : fit.harness_ns) {
      const size_t set = key.first;
      trained.push_back({w.sets[set].first, w.sets[set].second, w.set_floor_ns[set], harness, key.second});
    }
    const auto ratio = harness_rule_ratios(trained, "");
    for (size_t i = 0; i < w.rows.size(); ++i) {
      if (train[i] || !w.kernel_bound[i]) continue;
      const DeviceSpec& device = w.devices[w.device_of[i]];
      if (w.eager[i]) {
        const auto r = ratio.find({w.rows[i].source, w.kernels[i].group});
        if (r == ratio.end()) continue;  // a source no other GPU measured: nothing to hold it against
        h.harness_ns[{w.set_of[i], w.kernels[i].group}] = w.set_floor_ns[w.set_of[i]] * r->second;
      }
      const double measured = measured_kernel_ns(w, i, h.harness_ns);
      if (!(measured > 0)) continue;
      h.scored[i] = 1;
      h.measured[i] = measured;
      h.predicted[i] = price(model, w.kernels[i], device);
    }
    h.fits.emplace(chip, std::move(model));
  }
  return h;
}

WaveHeldOut score_wave_model(const WaveRows& w, const WaveModel& model) {
  WaveHeldOut h;
  h.scored.assign(w.rows.size(), 0);
  h.measured.assign(w.rows.size(), 0);
  h.predicted.assign(w.rows.size(), 0);
  // Per device, looked up once: its refinement, and the harness rule over the model's other GPUs.
  std::vector<RefinementMatch> refinement;
  std::vector<std::map<std::pair<std::string, WaveGroupKey>, double>> ratios;
  for (const DeviceSpec& d : w.devices) {
    refinement.push_back(model.refinement_for(d));
    ratios.push_back(harness_rule_ratios(model.harness, d.name));
  }
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (!w.kernel_bound[i]) continue;
    const size_t d = w.device_of[i];
    const HarnessKey key{w.set_of[i], w.kernels[i].group};
    if (w.eager[i] && !h.harness_ns.contains(key)) {
      const auto r = ratios[d].find({w.rows[i].source, w.kernels[i].group});
      if (r == ratios[d].end()) continue;
      h.harness_ns[key] = w.set_floor_ns[w.set_of[i]] * r->second;
    }
    const double measured = measured_kernel_ns(w, i, h.harness_ns);
    if (!(measured > 0)) continue;
    h.scored[i] = 1;
    h.measured[i] = measured;
    h.predicted[i] = price(model, w.kernels[i], w.devices[d], refinement[d]);
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

std::vector<WaveError> held_out_by_category_own_harness(const WaveRows& w, const WaveHeldOut& h,
                                                        const WaveModel& fitted, bool per_device) {
  // (device, source, group) -> harness; an entry without a group (a version 1-2 file) serves every group.
  std::map<std::tuple<std::string, std::string, WaveGroupKey>, double> own;
  for (const HarnessFit& f : fitted.harness) own[{f.device, f.source, f.group}] = f.harness_ns;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> groups;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (!h.scored[i]) continue;
    double measured = h.measured[i];
    if (w.eager[i]) {
      const auto& [device, source] = w.sets[w.set_of[i]];
      auto it = own.find({device, source, w.kernels[i].group});
      if (it == own.end()) it = own.find({device, source, WaveGroupKey{}});
      if (it == own.end()) continue;
      measured = static_cast<double>(w.rows[i].time_ns) - it->second;
    }
    if (!(measured > 0)) continue;
    const std::tuple<std::string, std::string, std::string> key =
        per_device ? std::tuple{w.rows[i].device, wave_dataset(w, i), wave_category(w.rows[i])}
                   : std::tuple{std::string(), std::string(), wave_category(w.rows[i])};
    groups[key].push_back((h.predicted[i] - measured) / measured);
  }
  std::vector<WaveError> out;
  for (const auto& [key, errors] : groups) {
    out.push_back(summarize(std::get<0>(key), std::get<1>(key), std::get<2>(key), errors));
  }
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

std::vector<FusionPair> fusion_pairs(const WaveRows& w, const WaveHeldOut& h, const WaveModel& fitted) {
  // Candidates for the smaller side by device: scored gemm rows.
  std::map<size_t, std::vector<size_t>> gemms;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (h.scored[i] && is_gemm_kernel(w.rows[i].kernel)) gemms[w.device_of[i]].push_back(i);
  }
  const double tolerance = std::log(1.10);
  std::vector<FusionPair> out;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    const CalibrationRow& b = w.rows[i];
    if (!h.scored[i] || !is_gemm_kernel(b.kernel) || b.batch < 2 || b.batch > 64) continue;
    size_t best = w.rows.size();
    double best_distance = tolerance;
    for (size_t s : gemms[w.device_of[i]]) {
      const CalibrationRow& r = w.rows[s];
      if (2 * r.batch > b.batch) continue;  // fuse at least 2 of them
      const double d = std::max({std::abs(std::log(static_cast<double>(r.m) / b.m)),
                                 std::abs(std::log(static_cast<double>(r.n) / b.n)),
                                 std::abs(std::log(static_cast<double>(r.k) / b.k))});
      // The closest shape; among equally close ones the fewest products, so that an exact sweep of
      // one product (scripts/kernel-sample.py --fusion-output) compares B products in one kernel
      // with the single products themselves where those are kernel-bound.
      const bool fewer = best == w.rows.size() || r.batch < w.rows[best].batch;
      if (d < best_distance || (d == best_distance && fewer)) {
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
    const RefinementMatch own = fitted.refinement_for(device);
    // Held out: the fold's groups; scored (score_wave_model, no folds): the scored model's, as h.predicted.
    const auto fold = h.fits.find(held_out_unit(device));
    p.predicted_speedup =
        factor *
        (fold != h.fits.end() ? price(fold->second, smaller, device) : price(fitted, smaller, device, own)) /
        h.predicted[i];
    p.fitted_speedup =
        factor * price(fitted, smaller, device, own) / price(fitted, w.kernels[i], device, own);
    out.push_back(p);
  }
  return out;
}

std::vector<FusionSummary> summarize_fusion(const std::vector<FusionPair>& pairs) {
  std::map<std::pair<std::string, int64_t>, std::vector<const FusionPair*>> by;
  for (const FusionPair& p : pairs) {
    const int64_t bucket = p.batch < 4 ? 2 : p.batch < 8 ? 4 : p.batch < 16 ? 8 : p.batch < 32 ? 16 : 32;
    by[{p.device, bucket}].push_back(&p);
  }
  std::vector<FusionSummary> out;
  for (const auto& [key, ps] : by) {
    std::vector<double> measured, predicted, errors, fitted, fitted_errors;
    for (const FusionPair* p : ps) {
      measured.push_back(p->measured_speedup);
      predicted.push_back(p->predicted_speedup);
      errors.push_back(std::abs(p->predicted_speedup - p->measured_speedup) / p->measured_speedup);
      fitted.push_back(p->fitted_speedup);
      fitted_errors.push_back(std::abs(p->fitted_speedup - p->measured_speedup) / p->measured_speedup);
    }
    out.push_back({key.first, key.second, ps.size(), median_of(measured), median_of(predicted),
                   median_of(errors), median_of(fitted), median_of(fitted_errors)});
  }
  return out;
}

std::optional<double> fusion_median_error(const std::vector<FusionPair>& pairs, bool fitted) {
  if (pairs.empty()) return std::nullopt;
  std::vector<double> errors;
  for (const FusionPair& p : pairs) {
    const double predicted = fitted ? p.fitted_speedup : p.predicted_speedup;
    errors.push_back(std::abs(predicted - p.measured_speedup) / p.measured_speedup);
  }
  return median_of(errors);
}

std::string wave_fidelity_markdown(const WaveRows& w, const WaveModel& model, const WaveHeldOut& h,
                                   const std::string& command) {
  size_t scored = 0;
  for (char s : h.scored) scored += s ? 1 : 0;
  std::set<std::string> chips;
  for (const DeviceSpec& d : w.devices) chips.insert(held_out_unit(d));
  std::string out;
  out += "## Kernel level: the wave model across GPUs\n\n";
  out += fmt::format(
      "The default cost source `waves` (costmodel/wave_model.hpp) prices a kernel from its GPU's datasheet "
      "with "
      "coefficients shared by every GPU, fitted on {} measured kernels of {} GPUs ({} chips): DeepBench's "
      "kernel "
      "times and NeuSight's PyTorch operator times (tests/fixtures/calibration/). Regenerate: `{}`.\n\n",
      w.rows.size(), w.devices.size(), chips.size(), command);
  out +=
      "**Leave one GPU out.** Each chip is held out in turn (the V100 SXM2 of DeepBench and the V100 PCIe of "
      "NeuSight together, as are the A100 PCIe 40GB and 80GB), the model is fitted on the other chips' "
      "kernels "
      "and prices the held-out GPU from its datasheet alone. NeuSight's times include the host's dispatch of "
      "the "
      "op (it timed each op from Python between two CUDA events): the harness per GPU and op, not a property "
      "of "
      "the GPU, is that GPU's floor (its smallest ops' median time) times the training GPUs' median harness "
      "/ "
      "floor for the op; only kernel-bound rows are scored (time >= 2 x the floor; below it the time is the "
      "host's). Error = |predicted - measured| / measured on the kernel's time (the harness taken out); "
      "signed: "
      "below 0 where the model is too fast.\n\n";
  out += fmt::format("{} of {} rows scored.\n\n", scored, w.rows.size());
  // Beside each, the signed median with the GPU's own harness (held_out_by_category_own_harness).
  std::map<std::tuple<std::string, std::string, std::string>, double> own_signed;
  for (const WaveError& e : held_out_by_category_own_harness(w, h, model, true)) {
    own_signed[{e.device, e.dataset, e.group}] = e.signed_median;
  }
  out +=
      "| held-out GPU | data | category | kernels | median | mean | signed median | signed median, the GPU's "
      "own harness |\n";
  out += "|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const WaveError& e : held_out_by_category(w, h)) {
    const auto it = own_signed.find({e.device, e.dataset, e.group});
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", e.device, e.dataset, e.group,
                       e.error.count, support::percent(e.error.median), support::percent(e.error.mean),
                       support::signed_percent(e.signed_median),
                       it == own_signed.end() ? "-" : support::signed_percent(it->second));
  }
  out += "\nOver every held-out GPU, per category (target: median <= 8 %, mean <= 12 %):\n\n";
  out += "| category | kernels | median | mean | signed median | target |\n|---|---:|---:|---:|---:|---|\n";
  for (const WaveError& e : held_out_categories_overall(w, h)) {
    const bool met = e.error.median <= 0.08 && e.error.mean <= 0.12;
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", e.group, e.error.count,
                       support::percent(e.error.median), support::percent(e.error.mean),
                       support::signed_percent(e.signed_median), met ? "met" : "not met");
  }
  // How much of that is the harness rule's (held_out_by_category_own_harness).
  std::map<std::string, WaveError> own;
  for (WaveError& e : held_out_by_category_own_harness(w, h, model, false))
    own.emplace(e.group, std::move(e));
  out +=
      "\nHow much of this is the harness rule's: a held-out GPU's harness is its measuring host's share of "
      "NeuSight's times, not the GPU's, and the rule above takes it from the other GPUs' hosts, which differ "
      "(the harness terms of the fit on every GPU, as a share of each op's floor, median over the GPU's "
      "ops: " +
      harness_ratios(model) +
      "). The same held-out prices scored against each GPU's times less the harness the fit on every GPU "
      "finds for them (a diagnostic, not a held-out figure: that harness is fitted with the GPU's own "
      "kernels):\n\n";
  out +=
      "| category | median, harness rule | median, the GPU's own harness | mean, harness rule | mean, the "
      "GPU's own harness |\n|---|---:|---:|---:|---:|\n";
  for (const WaveError& e : held_out_categories_overall(w, h)) {
    const auto it = own.find(e.group);
    if (it == own.end()) continue;
    out += fmt::format("| {} | {} | {} | {} | {} |\n", e.group, support::percent(e.error.median),
                       support::percent(it->second.error.median), support::percent(e.error.mean),
                       support::percent(it->second.error.mean));
  }
  out += "\nBy the kernel's measured time, over every held-out GPU:\n\n";
  out +=
      "| data | measured kernel time | kernels | median | mean | signed median "
      "|\n|---|---|---:|---:|---:|---:|\n";
  for (const WaveError& e : held_out_by_duration(w, h)) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", e.dataset, e.group, e.error.count,
                       support::percent(e.error.median), support::percent(e.error.mean),
                       support::signed_percent(e.signed_median));
  }
  // Fusion.
  const std::vector<FusionPair> pairs = fusion_pairs(w, h, model);
  out += "\n### Fusion measured: one batched GEMM against its products in smaller kernels\n\n";
  out +=
      "What horizontal fusion does to a linear layer: B models' products become one batched GEMM "
      "(torch.bmm). "
      "NeuSight timed batched products (B = 1 ... 1024) of random shapes, never the same product at two "
      "batch "
      "sizes, so each batched row (B = 2 ... 64, kernel-bound) is paired with the closest measured row of "
      "the "
      "same GPU holding at most B/2 products whose m, n and k are each within 10 %; its time per product, "
      "scaled to the batched row's product by their FLOPs, is what one of the B products costs in the "
      "smaller "
      "kernel. Measured speed-up = B x t(B', per product) / t(B): above 1, fusing paid. Predicted: the same "
      "ratio of the wave model's prices, by the fit that held that GPU out; beside it, by the model fitted "
      "on every GPU, whose refinement for the GPU was fitted on these very kernels (not independent: it "
      "says whether the model's form can hold the measured speed-up). Pairs, by B:\n\n";
  out +=
      "| GPU | B | pairs | measured speed-up (median) | predicted, GPU held out (median) | median error | "
      "fitted on every GPU (median) | median error |\n";
  out += "|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const FusionSummary& f : summarize_fusion(pairs)) {
    const std::string range = f.bucket == 32 ? "32-64" : fmt::format("{}-{}", f.bucket, 2 * f.bucket - 1);
    out += fmt::format("| {} | {} | {} | {:.2f}x | {:.2f}x | {} | {:.2f}x | {} |\n", f.device, range, f.pairs,
                       f.measured, f.predicted, support::percent(f.error), f.fitted,
                       support::percent(f.fitted_error));
  }
  if (pairs.empty()) {
    out +=
        "\nNo matched pairs: no batched GEMM of these rows has a smaller one on its GPU within 10 % in m, n "
        "and k, so there is no median error.\n";
  } else {
    out += fmt::format(
        "\nOver all {} pairs: median error of the predicted speed-up {} with the GPU held out (target: <= 10 "
        "%), {} by the model fitted on every GPU.\n",
        pairs.size(), support::percent(*fusion_median_error(pairs)),
        support::percent(*fusion_median_error(pairs, true)));
  }
  // A fused linear against one model's (B' = 1: the single-product group) or two batched kernels.
  std::vector<FusionPair> single;
  std::vector<FusionPair> batched;
  for (const FusionPair& p : pairs) (p.smaller_batch == 1 ? single : batched).push_back(p);
  if (!single.empty() && !batched.empty()) {
    out += fmt::format(
        "Of them, {} pair the batched row with a single product (B' = 1, priced by the single-product "
        "group): held out {}, fitted {}; {} pair two batched kernels: held out {}, fitted {}.\n",
        single.size(), support::percent(*fusion_median_error(single)),
        support::percent(*fusion_median_error(single, true)), batched.size(),
        support::percent(*fusion_median_error(batched)),
        support::percent(*fusion_median_error(batched, true)));
  }
  out += wave_groups_markdown(w, model, h);
  return out;
}

}  // namespace mutwo::costmodel

#include "costmodel/calibration_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "costmodel/relative_nnls.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

namespace mutwo::costmodel {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

template <size_t N>
double dot(const std::array<double, N>& c, const std::array<double, N>& x) {
  double t = 0;
  for (size_t j = 0; j < N; ++j) t += c[j] * x[j];
  return t;
}

template <size_t N, typename Terms>
std::array<double, N> fit_regime(const std::vector<KernelSample>& samples, const std::vector<char>& in_regime,
                                 Terms terms) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (in_regime[i]) rows.push_back(i);
  }
  Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(N));
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto x = terms(samples[rows[r]]);
    for (size_t j = 0; j < N; ++j) {
      a(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = x[j] / samples[rows[r]].time_ns;
    }
  }
  const Eigen::VectorXd c = nonnegative_least_squares(a);
  std::array<double, N> out{};
  for (size_t j = 0; j < N; ++j) out[j] = c(static_cast<Eigen::Index>(j));
  return out;
}

double squared_relative_error(const KernelModel& model, const std::vector<KernelSample>& samples,
                              int32_t sms) {
  double sum = 0;
  for (const KernelSample& s : samples) {
    const double r = (predict_kernel_ns(model, s, sms) - s.time_ns) / s.time_ns;
    sum += r * r;
  }
  return sum;
}

}  // namespace

int64_t kernel_waves(int64_t m, int64_t n, TileShape tile, int32_t sms, int64_t batch) {
  const int64_t tiles = batch * ceil_div(m, tile.m) * ceil_div(n, tile.n);
  return ceil_div(tiles, sms);
}

std::array<double, kComputeTerms> compute_terms(const KernelSample& kernel, TileShape tile, int32_t sms) {
  if (kernel.batch < 1 || kernel.m < 1 || kernel.n < 1 || kernel.k < 1) {
    throw Error(fmt::format("kernel shape batch={} m={} n={} k={}: each must be >= 1", kernel.batch, kernel.m,
                            kernel.n, kernel.k));
  }
  if (sms < 1) throw Error(fmt::format("kernel model: sm count {} must be >= 1", sms));
  const int64_t waves = kernel_waves(kernel.m, kernel.n, tile, sms, kernel.batch);
  const double slots = static_cast<double>(waves) * sms * tile.m * tile.n;
  const double quantized =
      kernel.flops * slots /
      (static_cast<double>(kernel.batch) * static_cast<double>(kernel.m) * static_cast<double>(kernel.n));
  return {1.0, static_cast<double>(waves), kernel.flops, quantized};
}

std::array<double, kMemoryTerms> memory_terms(const KernelSample& kernel) {
  return {1.0, kernel.bytes};
}

double predict_kernel_ns(const KernelModel& model, const KernelSample& kernel, int32_t sms) {
  return std::max(dot(model.compute, compute_terms(kernel, model.tile, sms)),
                  dot(model.memory, memory_terms(kernel)));
}

ErrorSummary summarize_errors(std::vector<double> errors) {
  ErrorSummary s;
  s.count = static_cast<int64_t>(errors.size());
  if (errors.empty()) return s;
  double sum = 0;
  for (double e : errors) {
    sum += e;
    s.max = std::max(s.max, e);
  }
  s.mean = sum / static_cast<double>(errors.size());
  s.median = support::median(std::move(errors), support::EvenMedian::mean_of_middles);
  return s;
}

ErrorSummary relative_errors(const KernelModel& model, const std::vector<KernelSample>& samples,
                             int32_t sms) {
  std::vector<double> errors;
  errors.reserve(samples.size());
  for (const KernelSample& s : samples) {
    errors.push_back(std::abs(predict_kernel_ns(model, s, sms) - s.time_ns) / s.time_ns);
  }
  return summarize_errors(std::move(errors));
}

KernelModel fit_kernel_model(const std::vector<KernelSample>& samples, TileShape tile, int32_t sms,
                             Roofline roofline, const std::string& where) {
  if (samples.empty()) throw Error(fmt::format("{}: no samples to fit", where));
  if (sms < 1) throw Error(fmt::format("{}: sm count {} must be >= 1", where, sms));
  for (size_t i = 0; i < samples.size(); ++i) {
    const KernelSample& s = samples[i];
    if (!(s.time_ns > 0) || !std::isfinite(s.time_ns)) {
      throw Error(fmt::format("{}: sample {} has time_ns = {}, must be > 0", where, i, s.time_ns));
    }
    if (s.m < 1 || s.n < 1 || s.k < 1) {
      throw Error(
          fmt::format("{}: sample {} has shape m={} n={} k={}, each must be >= 1", where, i, s.m, s.n, s.k));
    }
  }
  std::vector<char> compute_bound(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    compute_bound[i] =
        samples[i].flops / roofline.peak_flops_per_ns >= samples[i].bytes / roofline.bytes_per_ns ? 1 : 0;
  }
  const auto compute = [&](const KernelSample& s) { return compute_terms(s, tile, sms); };
  KernelModel best;
  best.tile = tile;
  double best_value = std::numeric_limits<double>::infinity();
  for (int round = 0; round < kMaxFitRounds; ++round) {
    KernelModel model;
    model.tile = tile;
    model.compute = fit_regime<kComputeTerms>(samples, compute_bound, compute);
    std::vector<char> memory_bound(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) memory_bound[i] = compute_bound[i] ? 0 : 1;
    model.memory = fit_regime<kMemoryTerms>(samples, memory_bound, memory_terms);
    const double value = squared_relative_error(model, samples, sms);
    if (value < best_value) {
      best_value = value;
      best = model;
    }
    bool changed = false;
    for (size_t i = 0; i < samples.size(); ++i) {
      const char now =
          dot(model.compute, compute(samples[i])) >= dot(model.memory, memory_terms(samples[i])) ? 1 : 0;
      if (now != compute_bound[i]) {
        compute_bound[i] = now;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return best;
}

KernelModel fit_kernel_model(const std::vector<KernelSample>& samples, int32_t sms, Roofline roofline,
                             const std::string& where) {
  KernelModel best;
  double best_value = std::numeric_limits<double>::infinity();
  for (const TileShape& tile : kTileCandidates) {
    const KernelModel model = fit_kernel_model(samples, tile, sms, roofline, where);
    const double value = squared_relative_error(model, samples, sms);
    if (value < best_value) {
      best_value = value;
      best = model;
    }
  }
  return best;
}

}  // namespace mutwo::costmodel

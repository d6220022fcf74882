#include "costmodel/wave_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "costmodel/calibration_profile.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/relative_nnls.hpp"
#include "support/error.hpp"
#include "support/median.hpp"
#include "support/parallel_for.hpp"

namespace mutwo::costmodel {
namespace {

// The columns of one group's fit: harness terms (one per eager-op set present), then the two regimes'
// terms. Fixed costs only when the group has kernel-timed rows.
struct Columns {
  std::map<size_t, Eigen::Index> harness;  // set -> column
  Eigen::Index compute_first = 0;          // compute terms j = 0..3 (j = 0 only when fixed cost fitted)
  Eigen::Index memory_first = 0;
  Eigen::Index count = 0;
  bool fixed_cost = true;
};

// The design row of member r in its regime: (column, value) pairs; harness_column < 0 for a row
// without a harness (not eager-op).
void design_row(const Columns& c, Eigen::Index harness_column, const WaveFeatures& f, bool compute,
                std::vector<std::pair<Eigen::Index, double>>& out) {
  out.clear();
  if (harness_column >= 0) out.emplace_back(harness_column, -1.0);  // harness = floor - u, u >= 0
  if (compute) {
    for (size_t j = c.fixed_cost ? 0 : 1; j < kWaveComputeTerms; ++j) {
      if (f.compute[j] != 0) out.emplace_back(c.compute_first + static_cast<Eigen::Index>(j), f.compute[j]);
    }
  } else {
    for (size_t j = c.fixed_cost ? 0 : 1; j < kWaveMemoryTerms; ++j) {
      if (f.memory[j] != 0) out.emplace_back(c.memory_first + static_cast<Eigen::Index>(j), f.memory[j]);
    }
  }
}

struct GroupResult {
  WaveGroupFit fit;
  std::map<size_t, double> harness_ns;
  double objective = std::numeric_limits<double>::infinity();
};

GroupResult fit_one_tile(const WaveRows& w, const WaveGroupKey& key, const std::vector<size_t>& members,
                         TileShape tile, const std::vector<double>& clock_ratio) {
  Columns c;
  bool any_kernel = false;
  for (size_t i : members) {
    if (w.eager[i]) c.harness.emplace(w.set_of[i], 0);
    // Only kernel-timed rows tell the fixed cost: host-paced ones hide the smallest kernels under
    // the host's floor.
    if (w.rows[i].timing == Timing::kernel) any_kernel = true;
  }
  c.fixed_cost = any_kernel;
  Eigen::Index next = 0;
  for (auto& [set, col] : c.harness) col = next++;
  c.compute_first = next;
  next += static_cast<Eigen::Index>(kWaveComputeTerms);
  c.memory_first = next;
  next += static_cast<Eigen::Index>(kWaveMemoryTerms);
  c.count = next;

  std::map<size_t, double> set_rows;
  for (size_t i : members) set_rows[w.set_of[i]] += 1;
  // What every round reads of a member, laid out once: its time, what of it is known (the floor of an
  // eager-op row's set, a fixed cost the group does not fit) and its harness column.
  std::vector<double> time_ns;
  std::vector<double> known_ns;
  std::vector<Eigen::Index> harness_column;
  for (size_t i : members) {
    time_ns.push_back(static_cast<double>(w.rows[i].time_ns));
    known_ns.push_back((w.eager[i] ? w.set_floor_ns[w.set_of[i]] : 0.0) +
                       (c.fixed_cost ? 0.0 : kUnfittedFixedCostNs));
    harness_column.push_back(w.eager[i] ? c.harness.at(w.set_of[i]) : -1);
  }
  std::vector<WaveFeatures> features;
  std::vector<double> weight;
  std::vector<char> compute_bound;
  features.reserve(members.size());
  // A group that runs Winograd (runs_winograd) sees its kernels in that form throughout; the others as
  // they are, uncopied.
  const bool winograd = runs_winograd(key);
  std::vector<WaveKernel> transformed;
  if (winograd) {
    transformed.reserve(members.size());
    for (size_t i : members) transformed.push_back(as_priced(w.kernels[i], true));
  }
  const auto priced = [&](size_t r) -> const WaveKernel& {
    return winograd ? transformed[r] : w.kernels[members[r]];
  };
  // A group that chooses a tile per kernel (chooses_tile): each round prices every row at the quickest
  // of its tiles under the coefficients just fitted, as the regimes are picked, and is scored as priced
  // (every candidate of the grid alike, a largest tile with no smaller one too); the first round runs
  // the largest.
  std::vector<std::vector<WaveFeatures>> options(chooses_tile(key) ? members.size() : 0);
  if (!options.empty()) {
    const std::vector<TileShape> tiles = tile_choices(tile);
    for (size_t r = 0; r < options.size(); ++r) {
      const size_t i = members[r];
      for (const TileShape& t : tiles)
        options[r].push_back(
            wave_features(priced(r), t, w.devices[w.device_of[i]], clock_ratio[w.device_of[i]]));
    }
  }
  for (size_t r = 0; r < members.size(); ++r) {
    const size_t i = members[r];
    const WaveKernel& k = priced(r);
    // The largest tile: a choosing group's first option, already computed.
    features.push_back(options.empty()
                           ? wave_features(k, tile, w.devices[w.device_of[i]], clock_ratio[w.device_of[i]])
                           : options[r].front());
    weight.push_back(1.0 / set_rows[w.set_of[i]]);
    const DeviceSpec& d = w.devices[w.device_of[i]];
    compute_bound.push_back(k.sample.flops / k.peak_flops_per_ns >= k.sample.bytes / d.hbm_bytes_per_ns ? 1
                                                                                                        : 0);
  }
  GroupResult best;
  std::vector<std::pair<Eigen::Index, double>> row;
  for (int round = 0; round < kMaxFitRounds; ++round) {
    Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(c.count, c.count);
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(c.count);
    for (size_t r = 0; r < members.size(); ++r) {
      const double t = time_ns[r];
      // An eager-op row is floor - u + price (the harness bounded by its set's floor); without a
      // fitted fixed cost the price carries kUnfittedFixedCostNs. Fit t less what is known.
      design_row(c, harness_column[r], features[r], compute_bound[r], row);
      const double target = (t - known_ns[r]) / t;
      for (auto& entry : row) entry.second /= t;  // relative to the measured time
      for (const auto& [a, va] : row) {
        rhs(a) += weight[r] * va * target;
        for (const auto& [b, vb] : row) gram(a, b) += weight[r] * va * vb;
      }
    }
    const Eigen::VectorXd x = nonnegative_least_squares_normal(gram, rhs);
    GroupResult result;
    result.fit.key = key;
    result.fit.tile = tile;
    result.fit.tile_choice = chooses_tile(key);
    result.fit.winograd = winograd;
    result.fit.fixed_cost_fitted = c.fixed_cost;
    for (size_t j = 0; j < kWaveComputeTerms; ++j) {
      result.fit.compute[j] = x(c.compute_first + static_cast<Eigen::Index>(j));
    }
    for (size_t j = 0; j < kWaveMemoryTerms; ++j)
      result.fit.memory[j] = x(c.memory_first + static_cast<Eigen::Index>(j));
    if (!c.fixed_cost) {
      result.fit.compute[0] = 0;
      result.fit.memory[0] = 0;
    }
    for (const auto& [set, col] : c.harness) result.harness_ns[set] = w.set_floor_ns[set] - x(col);
    double objective = 0;
    bool changed = false;
    for (size_t r = 0; r < members.size(); ++r) {
      const double t = time_ns[r];
      const double h =
          harness_column[r] >= 0 ? w.set_floor_ns[w.set_of[members[r]]] - x(harness_column[r]) : 0;
      double in_regime = wave_regime_ns(result.fit, features[r], compute_bound[r]);
      if (!options.empty()) {
        size_t best_tile = 0;
        double best_ns = std::numeric_limits<double>::infinity();
        for (size_t ti = 0; ti < options[r].size(); ++ti) {
          const double ns = wave_regime_ns(result.fit, options[r][ti], true);
          if (ns < best_ns) {
            best_ns = ns;
            best_tile = ti;
          }
        }
        if (options[r][best_tile].compute != features[r].compute) {
          features[r] = options[r][best_tile];
          changed = true;
        }
        // Scored as priced: the quickest tile, the larger regime.
        in_regime = std::max(best_ns, wave_regime_ns(result.fit, features[r], false));
      }
      const double e = (h + in_regime) / t - 1;
      objective += weight[r] * e * e;
      const char now =
          wave_regime_ns(result.fit, features[r], true) >= wave_regime_ns(result.fit, features[r], false);
      if (now != compute_bound[r]) {
        compute_bound[r] = now;
        changed = true;
      }
    }
    result.objective = objective;
    if (objective < best.objective) best = std::move(result);
    if (!changed) break;
  }
  return best;
}

// The fits of the groups that are gemm-like (or of those that are not) at the devices' clock ratios:
// a gemm-like group's tile by grid (the first of kTileCandidates with the least objective), another
// group as it is. Each (group, tile) is fitted alone, so they run in parallel (support::parallel_for)
// and the result is the same on any number of threads.
std::map<WaveGroupKey, GroupResult> fit_groups(const WaveRows& w,
                                               const std::map<WaveGroupKey, std::vector<size_t>>& groups,
                                               bool gemm_like, const std::vector<double>& clock_ratio,
                                               int jobs) {
  struct Piece {
    const WaveGroupKey* key;
    const std::vector<size_t>* members;
    TileShape tile;
  };
  std::vector<Piece> pieces;
  for (const auto& [key, members] : groups) {
    if (is_gemm_like(key) != gemm_like) continue;
    if (!gemm_like) {
      pieces.push_back({&key, &members, TileShape{}});
      continue;
    }
    for (const TileShape& tile : kTileCandidates) pieces.push_back({&key, &members, tile});
  }
  // The largest groups first, so that no thread is left with one of them at the end.
  std::vector<size_t> order(pieces.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return pieces[a].members->size() > pieces[b].members->size(); });
  std::vector<GroupResult> results(pieces.size());
  support::parallel_for(pieces.size(), jobs, [&](size_t k) {
    const Piece& p = pieces[order[k]];
    results[order[k]] = fit_one_tile(w, *p.key, *p.members, p.tile, clock_ratio);
  });
  std::map<WaveGroupKey, GroupResult> out;
  for (size_t p = 0; p < pieces.size(); ++p) {
    GroupResult& best = out[*pieces[p].key];  // another group has its one piece, kept as it is
    if (!gemm_like || results[p].objective < best.objective) best = std::move(results[p]);
  }
  return out;
}

// Whether one of the rows sits in L2 on its device: a bandwidth-bound kernel whose bytes fit
// (wave_kernel.hpp).
bool sees_l2(const WaveRows& w, const std::vector<size_t>& members) {
  return std::any_of(members.begin(), members.end(), [&](size_t i) {
    return w.kernels[i].sample.bytes <= static_cast<double>(w.devices[w.device_of[i]].l2_bytes);
  });
}

std::vector<double> clock_ratios(const WaveRows& w, double energy_pj_per_flop) {
  std::vector<double> out;
  for (const DeviceSpec& d : w.devices) out.push_back(sustained_clock_ratio(d, energy_pj_per_flop));
  return out;
}

}  // namespace

WaveRows prepare_wave_rows(std::vector<CalibrationRow> rows, std::vector<char> refine_only) {
  if (refine_only.empty()) refine_only.assign(rows.size(), 0);
  if (refine_only.size() != rows.size()) {
    throw Error(fmt::format("wave rows: {} refine-only flags for {} rows", refine_only.size(), rows.size()));
  }
  WaveRows w;
  std::map<std::string, size_t> device_index;
  std::map<std::pair<std::string, std::string>, size_t> set_index;
  for (const CalibrationRow& r : rows) {
    const std::string& where = r.origin.empty() ? std::string("calibration row") : r.origin;
    if (r.device == kHostCpuDevice) {
      throw Error(fmt::format("{}: rows timed on the host CPU do not calibrate a GPU", where));
    }
    auto it = device_index.find(r.device);
    if (it == device_index.end()) {
      it = device_index.emplace(r.device, w.devices.size()).first;
      w.devices.push_back(find_device(r.device));
    }
    w.device_of.push_back(it->second);
    // A host-paced set is one kernel's rows of a device: the host's time per launch is the op's.
    const auto key = std::make_pair(r.device, r.timing == Timing::host_paced
                                                  ? fmt::format("{} ({})", r.kernel, timing_name(r.timing))
                                                  : r.source);
    auto s = set_index.find(key);
    if (s == set_index.end()) {
      s = set_index.emplace(key, w.sets.size()).first;
      w.sets.push_back(key);
    }
    w.set_of.push_back(s->second);
    const auto& precisions = calibration_precisions();
    if (std::find(precisions.begin(), precisions.end(), r.precision) == precisions.end()) {
      throw Error(fmt::format("{}: precision '{}' is not priced by the wave model", where, r.precision));
    }
    w.kernels.push_back(
        wave_kernel(r.kernel, r.category, r.variant, r.precision, to_sample(r), w.devices[it->second]));
    w.eager.push_back(r.timing == Timing::eager_op ? 1 : 0);
  }
  // A set is refine-only or not as a whole: its harness and floor are one host's.
  std::vector<int> set_refine(w.sets.size(), -1);
  for (size_t i = 0; i < rows.size(); ++i) {
    int& seen = set_refine[w.set_of[i]];
    if (seen >= 0 && seen != refine_only[i]) {
      const auto& [device, source] = w.sets[w.set_of[i]];
      throw Error(
          fmt::format("wave rows: device '{}' source '{}' is given both as a fitted input and as "
                      "--refine-only; give each measurement once",
                      device, source));
    }
    seen = refine_only[i];
  }
  w.set_refine_only.assign(set_refine.begin(), set_refine.end());
  w.refine_only = std::move(refine_only);
  w.rows = std::move(rows);
  // Floors of the eager-op sets: the median time of the 10 % smallest rows by work.
  w.set_floor_ns.assign(w.sets.size(), 0);
  std::vector<std::vector<size_t>> by_set(w.sets.size());
  for (size_t i = 0; i < w.rows.size(); ++i) by_set[w.set_of[i]].push_back(i);
  for (size_t s = 0; s < by_set.size(); ++s) {
    std::vector<size_t>& members = by_set[s];
    std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
      return w.rows[a].flops + w.rows[a].bytes < w.rows[b].flops + w.rows[b].bytes;
    });
    const size_t smallest = std::max<size_t>(1, members.size() / 10);
    std::vector<double> times;
    for (size_t q = 0; q < smallest; ++q) times.push_back(static_cast<double>(w.rows[members[q]].time_ns));
    w.set_floor_ns[s] = support::median(std::move(times), support::EvenMedian::mean_of_middles);
  }
  for (size_t i = 0; i < w.rows.size(); ++i) {
    const bool floored = w.eager[i] || w.rows[i].timing == Timing::host_paced;
    w.kernel_bound.push_back(!floored || static_cast<double>(w.rows[i].time_ns) >=
                                             kKernelBoundFloors * w.set_floor_ns[w.set_of[i]]
                                 ? 1
                                 : 0);
  }
  return w;
}

WaveGroupsFit fit_wave_groups(const WaveRows& w, const std::vector<char>& use,
                              std::optional<double> energy_pj_per_flop, int jobs) {
  std::map<WaveGroupKey, std::vector<size_t>> groups;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (use[i] && w.kernel_bound[i]) groups[w.kernels[i].group].push_back(i);
  }
  if (groups.empty()) throw Error("wave model fit: no kernel-bound rows to fit");
  // The power limit's energy: only gemm-like groups see it, so the grid refits only them, and the
  // energy whose summed objective is least wins (0, no limit, on a tie).
  std::map<WaveGroupKey, GroupResult> fitted;
  const auto fit_gemm_like = [&](double energy, std::map<WaveGroupKey, GroupResult>& out) {
    out = fit_groups(w, groups, true, clock_ratios(w, energy), jobs);
    double total = 0;
    for (const auto& [key, r] : out) total += r.objective;
    return total;
  };
  double energy = energy_pj_per_flop.value_or(0.0);
  double best_objective = fit_gemm_like(energy, fitted);
  if (!energy_pj_per_flop) {
    const auto consider = [&](double e) {
      std::map<WaveGroupKey, GroupResult> trial;
      const double objective = fit_gemm_like(e, trial);
      if (objective < best_objective) {
        best_objective = objective;
        energy = e;
        fitted = std::move(trial);
      }
    };
    for (double e = kEnergyGridFirstPj; e <= kEnergyGridLastPj * 1.0001; e *= std::sqrt(2.0)) consider(e);
    if (energy > 0) {
      for (double step : {std::pow(2.0, 0.25), std::pow(2.0, 0.125)}) {
        const double center = energy;
        consider(center * step);
        consider(center / step);
      }
    }
  }
  const std::vector<double> ratios = clock_ratios(w, energy);
  WaveGroupsFit out;
  out.energy_pj_per_flop = energy;
  std::map<WaveGroupKey, GroupResult> others = fit_groups(w, groups, false, ratios, jobs);
  for (const auto& [key, members] : groups) {
    GroupResult best = std::move(is_gemm_like(key) ? fitted.at(key) : others.at(key));
    best.fit.rows = static_cast<int64_t>(members.size());
    std::set<std::string> devices;
    std::vector<double> errors;
    for (size_t i : members) {
      devices.insert(w.rows[i].device);
      const double measured =
          static_cast<double>(w.rows[i].time_ns) - (w.eager[i] ? best.harness_ns.at(w.set_of[i]) : 0.0);
      const double predicted =
          predict_wave_ns(best.fit, w.kernels[i], w.devices[w.device_of[i]], ratios[w.device_of[i]]);
      errors.push_back(measured > 0 ? std::abs(predicted - measured) / measured : 1.0);
    }
    best.fit.devices.assign(devices.begin(), devices.end());
    best.fit.error = summarize_errors(std::move(errors));
    for (const auto& [set, h] : best.harness_ns) out.harness_ns[{set, key}] = h;
    out.groups.push_back(std::move(best.fit));
  }
  // A bandwidth-bound group none of whose rows sits in L2 takes the L2 rate of the group that would
  // price its kernels without it (its family's "" group, then elementwise), where that one saw L2.
  for (WaveGroupFit& g : out.groups) {
    if (is_gemm_like(g.key) || sees_l2(w, groups.at(g.key))) continue;
    for (const WaveGroupKey& k : {WaveGroupKey{g.key.family, "", ""}, WaveGroupKey{"elementwise", "", ""}}) {
      const auto other = std::find_if(out.groups.begin(), out.groups.end(),
                                      [&](const WaveGroupFit& o) { return o.key == k && k != g.key; });
      if (other == out.groups.end()) continue;
      if (sees_l2(w, groups.at(k))) g.memory[2] = other->memory[2];
      break;
    }
  }
  return out;
}

double measured_kernel_ns(const WaveRows& w, size_t i, const std::map<HarnessKey, double>& harness_ns) {
  double t = static_cast<double>(w.rows[i].time_ns);
  if (w.eager[i]) {
    const auto it = harness_ns.find({w.set_of[i], w.kernels[i].group});
    if (it != harness_ns.end()) t -= it->second;
  }
  return t;
}

WaveModel fit_wave_model(const WaveRows& w, const WaveFitOptions& options) {
  WaveModel m;
  m.fitted_on = options.fitted_on;
  m.inputs = options.inputs;
  std::vector<char> shared(w.rows.size(), 1);
  for (size_t i = 0; i < w.rows.size(); ++i) shared[i] = w.refine_only[i] ? 0 : 1;
  const WaveGroupsFit cross = fit_wave_groups(w, shared, std::nullopt, options.jobs);
  m.groups = cross.groups;
  m.energy_pj_per_flop = cross.energy_pj_per_flop;
  for (const auto& [key, h] : cross.harness_ns) {
    const size_t s = key.first;
    m.harness.push_back({w.sets[s].first, w.sets[s].second, w.set_floor_ns[s], h, key.second});
  }
  if (options.refinements) {
    for (size_t d = 0; d < w.devices.size(); ++d) {
      std::map<WaveGroupKey, size_t> counts;
      for (size_t i = 0; i < w.rows.size(); ++i) {
        if (w.device_of[i] == d && w.kernel_bound[i]) ++counts[w.kernels[i].group];
      }
      WaveRefinement ref;
      ref.device = w.devices[d].name;
      for (const auto& [key, count] : counts) {
        if (count < kMinRefinementRows) continue;
        std::vector<char> use(w.rows.size(), 0);
        for (size_t i = 0; i < w.rows.size(); ++i)
          use[i] = w.device_of[i] == d && w.kernels[i].group == key ? 1 : 0;
        WaveGroupsFit own = fit_wave_groups(w, use, m.energy_pj_per_flop, options.jobs);
        // A refine-only set's harness is its refinement's (header).
        for (const auto& [hkey, h] : own.harness_ns) {
          const size_t s = hkey.first;
          if (w.set_refine_only[s])
            m.harness.push_back({w.sets[s].first, w.sets[s].second, w.set_floor_ns[s], h, hkey.second});
        }
        WaveGroupFit group = std::move(own.groups.front());
        // The L2 rate is the rows' to say only when one of them sits in L2 (header).
        std::vector<size_t> members;
        for (size_t i = 0; i < w.rows.size(); ++i) {
          if (use[i] && w.kernel_bound[i]) members.push_back(i);
        }
        if (!is_gemm_like(key) && !sees_l2(w, members)) {
          if (const WaveGroupFit* across = m.group_for(key, nullptr)) group.memory[2] = across->memory[2];
        }
        ref.groups.push_back(std::move(group));
      }
      if (!ref.groups.empty()) m.refinements.push_back(std::move(ref));
    }
    std::sort(m.refinements.begin(), m.refinements.end(),
              [](const WaveRefinement& a, const WaveRefinement& b) { return a.device < b.device; });
  }
  std::sort(m.harness.begin(), m.harness.end(), [](const HarnessFit& a, const HarnessFit& b) {
    return std::tie(a.device, a.source, a.group) < std::tie(b.device, b.source, b.group);
  });
  return m;
}

}  // namespace mutwo::costmodel

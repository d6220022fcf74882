#include "costmodel/wave_model.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/device_catalog.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::costmodel {

// {file stem, text} of costmodel/models/*.json, generated at build time.
const std::vector<std::pair<std::string_view, std::string_view>>& shipped_wave_model_texts();

namespace {

constexpr std::string_view kFormat = "mutwo-wave-model";
constexpr int64_t kVersion = 6;
constexpr std::string_view kMethod =
    "t = max(c0 + cw*waves/(r*clock) + cf*flops/(r*peak) + cq*Fq/(r*peak) + cb*hbm_bytes/bandwidth (cb 0 for "
    "tensor-core groups), d0 + dh*hbm_bytes/bandwidth + "
    "dl*l2_bytes/(SMs*clock)) "
    "per kernel group across GPUs, r = min(1, board power / (energy_pj_per_flop * process energy * FP32 "
    "peak)); "
    "weighted relative non-negative least squares (Lawson-Hanson), regimes by "
    "alternating fit, tile by grid (per kernel the quickest tile up to it where tile_choice), a 3x3 stride-1 "
    "convolution as 36 products of Winograd F(4x4, 3x3)'s tiles where winograd, a harness term "
    "per (device, source, group) of eager-op measurements "
    "(costmodel/wave_fit.hpp), energy_pj_per_flop by grid";

// The bounds of wave_model.hpp on a coefficient read from a file: its name, its largest value, and why.
struct CoefficientBound {
  std::string_view name;
  double max;
  std::string_view unit;
};
constexpr std::string_view kHourNs = "ns (an hour)";
constexpr std::string_view kHourCycles = "cycles (an hour at 1 GHz)";
constexpr std::string_view kMillionth = "(a millionth of the datasheet rate)";
constexpr std::array<CoefficientBound, kWaveComputeTerms> kComputeBounds = {
    {{"c0", kMaxWaveNs, kHourNs},
     {"cw", kMaxWaveCycles, kHourCycles},
     {"cf", kMaxWaveInverseRate, kMillionth},
     {"cq", kMaxWaveInverseRate, kMillionth},
     {"cb", kMaxWaveInverseRate, kMillionth}}};
constexpr std::array<CoefficientBound, kWaveMemoryTerms> kMemoryBounds = {
    {{"d0", kMaxWaveNs, kHourNs},
     {"dh", kMaxWaveInverseRate, kMillionth},
     {"dl", kMaxWaveCycles, kHourCycles}}};

// `key`'s array of out.size() coefficients, each finite, >= 0 and within its bound; an error names the
// group (`where` holds it), the field, the term and the value.
void read_coefficients(const support::JsonReader& g, std::string_view key, std::span<double> out,
                       std::span<const CoefficientBound> bounds) {
  g.non_negative_numbers(key, out);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] > bounds[i].max) {
      throw FormatError(fmt::format("{}: field '{}'[{}] ({}) = {:g} is more than {:g} {}: not a fitted model",
                                    g.where(), key, i, bounds[i].name, out[i], bounds[i].max,
                                    bounds[i].unit));
    }
  }
}

// A harness figure: finite, `positive` (> 0) or >= 0, and at most an hour.
double harness_ns(const support::JsonReader& o, std::string_view key, bool positive) {
  const double v = o.number(key);
  if (v < 0 || (positive && v == 0) || v > kMaxWaveNs) {
    throw FormatError(fmt::format("{}: field '{}' = {:g} must be {} and at most {:g} ns (an hour)", o.where(),
                                  key, v, positive ? "> 0" : ">= 0", kMaxWaveNs));
  }
  return v;
}

const WaveGroupFit* find_group(const std::vector<WaveGroupFit>& groups, const WaveGroupKey& key) {
  for (const WaveGroupFit& g : groups) {
    if (g.key == key) return &g;
  }
  return nullptr;
}

nlohmann::ordered_json group_json(const WaveGroupFit& g) {
  nlohmann::ordered_json o;
  o["family"] = g.key.family;
  o["variant"] = g.key.variant;
  o["math"] = g.key.math;
  o["tile_m"] = g.tile.m;
  o["tile_n"] = g.tile.n;
  o["tile_choice"] = g.tile_choice;
  o["winograd"] = g.winograd;
  o["compute"] = g.compute;
  o["memory"] = g.memory;
  o["fixed_cost_fitted"] = g.fixed_cost_fitted;
  o["rows"] = g.rows;
  o["devices"] = g.devices;
  o["error"] = {{"median", g.error.median}, {"mean", g.error.mean}, {"max", g.error.max}};
  return o;
}

std::vector<WaveGroupFit> parse_groups(const support::JsonReader& r, std::string_view key, int64_t version) {
  std::vector<WaveGroupFit> out;
  const nlohmann::json& groups = r.array(key);
  for (size_t i = 0; i < groups.size(); ++i) {
    const support::JsonReader g(groups[i], fmt::format("{}: {} {}", r.where(), key, i));
    if (version >= 5) {
      g.expect_only({"family", "variant", "math", "tile_m", "tile_n", "tile_choice", "winograd", "compute",
                     "memory", "fixed_cost_fitted", "rows", "devices", "error"});
    } else if (version == 4) {
      g.expect_only({"family", "variant", "math", "tile_m", "tile_n", "tile_choice", "compute", "memory",
                     "fixed_cost_fitted", "rows", "devices", "error"});
    } else {
      g.expect_only({"family", "variant", "math", "tile_m", "tile_n", "compute", "memory",
                     "fixed_cost_fitted", "rows", "devices", "error"});
    }
    WaveGroupFit fit;
    fit.key = {g.string("family"), g.string("variant"), g.string("math")};
    static const std::vector<std::string_view> families{
        "gemm", "conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter",
        "norm", "reduction",      "elementwise"};
    if (std::find(families.begin(), families.end(), fit.key.family) == families.end()) {
      throw FormatError(fmt::format("{}: field 'family' = '{}'; valid: {}", g.where(), fit.key.family,
                                    fmt::join(families, ", ")));
    }
    const bool gemm_like = is_gemm_like(fit.key);
    if (gemm_like ? (fit.key.math != kTensorMath && fit.key.math != kCudaMath) : !fit.key.math.empty()) {
      throw FormatError(fmt::format("{}: field 'math' = '{}' {}", g.where(), fit.key.math,
                                    gemm_like ? "must be tensor or cuda" : "must be empty for this family"));
    }
    const std::string_view allowed = is_gemm_kernel(fit.key.family)  ? kBatchedGemmVariant
                                     : gemm_like                     ? kConv3x3s1Variant
                                     : fit.key.family == "reduction" ? kSoftmaxWarpVariant
                                                                     : "";
    if (!fit.key.variant.empty() && fit.key.variant != allowed) {
      throw FormatError(fmt::format(
          "{}: field 'variant' = '{}' must be empty or, for gemm, {}, for a conv pass, {}, for reduction, {}",
          g.where(), fit.key.variant, kBatchedGemmVariant, kConv3x3s1Variant, kSoftmaxWarpVariant));
    }
    fit.tile.m = g.int32("tile_m");
    fit.tile.n = g.int32("tile_n");
    if (fit.tile.m < 1 || fit.tile.n < 1) {
      throw FormatError(
          fmt::format("{}: tile {}x{} must be at least 1x1", g.where(), fit.tile.m, fit.tile.n));
    }
    if (version >= 4) {
      fit.tile_choice = g.boolean("tile_choice");
      if (fit.tile_choice && !chooses_tile(fit.key)) {
        throw FormatError(fmt::format("{}: field 'tile_choice' = true, but group {} runs one tile", g.where(),
                                      wave_group_text(fit.key)));
      }
    }
    if (version >= 5) {
      fit.winograd = g.boolean("winograd");
      if (fit.winograd && !runs_winograd(fit.key)) {
        throw FormatError(fmt::format("{}: field 'winograd' = true, but group {} does not run Winograd",
                                      g.where(), wave_group_text(fit.key)));
      }
    }
    // Before version 6 the compute regime had no traffic term: read as 0, priced as fitted.
    const support::JsonReader named(groups[i], fmt::format("{} ({})", g.where(), wave_group_text(fit.key)));
    const size_t compute_terms = version >= 6 ? kWaveComputeTerms : kWaveComputeTerms - 1;
    read_coefficients(named, "compute", std::span<double>(fit.compute).first(compute_terms),
                      std::span<const CoefficientBound>(kComputeBounds).first(compute_terms));
    read_coefficients(named, "memory", fit.memory, kMemoryBounds);
    fit.fixed_cost_fitted = g.boolean("fixed_cost_fitted");
    fit.rows = g.integer("rows");
    if (fit.rows < 0)
      throw FormatError(fmt::format("{}: field 'rows' = {} must be >= 0", named.where(), fit.rows));
    for (const nlohmann::json& d : g.array("devices")) {
      if (!d.is_string()) g.wrong_type("devices", "array of strings", d);
      fit.devices.push_back(d.get<std::string>());
    }
    const support::JsonReader e(g.field("error"), g.where() + ": error");
    e.expect_only({"median", "mean", "max"});
    fit.error.count = fit.rows;
    fit.error.median = e.non_negative("median");
    fit.error.mean = e.non_negative("mean");
    fit.error.max = e.non_negative("max");
    if (find_group(out, fit.key)) {
      throw FormatError(fmt::format("{}: group {} appears twice", g.where(), wave_group_text(fit.key)));
    }
    out.push_back(std::move(fit));
  }
  return out;
}

}  // namespace

RefinementMatch WaveModel::refinement_for(const DeviceSpec& device) const {
  for (const WaveRefinement& r : refinements) {
    if (r.device == device.name) return &r;
  }
  for (const WaveRefinement& r : refinements) {
    // A catalog device of the same chip and figures (a100-40gb takes a100-pcie-40gb's kernels).
    if (builtin_devices().contains(r.device) && same_chip(builtin_devices().find(r.device), device))
      return &r;
  }
  for (const WaveRefinement& r : refinements) {
    // Else one of the same chip, clocks and peaks on another memory (h200 takes h100-sxm-80gb's): the
    // memory terms are shares of each board's bandwidth.
    if (builtin_devices().contains(r.device) && same_compute_chip(builtin_devices().find(r.device), device))
      return {&r, true};
  }
  return {};
}

const WaveGroupFit* WaveModel::group_for(const WaveGroupKey& key, RefinementMatch match) const {
  const auto lookup = [&](const WaveGroupKey& k) -> const WaveGroupFit* {
    if (match.refinement != nullptr && (!match.compute_only || is_gemm_like(k))) {
      if (const WaveGroupFit* g = find_group(match.refinement->groups, k)) return g;
    }
    return find_group(groups, k);
  };
  // The key itself, then the relaxations documented in the header.
  if (const WaveGroupFit* g = lookup(key)) return g;
  if (!key.variant.empty()) {
    if (const WaveGroupFit* g = lookup({key.family, "", key.math})) return g;
  }
  if (!is_gemm_like(key) && key.family != "elementwise") return lookup({"elementwise", "", ""});
  return nullptr;
}

const WaveGroupFit* WaveModel::group_for(const WaveGroupKey& key, const DeviceSpec& device) const {
  return group_for(key, refinement_for(device));
}

std::string wave_tile_text(const WaveGroupFit& g) {
  if (!is_gemm_like(g.key)) return "";
  return fmt::format("{}{}x{}", g.tile_choice ? "<=" : "", g.tile.m, g.tile.n);
}

double wave_regime_ns(const WaveGroupFit& group, const WaveFeatures& f, bool compute) {
  if (compute) {
    double t = group.fixed_cost_fitted ? group.compute[0] : kUnfittedFixedCostNs;
    for (size_t j = 1; j < kWaveComputeTerms; ++j) t += group.compute[j] * f.compute[j];
    return t;
  }
  double t = group.fixed_cost_fitted ? group.memory[0] : kUnfittedFixedCostNs;
  for (size_t j = 1; j < kWaveMemoryTerms; ++j) t += group.memory[j] * f.memory[j];
  return t;
}

double predict_wave_ns(const WaveGroupFit& group, const WaveKernel& given, const DeviceSpec& device,
                       double clock_ratio) {
  const WaveKernel kernel = as_priced(given, group.winograd);
  const WaveFeatures f = wave_features(kernel, group.tile, device, clock_ratio);
  double memory = wave_regime_ns(group, f, false);
  // Bytes that sit in L2 cost no more than streaming them from HBM (wave_model.hpp).
  if (f.memory[2] > 0 && device.hbm_bytes_per_ns > 0) {
    WaveFeatures hbm = f;
    hbm.memory[2] = 0;
    hbm.memory[1] = kernel.sample.bytes / device.hbm_bytes_per_ns;
    memory = std::min(memory, wave_regime_ns(group, hbm, false));
  }
  double compute = wave_regime_ns(group, f, true);
  if (group.tile_choice) {
    for (const TileShape& t : tile_choices(group.tile)) {  // the group's tile, priced above, first
      if (t.m == group.tile.m && t.n == group.tile.n) continue;
      compute = std::min(compute, wave_regime_ns(group, wave_features(kernel, t, device, clock_ratio), true));
    }
  }
  return std::max(compute, memory);
}

std::string wave_model_json(const WaveModel& m) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["fitted_on"] = m.fitted_on;
  j["method"] = kMethod;
  j["inputs"] = m.inputs;
  j["energy_pj_per_flop"] = m.energy_pj_per_flop;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const WaveGroupFit& g : m.groups) groups.push_back(group_json(g));
  j["groups"] = std::move(groups);
  nlohmann::ordered_json refinements = nlohmann::ordered_json::array();
  for (const WaveRefinement& r : m.refinements) {
    nlohmann::ordered_json o;
    o["device"] = r.device;
    nlohmann::ordered_json gs = nlohmann::ordered_json::array();
    for (const WaveGroupFit& g : r.groups) gs.push_back(group_json(g));
    o["groups"] = std::move(gs);
    refinements.push_back(std::move(o));
  }
  j["refinements"] = std::move(refinements);
  nlohmann::ordered_json harness = nlohmann::ordered_json::array();
  for (const HarnessFit& h : m.harness) {
    harness.push_back({{"device", h.device},
                       {"source", h.source},
                       {"family", h.group.family},
                       {"variant", h.group.variant},
                       {"math", h.group.math},
                       {"floor_ns", h.floor_ns},
                       {"harness_ns", h.harness_ns}});
  }
  j["harness"] = std::move(harness);
  return j.dump(2) + "\n";
}

WaveModel parse_wave_model(std::string_view text, std::string_view file) {
  const nlohmann::json j = support::parse_json_document(text, file);
  const std::string where = fmt::format("wave model '{}'", file);
  const support::JsonReader r(j, where);
  r.expect_only({"format", "version", "fitted_on", "method", "inputs", "energy_pj_per_flop", "groups",
                 "refinements", "harness"});
  if (r.string("format") != kFormat) {
    throw FormatError(
        fmt::format("{}: field 'format' = '{}', expected '{}'", where, r.string("format"), kFormat));
  }
  const int64_t version = r.integer("version");
  if (version < 1 || version > kVersion) {
    throw FormatError(
        fmt::format("{}: field 'version' = {} is not supported (this mutwo reads versions 1 to {})", where,
                    version, kVersion));
  }
  WaveModel m;
  if (version >= 2) {
    m.energy_pj_per_flop = r.non_negative("energy_pj_per_flop");
    if (m.energy_pj_per_flop > kMaxWaveEnergyPj) {
      throw FormatError(fmt::format(
          "{}: field 'energy_pj_per_flop' = {:g} is more than {:g} pJ per FLOP: not a fitted model", where,
          m.energy_pj_per_flop, kMaxWaveEnergyPj));
    }
  } else if (j.contains("energy_pj_per_flop")) {
    throw FormatError(fmt::format("{}: field 'energy_pj_per_flop' needs version 2", where));
  }
  m.fitted_on = r.string("fitted_on");
  (void)r.string("method");
  for (const nlohmann::json& input : r.array("inputs")) {
    if (!input.is_string()) r.wrong_type("inputs", "array of strings", input);
    m.inputs.push_back(input.get<std::string>());
  }
  m.groups = parse_groups(r, "groups", version);
  const nlohmann::json& refinements = r.array("refinements");
  for (size_t i = 0; i < refinements.size(); ++i) {
    const support::JsonReader o(refinements[i], fmt::format("{}: refinement {}", where, i));
    o.expect_only({"device", "groups"});
    WaveRefinement ref;
    ref.device = o.string("device");
    // Fitted on calibration rows, whose devices are the catalog's: another name prices nothing (a
    // typo fell back to the cross-GPU groups unsaid), and a second one of a device was never read.
    if (!builtin_devices().contains(ref.device)) {
      throw FormatError(fmt::format("{}: field 'device' = '{}' is not a catalog device; valid: {}", o.where(),
                                    ref.device, fmt::join(builtin_devices().names(), ", ")));
    }
    for (const WaveRefinement& earlier : m.refinements) {
      if (earlier.device == ref.device) {
        throw FormatError(
            fmt::format("{}: field 'device' = '{}' is refined already by an earlier refinement; "
                        "give each device one",
                        o.where(), ref.device));
      }
    }
    ref.groups = parse_groups(o, "groups", version);
    m.refinements.push_back(std::move(ref));
  }
  const nlohmann::json& harness = r.array("harness");
  for (size_t i = 0; i < harness.size(); ++i) {
    const support::JsonReader o(harness[i], fmt::format("{}: harness {}", where, i));
    HarnessFit h{o.string("device"), o.string("source"), 0, 0, {}};
    if (version >= 3) {
      o.expect_only({"device", "source", "family", "variant", "math", "floor_ns", "harness_ns"});
      h.group = {o.string("family"), o.string("variant"), o.string("math")};
    } else {
      o.expect_only({"device", "source", "floor_ns", "harness_ns"});
    }
    // The floor divides (the harness rule, wave_validation.hpp): > 0.
    const support::JsonReader named(
        harness[i], fmt::format("{} ({}, '{}'{})", o.where(), h.device, h.source,
                                h.group.family.empty() ? "" : ", " + wave_group_text(h.group)));
    h.floor_ns = harness_ns(named, "floor_ns", true);
    h.harness_ns = harness_ns(named, "harness_ns", false);
    for (const HarnessFit& earlier : m.harness) {
      if (earlier.device == h.device && earlier.source == h.source && earlier.group == h.group) {
        throw FormatError(
            fmt::format("{}: a harness of this device, source and group is given already; give "
                        "each one once",
                        named.where()));
      }
    }
    m.harness.push_back(std::move(h));
  }
  return m;
}

WaveModel read_wave_model(const std::string& path) {
  return parse_wave_model(support::read_text_file(path, "wave model"), path);
}

void write_wave_model(const WaveModel& model, const std::string& path) {
  support::write_file_atomic(path, wave_model_json(model), "wave model");
}

const WaveModel& shipped_wave_model() {
  static const std::optional<WaveModel> model = []() -> std::optional<WaveModel> {
    for (const auto& [stem, text] : shipped_wave_model_texts()) {
      if (stem == "waves") return parse_wave_model(text, "<builtin>/waves.json");
    }
    return std::nullopt;
  }();
  if (!model) {
    throw Error(
        "this build ships no wave model (costmodel/models/waves.json): fit one with mutwo calibrate --waves");
  }
  return *model;
}

}  // namespace mutwo::costmodel

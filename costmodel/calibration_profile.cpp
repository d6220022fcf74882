#include "costmodel/calibration_profile.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "costmodel/device_catalog.hpp"
#include "ir/kernel_precision.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::costmodel {

// Defined by the file cmake/embed_texts.cmake generates: (file stem, JSON text) of every
// costmodel/profiles/*.json, sorted by name.
const std::vector<std::pair<std::string_view, std::string_view>>& shipped_calibration_profile_texts();

namespace {

constexpr std::string_view kFormat = "mutwo-calibration-profile";
constexpr int64_t kVersion = 2;
constexpr std::string_view kMethod =
    "t = max(a_launch + a_wave*waves + a_flop*flops + a_slot*Fq, b_launch + b_byte*bytes); per (kernel, "
    "conv variant, precision) non-negative least squares on relative error, regimes by alternating fit, tile "
    "by grid "
    "(costmodel/calibration_fit.hpp)";

}  // namespace

const KernelGroupFit* CalibrationProfile::find(std::string_view kernel, std::string_view variant,
                                               std::string_view precision) const {
  for (const KernelGroupFit& g : groups) {
    if (g.kernel == kernel && g.variant == variant && g.precision == precision) return &g;
  }
  return nullptr;
}

const KernelGroupFit* CalibrationProfile::pricing(std::string_view kernel, std::string_view variant,
                                                  std::string_view precision) const {
  if (const KernelGroupFit* g = find(kernel, variant, precision)) return g;
  if (variant.empty()) return nullptr;
  return find(kernel, kGeneralConvVariant, precision);
}

std::string calibration_group_text(const CalibrationGroupKey& key) {
  return fmt::format("device '{}', kernel '{}'{}, precision '{}'", key.device, key.kernel,
                     key.variant.empty() ? std::string() : fmt::format(" ({})", key.variant), key.precision);
}

std::map<CalibrationGroupKey, std::vector<size_t>> calibration_groups(
    const std::vector<CalibrationRow>& rows) {
  std::map<CalibrationGroupKey, std::vector<size_t>> groups;
  for (size_t i = 0; i < rows.size(); ++i) {
    groups[{rows[i].device, rows[i].kernel, rows[i].variant, rows[i].precision}].push_back(i);
  }
  for (auto it = groups.begin(); it != groups.end();) {
    const CalibrationGroupKey& key = it->first;
    if (key.variant.empty() || key.variant == kGeneralConvVariant || it->second.size() >= kMinVariantRows) {
      ++it;
      continue;
    }
    auto& general = groups[{key.device, key.kernel, std::string(kGeneralConvVariant), key.precision}];
    general.insert(general.end(), it->second.begin(), it->second.end());
    std::sort(general.begin(), general.end());  // rows in input order, so folds do not depend on the merge
    it = groups.erase(it);
  }
  return groups;
}

Roofline catalog_roofline(const DeviceSpec& device, ir::KindCategory category, std::string_view precision) {
  const bool tensor = category == ir::KindCategory::matmul || category == ir::KindCategory::conv;
  Roofline r;
  r.bytes_per_ns = device.hbm_bytes_per_ns;
  const ir::KernelPrecisionInfo& p = ir::kernel_precision(precision);
  if (p.half && tensor) {
    r.peak_flops_per_ns = device.half_flops_per_ns;
  } else if (p.id == ir::KernelPrecision::tf32 && tensor && device.tf32_flops_per_ns > 0) {
    r.peak_flops_per_ns = device.tf32_flops_per_ns;
  } else {
    r.peak_flops_per_ns = device.fp32_flops_per_ns;
  }
  return r;
}

KernelSample to_sample(const CalibrationRow& row) {
  KernelSample s;
  s.batch = row.batch;
  s.m = row.m;
  s.n = row.n;
  s.k = row.k;
  s.flops = static_cast<double>(row.flops);
  s.bytes = static_cast<double>(row.bytes);
  s.time_ns = static_cast<double>(row.time_ns);
  s.row_elements = row.row_elements;
  s.winograd_tiles = row.winograd_tiles;
  return s;
}

CalibrationProfile fit_calibration_profile(const std::vector<CalibrationRow>& rows, const DeviceSpec& device,
                                           std::vector<std::string> inputs, std::string fitted_on) {
  std::vector<std::string> devices;
  for (const CalibrationRow& r : rows) {
    if (std::find(devices.begin(), devices.end(), r.device) == devices.end()) devices.push_back(r.device);
  }
  std::vector<std::pair<CalibrationGroupKey, std::vector<size_t>>> groups;
  for (auto& [key, members] : calibration_groups(rows)) {
    if (key.device == device.name) groups.emplace_back(key, std::move(members));
  }
  if (groups.empty()) {
    std::sort(devices.begin(), devices.end());
    throw Error(
        fmt::format("no calibration rows for device '{}'; the inputs have rows for: {}", device.name,
                    devices.empty() ? std::string("none") : fmt::format("{}", fmt::join(devices, ", "))));
  }
  CalibrationProfile p;
  p.device = device.name;
  p.sm_count = device.sm_count;
  p.fitted_on = std::move(fitted_on);
  p.inputs = std::move(inputs);
  for (const auto& [key, members] : groups) {
    std::vector<KernelSample> samples;
    for (size_t i : members) samples.push_back(to_sample(rows[i]));
    KernelGroupFit g;
    g.kernel = key.kernel;
    g.variant = key.variant;
    g.precision = key.precision;
    g.category = rows[members.front()].category;
    g.rows = static_cast<int64_t>(samples.size());
    const std::string where = calibration_group_text(key);
    g.model =
        fit_kernel_model(samples, device.sm_count, catalog_roofline(device, g.category, g.precision), where);
    g.error = relative_errors(g.model, samples, device.sm_count);
    p.groups.push_back(std::move(g));
  }
  return p;
}

std::string calibration_profile_json(const CalibrationProfile& p) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["device"] = p.device;
  j["sm_count"] = p.sm_count;
  j["fitted_on"] = p.fitted_on;
  j["method"] = kMethod;
  j["inputs"] = p.inputs;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const KernelGroupFit& g : p.groups) {
    nlohmann::ordered_json o;
    o["kernel"] = g.kernel;
    o["variant"] = g.variant;
    o["category"] = ir::category_name(g.category);
    o["precision"] = g.precision;
    o["rows"] = g.rows;
    o["tile_m"] = g.model.tile.m;
    o["tile_n"] = g.model.tile.n;
    o["compute"] = g.model.compute;
    o["memory"] = g.model.memory;
    o["error"] = {{"median", g.error.median}, {"mean", g.error.mean}, {"max", g.error.max}};
    groups.push_back(std::move(o));
  }
  j["groups"] = std::move(groups);
  return j.dump(2) + "\n";
}

CalibrationProfile parse_calibration_profile(std::string_view text, std::string_view file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (
      const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past double's range
    throw FormatError(fmt::format("{}: not JSON: {}", file, e.what()));
  }
  const std::string where = fmt::format("calibration profile '{}'", file);
  const support::JsonReader r(j, where);
  r.expect_only({"format", "version", "device", "sm_count", "fitted_on", "method", "inputs", "groups"});
  if (r.string("format") != kFormat) {
    throw FormatError(
        fmt::format("{}: field 'format' = '{}', expected '{}'", where, r.string("format"), kFormat));
  }
  if (r.integer("version") != kVersion) {
    throw FormatError(fmt::format("{}: field 'version' = {} is not supported (this mutwo reads version {}{})",
                                  where, r.integer("version"), kVersion,
                                  r.integer("version") == 1
                                      ? "; version 1 had no conv variants: fit it again with mutwo calibrate"
                                      : ""));
  }
  CalibrationProfile p;
  p.device = r.string("device");
  if (!builtin_devices().contains(p.device)) {
    throw FormatError(fmt::format("{}: field 'device' = '{}' is not a catalog device; valid: {}", where,
                                  p.device, fmt::join(builtin_devices().names(), ", ")));
  }
  p.sm_count = r.int32("sm_count");
  if (p.sm_count < 1)
    throw FormatError(fmt::format("{}: field 'sm_count' = {} must be >= 1", where, p.sm_count));
  p.fitted_on = r.string("fitted_on");
  (void)r.string("method");
  for (const nlohmann::json& input : r.array("inputs")) {
    if (!input.is_string()) r.wrong_type("inputs", "array of strings", input);
    p.inputs.push_back(input.get<std::string>());
  }
  const nlohmann::json& groups = r.array("groups");
  for (size_t i = 0; i < groups.size(); ++i) {
    const support::JsonReader g(groups[i], fmt::format("{}: group {}", where, i));
    g.expect_only({"kernel", "variant", "category", "precision", "rows", "tile_m", "tile_n", "compute",
                   "memory", "error"});
    KernelGroupFit fit;
    fit.kernel = g.string("kernel");
    fit.variant = g.string("variant");
    fit.category = g.name("category", parse_category);
    try {
      if (kernel_category(fit.kernel) != fit.category) {
        throw FormatError(fmt::format("{}: field 'category' = '{}' but kernel '{}' is in '{}'", g.where(),
                                      ir::category_name(fit.category), fit.kernel,
                                      ir::category_name(kernel_category(fit.kernel))));
      }
    } catch (const UnknownNameError& e) {
      throw FormatError(fmt::format("{}: field 'kernel': {}", g.where(), e.what()));
    }
    if (!valid_kernel_variant(fit.kernel, fit.variant)) {
      throw FormatError(
          fmt::format("{}: field 'variant' = '{}' {}", g.where(), fit.variant,
                      is_conv_pass_kernel(fit.kernel)
                          ? fmt::format("is not a conv variant; valid: {}", fmt::join(conv_variants(), ", "))
                          : fmt::format("but kernel '{}' has none (\"\")", fit.kernel)));
    }
    fit.precision = g.string("precision");
    const auto& precisions = calibration_precisions();
    if (std::find(precisions.begin(), precisions.end(), fit.precision) == precisions.end()) {
      throw FormatError(fmt::format("{}: field 'precision' = '{}'; valid: {}", g.where(), fit.precision,
                                    fmt::join(precisions, ", ")));
    }
    fit.rows = g.integer("rows");
    fit.model.tile.m = g.int32("tile_m");
    fit.model.tile.n = g.int32("tile_n");
    if (fit.model.tile.m < 1 || fit.model.tile.n < 1) {
      throw FormatError(
          fmt::format("{}: tile {}x{} must be >= 1x1", g.where(), fit.model.tile.m, fit.model.tile.n));
    }
    g.non_negative_numbers("compute", fit.model.compute);
    g.non_negative_numbers("memory", fit.model.memory);
    const support::JsonReader e(g.field("error"), g.where() + ": error");
    e.expect_only({"median", "mean", "max"});
    fit.error.count = fit.rows;
    fit.error.median = e.non_negative("median");
    fit.error.mean = e.non_negative("mean");
    fit.error.max = e.non_negative("max");
    if (p.find(fit.kernel, fit.variant, fit.precision)) {
      throw FormatError(fmt::format("{}: a second group for kernel '{}', variant '{}', precision '{}'",
                                    g.where(), fit.kernel, fit.variant, fit.precision));
    }
    p.groups.push_back(std::move(fit));
  }
  return p;
}

CalibrationProfile read_calibration_profile(const std::string& path) {
  return parse_calibration_profile(support::read_text_file(path, "calibration profile"), path);
}

void write_calibration_profile(const CalibrationProfile& profile, const std::string& path) {
  support::write_file_atomic(path, calibration_profile_json(profile), "calibration profile");
}

const std::vector<CalibrationProfile>& shipped_calibration_profiles() {
  static const std::vector<CalibrationProfile> profiles = [] {
    std::vector<CalibrationProfile> out;
    for (const auto& [name, text] : shipped_calibration_profile_texts()) {
      out.push_back(parse_calibration_profile(text, fmt::format("costmodel/profiles/{}.json", name)));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.device < b.device; });
    return out;
  }();
  return profiles;
}

std::optional<CalibrationProfile> find_calibration_profile(const DeviceSpec& device,
                                                           const std::vector<CalibrationProfile>& given) {
  for (const std::vector<CalibrationProfile>* list : {&given, &shipped_calibration_profiles()}) {
    for (const CalibrationProfile& p : *list) {
      if (p.device == device.name) return p;
    }
    for (const CalibrationProfile& p : *list) {
      if (builtin_devices().contains(p.device) && same_chip(builtin_devices().find(p.device), device))
        return p;
    }
  }
  return std::nullopt;
}

}  // namespace mutwo::costmodel

#include "costmodel/cost_source_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/analytic_cost_model.hpp"
#include "profiles/error.hpp"

namespace mutwo::costmodel {

void CostSourceRegistry::add(CostSourceInfo info) {
  if (!info.create) throw Error(fmt::format("cost source '{}' has no factory", info.name));
  if (contains(info.name)) throw Error(fmt::format("cost source '{}' registered twice", info.name));
  sources_.push_back(std::move(info));
}

bool CostSourceRegistry::contains(std::string_view name) const {
  for (const auto& s : sources_) {
    if (s.name == name) return true;
  }
  return false;
}

const CostSourceInfo& CostSourceRegistry::find(std::string_view name) const {
  for (const auto& s : sources_) {
    if (s.name == name) return s;
  }
  throw UnknownNameError(fmt::format("unknown cost source '{}'; valid: {}", name, fmt::join(names(), ", ")));
}

std::vector<std::string> CostSourceRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(sources_.size());
  for (const auto& s : sources_) out.push_back(s.name);
  return out;
}

std::unique_ptr<OpCostModel> CostSourceRegistry::create(std::string_view name,
                                                        const DeviceSpec& device) const {
  return find(name).create(device);
}

void register_builtin_cost_sources(CostSourceRegistry& registry) {
  registry.add({"analytic",
                "roofline on the catalog's per-dtype peaks and HBM bandwidth, per-category efficiency rising "
                "with work per kernel, plus launch overhead",
                "Williams, Waterman, Patterson, Roofline: An Insightful Visual Performance Model, CACM 2009",
                [](const DeviceSpec& device) { return std::make_unique<AnalyticCostModel>(device); }});
}

const CostSourceRegistry& builtin_cost_sources() {
  static const CostSourceRegistry registry = [] {
    CostSourceRegistry r;
    register_builtin_cost_sources(r);
    return r;
  }();
  return registry;
}

}  // namespace mutwo::costmodel

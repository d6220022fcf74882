#pragma once
// Op cost sources by name: factory from a device, one-line description and the work it follows.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/op_cost_model.hpp"

namespace mutwo::costmodel {

struct CostSourceInfo {
  std::string name;         // "analytic"
  std::string description;  // one line, for --help
  std::string citation;     // the paper or method it implements
  std::function<std::unique_ptr<OpCostModel>(const DeviceSpec&)> create;
};

class CostSourceRegistry {
 public:
  void add(CostSourceInfo info);  // throws Error on a duplicate name or a missing factory
  // Throws UnknownNameError: "unknown cost source 'x'; valid: analytic, ...".
  const CostSourceInfo& find(std::string_view name) const;
  bool contains(std::string_view name) const;
  const std::vector<CostSourceInfo>& sources() const { return sources_; }  // in registration order
  std::vector<std::string> names() const;
  // find(name).create(device)
  std::unique_ptr<OpCostModel> create(std::string_view name, const DeviceSpec& device) const;

 private:
  std::vector<CostSourceInfo> sources_;
};

// One call registers every built-in source, one line each (analytic; calibrated and measured later).
void register_builtin_cost_sources(CostSourceRegistry& registry);
// A registry with the built-ins, built once.
const CostSourceRegistry& builtin_cost_sources();

}  // namespace mutwo::costmodel

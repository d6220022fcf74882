#include "policies/policy_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "profiles/error.hpp"

namespace mutwo::policies {

void PolicyRegistry::add(PolicyInfo info) {
  if (info.name.empty()) throw Error("policy registered without a name");
  if (contains(info.name)) throw Error(fmt::format("policy '{}' registered twice", info.name));
  if (!info.create) throw Error(fmt::format("policy '{}' registered without a factory", info.name));
  policies_.push_back(std::move(info));
}

bool PolicyRegistry::contains(std::string_view name) const {
  for (const PolicyInfo& p : policies_) {
    if (p.name == name) return true;
  }
  return false;
}

const PolicyInfo& PolicyRegistry::find(std::string_view name) const {
  for (const PolicyInfo& p : policies_) {
    if (p.name == name) return p;
  }
  throw UnknownNameError(fmt::format("unknown policy '{}'; valid: {}", name, fmt::join(names(), ", ")));
}

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> out;
  for (const PolicyInfo& p : policies_) out.push_back(p.name);
  return out;
}

std::unique_ptr<MemoryPolicy> PolicyRegistry::create(std::string_view name) const {
  return find(name).create();
}

void register_builtin_policies(PolicyRegistry& registry) {
  register_none_policy(registry);
  register_checkpoint_policy(registry);
  register_vdnn_policy(registry);
  register_capuchin_policy(registry);
  register_mutwo_policy(registry);
  register_dtr_policy(registry);
#ifdef MUTWO_WITH_CBC
  register_checkmate_policy(registry);
#endif
}

const PolicyRegistry& builtin_policies() {
  static const PolicyRegistry registry = [] {
    PolicyRegistry r;
    register_builtin_policies(r);
    return r;
  }();
  return registry;
}

}  // namespace mutwo::policies

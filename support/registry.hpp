#pragma once
// One registry for every pluggable concept (policies, cost sources, models, devices, experiment
// kinds, DTR heuristics, trace formats): entries by name in registration order, after SimGrid's
// module tables. An entry is a plain struct with a `name` field (or a pointer to an object with a
// name() method) and whatever its concept declares beside it: description, citation, factory,
// typed parameters, flags.
#include <concepts>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.hpp"

namespace mutwo {

// The name an entry is registered under: `entry.name`, or `entry->name()` for owning pointers.
template <typename Entry>
std::string_view registry_entry_name(const Entry& entry) {
  if constexpr (requires { std::string_view(entry.name); }) {
    return entry.name;
  } else {
    return entry->name();
  }
}

template <typename Entry>
concept RegistryEntry = requires(const Entry& e) {
  { registry_entry_name(e) } -> std::convertible_to<std::string_view>;
};

// Entries whose `create` member is a factory (std::function or function pointer).
template <typename Entry>
concept HasFactory = requires(const Entry& e) {
  static_cast<bool>(e.create);
};

template <RegistryEntry Entry>
class Registry {
 public:
  // Concept-specific validation of an entry before it is added (throws mutwo::Error).
  using Check = std::function<void(const Entry&)>;

  // `what` names the concept in messages: "policy" gives "unknown policy 'x'; valid: ...".
  explicit Registry(std::string what, Check check = {}) : what_(std::move(what)), check_(std::move(check)) {}

  // Appends an entry. Throws Error "<what> registered without a name", "<what> 'x' registered twice",
  // "<what> 'x' registered without a factory" (entries with a `create` member), or what check throws.
  void add(Entry entry) {
    const std::string_view name = registry_entry_name(entry);
    if (name.empty()) throw Error(fmt::format("{} registered without a name", what_));
    if (contains(name)) throw Error(fmt::format("{} '{}' registered twice", what_, name));
    if constexpr (HasFactory<Entry>) {
      if (!static_cast<bool>(entry.create))
        throw Error(fmt::format("{} '{}' registered without a factory", what_, name));
    }
    if (check_) check_(entry);
    entries_.push_back(std::move(entry));
  }

  // The entry of that name, or null.
  const Entry* lookup(std::string_view name) const noexcept {
    for (const Entry& e : entries_) {
      if (registry_entry_name(e) == name) return &e;
    }
    return nullptr;
  }
  // Throws UnknownNameError "unknown <what> 'x'; valid: a, b, c".
  const Entry& find(std::string_view name) const {
    if (const Entry* e = lookup(name)) return *e;
    throw unknown_name(name);
  }
  const Entry& get(std::string_view name) const { return find(name); }
  bool contains(std::string_view name) const noexcept { return lookup(name) != nullptr; }

  // find(name).create(args...), for entries that hold a factory.
  template <typename... Args>
  requires HasFactory<Entry>
  auto create(std::string_view name, Args&&... args) const {
    return find(name).create(std::forward<Args>(args)...);
  }

  // The error find() throws, for callers that compose their own lookups.
  UnknownNameError unknown_name(std::string_view name) const {
    return UnknownNameError(fmt::format("unknown {} '{}'; valid: {}", what_, name, valid_names()));
  }

  std::vector<std::string> names() const {  // in registration order
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.emplace_back(registry_entry_name(e));
    return out;
  }
  std::string valid_names() const { return fmt::format("{}", fmt::join(names(), ", ")); }  // "a, b, c"

  const std::vector<Entry>& entries() const noexcept { return entries_; }  // in registration order
  auto begin() const noexcept { return entries_.begin(); }
  auto end() const noexcept { return entries_.end(); }
  size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  const std::string& what() const noexcept { return what_; }

 private:
  std::string what_;
  Check check_;
  std::vector<Entry> entries_;
};

}  // namespace mutwo

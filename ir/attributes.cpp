#include "ir/attributes.hpp"

#include "support/error.hpp"

namespace mutwo::ir {
namespace {
template <typename T>
const T& get(const Attributes& attrs, std::string_view key, std::string_view where, const char* type_name) {
  auto it = attrs.find(key);
  if (it == attrs.end()) {
    throw GraphError(std::string(where) + ": missing attribute '" + std::string(key) + "'");
  }
  if (const T* value = std::get_if<T>(&it->second)) return *value;
  throw GraphError(std::string(where) + ": attribute '" + std::string(key) + "' must be " + type_name);
}
}  // namespace

int64_t attr_int(const Attributes& attrs, std::string_view key, std::string_view where) {
  return get<int64_t>(attrs, key, where, "an integer");
}
int64_t attr_int_or(const Attributes& attrs, std::string_view key, int64_t fallback, std::string_view where) {
  return attrs.contains(key) ? attr_int(attrs, key, where) : fallback;
}
double attr_double(const Attributes& attrs, std::string_view key, std::string_view where) {
  auto it = attrs.find(key);
  // Integers are accepted where a real is expected (eps written as 0 in a hand-made file).
  if (it != attrs.end()) {
    if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  }
  return get<double>(attrs, key, where, "a number");
}
double attr_double_or(const Attributes& attrs, std::string_view key, double fallback,
                      std::string_view where) {
  return attrs.contains(key) ? attr_double(attrs, key, where) : fallback;
}
const std::string& attr_string(const Attributes& attrs, std::string_view key, std::string_view where) {
  return get<std::string>(attrs, key, where, "a string");
}
const std::vector<int64_t>& attr_ints(const Attributes& attrs, std::string_view key, std::string_view where) {
  return get<std::vector<int64_t>>(attrs, key, where, "a list of integers");
}
std::vector<int64_t> attr_ints_or(const Attributes& attrs, std::string_view key,
                                  std::vector<int64_t> fallback, std::string_view where) {
  return attrs.contains(key) ? attr_ints(attrs, key, where) : fallback;
}
const std::vector<double>& attr_doubles(const Attributes& attrs, std::string_view key,
                                        std::string_view where) {
  return get<std::vector<double>>(attrs, key, where, "a list of numbers");
}

}  // namespace mutwo::ir

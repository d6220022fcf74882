#pragma once
// Op attributes: a small ordered map from name to a typed value (stride, padding, eps, lr, ...).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mutwo::ir {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;
// std::map keeps serialisation and comparison order deterministic.
using Attributes = std::map<std::string, AttrValue, std::less<>>;

// native_dropout's p where an op omits it: PyTorch's nn.Dropout default. One rule for the checks
// (ir/kinds) and the executor's kernels, which assumed 0.0 and 0.5.
inline constexpr double kDefaultDropoutP = 0.5;

// Typed getters; a missing key or wrong type throws GraphError naming `where` (the op) and the key.
int64_t attr_int(const Attributes& attrs, std::string_view key, std::string_view where);
int64_t attr_int_or(const Attributes& attrs, std::string_view key, int64_t fallback, std::string_view where);
double attr_double(const Attributes& attrs, std::string_view key, std::string_view where);
double attr_double_or(const Attributes& attrs, std::string_view key, double fallback, std::string_view where);
const std::string& attr_string(const Attributes& attrs, std::string_view key, std::string_view where);
const std::vector<int64_t>& attr_ints(const Attributes& attrs, std::string_view key, std::string_view where);
std::vector<int64_t> attr_ints_or(const Attributes& attrs, std::string_view key,
                                  std::vector<int64_t> fallback, std::string_view where);
const std::vector<double>& attr_doubles(const Attributes& attrs, std::string_view key,
                                        std::string_view where);

}  // namespace mutwo::ir

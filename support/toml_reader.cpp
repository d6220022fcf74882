#include "support/toml_reader.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.hpp"

namespace mutwo::support {

toml::table parse_toml(std::string_view text, std::string_view source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw FormatError(fmt::format("{}:{}:{}: not valid TOML: {}", source, e.source().begin.line,
                                  e.source().begin.column, e.description()));
  }
}

void TomlReader::fail(const toml::node* node, std::string_view key, const std::string& why) const {
  if (node != nullptr && node->source().begin.line > 0) {
    throw FormatError(fmt::format("{}:{}: '{}' {}", source_, node->source().begin.line, key, why));
  }
  throw FormatError(fmt::format("{}: '{}' {}", source_, key, why));
}

void TomlReader::reject_unknown(const toml::table& table, std::string_view prefix,
                                const std::vector<std::string_view>& known) const {
  for (const auto& [k, node] : table) {
    const std::string_view name = k.str();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      fail(&node, fmt::format("{}{}", prefix, name),
           fmt::format("is not a known key here; valid: {}", fmt::join(known, ", ")));
    }
  }
}

std::string TomlReader::string(const toml::table& t, std::string_view prefix, std::string_view key) const {
  const toml::node* n = t.get(key);
  const std::string full = fmt::format("{}{}", prefix, key);
  if (n == nullptr) fail(&t, full, "is missing");
  const auto* s = n->as_string();
  if (s == nullptr) fail(n, full, fmt::format("must be a string, not {}", type_name(*n)));
  return s->get();
}

std::optional<std::string> TomlReader::optional_string(const toml::table& t, std::string_view prefix,
                                                       std::string_view key) const {
  if (t.get(key) == nullptr) return std::nullopt;
  return string(t, prefix, key);
}

int64_t TomlReader::integer(const toml::node& n, const std::string& key, int64_t min, int64_t max) const {
  const auto* i = n.as_integer();
  if (i == nullptr) fail(&n, key, fmt::format("must be an integer, not {}", type_name(n)));
  const int64_t v = i->get();
  if (v < min || v > max) fail(&n, key, fmt::format("= {} must be from {} to {}", v, min, max));
  return v;
}

double TomlReader::number(const toml::node& n, const std::string& key) const {
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  const auto* f = n.as_floating_point();
  if (f == nullptr) fail(&n, key, fmt::format("must be a number, not {}", type_name(n)));
  if (!std::isfinite(f->get())) fail(&n, key, fmt::format("= {} must be finite", f->get()));
  return f->get();
}

const toml::array& TomlReader::array(const toml::node& n, const std::string& key) const {
  const auto* a = n.as_array();
  if (a == nullptr) fail(&n, key, fmt::format("must be an array, not {}", type_name(n)));
  if (a->empty()) fail(&n, key, "must not be empty");
  return *a;
}

std::vector<std::string> TomlReader::strings(const toml::node& n, const std::string& key) const {
  std::vector<std::string> out;
  for (const toml::node& e : array(n, key)) {
    const auto* s = e.as_string();
    if (s == nullptr) fail(&e, key, fmt::format("must hold strings, not {}", type_name(e)));
    if (std::find(out.begin(), out.end(), s->get()) != out.end()) {
      fail(&e, key, fmt::format("names '{}' twice", s->get()));
    }
    out.push_back(s->get());
  }
  return out;
}

std::vector<int64_t> TomlReader::integers(const toml::node& n, const std::string& key, int64_t min,
                                          int64_t max) const {
  std::vector<int64_t> out;
  for (const toml::node& e : array(n, key)) {
    const int64_t v = integer(e, key, min, max);
    if (std::find(out.begin(), out.end(), v) != out.end()) fail(&e, key, fmt::format("holds {} twice", v));
    out.push_back(v);
  }
  return out;
}

std::vector<double> TomlReader::positives(const toml::node& n, const std::string& key, double max) const {
  std::vector<double> out;
  for (const toml::node& e : array(n, key)) {
    const double v = number(e, key);
    if (!(v > 0 && v <= max)) fail(&e, key, fmt::format("holds {}, outside (0, {}]", v, max));
    if (std::find(out.begin(), out.end(), v) != out.end()) fail(&e, key, fmt::format("holds {} twice", v));
    out.push_back(v);
  }
  return out;
}

std::string TomlReader::type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

}  // namespace mutwo::support

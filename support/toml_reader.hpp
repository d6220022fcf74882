#pragma once
// The one typed reader of TOML inputs (experiment specs, device descriptions): every error names the
// source, the line, the key and the value, and keys a table does not know are errors.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace mutwo::support {

// Parses TOML text; throws FormatError "<source>:<line>:<column>: not valid TOML: <why>".
toml::table parse_toml(std::string_view text, std::string_view source);

class TomlReader {
 public:
  explicit TomlReader(std::string_view source) : source_(source) {}
  const std::string& source() const { return source_; }

  // Throws FormatError "<source>:<line>: '<key>' <why>" (the line when the node has one).
  [[noreturn]] void fail(const toml::node* node, std::string_view key, const std::string& why) const;
  // Fails on the first key of `table` not in `known`, listing the valid ones.
  void reject_unknown(const toml::table& table, std::string_view prefix,
                      const std::vector<std::string_view>& known) const;

  // Table members by key (prefix + key names it in errors): missing or of another type fails.
  std::string string(const toml::table& t, std::string_view prefix, std::string_view key) const;
  std::optional<std::string> optional_string(const toml::table& t, std::string_view prefix,
                                             std::string_view key) const;

  // Nodes: an integer in [min, max]; a finite number (an integer is taken as one); a non-empty array.
  int64_t integer(const toml::node& n, const std::string& key, int64_t min, int64_t max) const;
  double number(const toml::node& n, const std::string& key) const;
  const toml::array& array(const toml::node& n, const std::string& key) const;
  std::vector<std::string> strings(const toml::node& n, const std::string& key) const;
  std::vector<int64_t> integers(const toml::node& n, const std::string& key, int64_t min, int64_t max) const;
  // Numbers in (0, max], each once: fractions and ratios.
  std::vector<double> positives(const toml::node& n, const std::string& key, double max) const;

  static std::string type_name(const toml::node& n);  // "a table", "an integer", ...

 private:
  std::string source_;
};

}  // namespace mutwo::support

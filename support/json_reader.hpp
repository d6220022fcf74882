#pragma once
// The one typed reader of JSON fields for mutwo's own files (traces, schedules): every access checks
// presence and type first, so no nlohmann exception escapes, and every error is a FormatError that
// starts with where the object is ("op 2", "instruction 3", "graph") and names the field.
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/error.hpp"

namespace mutwo::support {

// "integer", "float", "string", "array", ...: how errors name a JSON value's type.
std::string json_type_name(const nlohmann::json& j);

// One JSON object being read, with the label its errors start with. Keeps a reference: the object
// must outlive the reader.
class JsonReader {
 public:
  // Throws FormatError "<what> must be a JSON object, got <type>" when `object` is not an object.
  JsonReader(const nlohmann::json& object, std::string where, std::string_view what);
  JsonReader(const nlohmann::json& object, std::string where) : JsonReader(object, where, where) {}

  const std::string& where() const { return where_; }

  // Rejects keys outside `known`: a misspelt field is an error, not silently ignored.
  void expect_only(std::initializer_list<std::string_view> known) const;

  bool has(std::string_view key) const { return object_.find(key) != object_.end(); }
  const nlohmann::json& field(std::string_view key) const;  // throws "missing field 'key'"

  int64_t integer(std::string_view key) const;
  int32_t int32(std::string_view key) const;  // "field 'key' = v is out of range" past int32
  std::string string(std::string_view key) const;
  bool boolean(std::string_view key) const;
  // A finite number, integer or float: "field 'key' = v must be finite" otherwise.
  double number(std::string_view key) const;
  // A finite number >= 0 (an error figure, a fitted coefficient).
  double non_negative(std::string_view key) const;
  // An array of exactly out.size() finite numbers >= 0 (fitted coefficients), read into `out`.
  void non_negative_numbers(std::string_view key, std::span<double> out) const;
  const nlohmann::json& array(std::string_view key) const;
  std::vector<int64_t> int_list(std::string_view key) const;
  std::vector<int32_t> id_list(std::string_view key) const;

  // Parses an enum name; the registry's UnknownNameError message becomes a FormatError naming the field.
  template <typename Parse>
  auto name(std::string_view key, Parse parse) const {
    const std::string text = string(key);
    try {
      return parse(text);
    } catch (const UnknownNameError& e) {
      throw FormatError(where_ + ": field '" + std::string(key) + "': " + e.what());
    }
  }

  [[noreturn]] void wrong_type(std::string_view key, std::string_view expected,
                               const nlohmann::json& got) const;

 private:
  int64_t to_int64(const nlohmann::json& j, std::string_view key) const;

  const nlohmann::json& object_;
  std::string where_;
};

// Parses a whole JSON document; FormatError "<source>: invalid JSON at byte N: <why>" when it is not.
nlohmann::json parse_json_document(std::string_view text, std::string_view source);
// Throws FormatError "key '<k>' is given twice in one object (at byte N)" for a key an object holds
// twice: JSON leaves it open and nlohmann keeps the last, so an edit that adds a field beside the one
// it meant to change was read silently. The callback of nlohmann::json::parse for mutwo's own formats
// (traces, schedules); a profiler trace of a million events is parsed without it.
nlohmann::json::parser_callback_t unique_keys_callback();

}  // namespace mutwo::support

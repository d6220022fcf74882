#include "support/json_reader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace mutwo::support {

using Json = nlohmann::json;

std::string json_type_name(const Json& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "float";
  return j.type_name();
}

JsonReader::JsonReader(const Json& object, std::string where, std::string_view what)
    : object_(object), where_(std::move(where)) {
  if (!object_.is_object())
    throw FormatError(fmt::format("{} must be a JSON object, got {}", what, json_type_name(object_)));
}

void JsonReader::expect_only(std::initializer_list<std::string_view> known) const {
  for (const auto& item : object_.items()) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || item.key() == k;
    if (!ok) throw FormatError(fmt::format("{}: unknown field '{}'", where_, item.key()));
  }
}

const Json& JsonReader::field(std::string_view key) const {
  auto it = object_.find(key);
  if (it == object_.end()) throw FormatError(fmt::format("{}: missing field '{}'", where_, key));
  return *it;
}

void JsonReader::wrong_type(std::string_view key, std::string_view expected, const Json& got) const {
  throw FormatError(
      fmt::format("{}: field '{}' must be {}, got {}", where_, key, expected, json_type_name(got)));
}

int64_t JsonReader::integer(std::string_view key) const {
  return to_int64(field(key), key);
}

int32_t JsonReader::int32(std::string_view key) const {
  const int64_t v = integer(key);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    throw FormatError(fmt::format("{}: field '{}' = {} is out of range", where_, key, v));
  }
  return static_cast<int32_t>(v);
}

std::string JsonReader::string(std::string_view key) const {
  const Json& j = field(key);
  if (!j.is_string()) wrong_type(key, "a string", j);
  return j.get<std::string>();
}

bool JsonReader::boolean(std::string_view key) const {
  const Json& j = field(key);
  if (!j.is_boolean()) wrong_type(key, "a boolean", j);
  return j.get<bool>();
}

double JsonReader::number(std::string_view key) const {
  const Json& j = field(key);
  if (!j.is_number()) wrong_type(key, "number", j);
  const double v = j.get<double>();
  if (!std::isfinite(v)) throw FormatError(fmt::format("{}: field '{}' = {} must be finite", where_, key, v));
  return v;
}

double JsonReader::non_negative(std::string_view key) const {
  const Json& j = field(key);
  if (!j.is_number()) wrong_type(key, "number", j);
  const double v = j.get<double>();
  if (!(v >= 0) || !std::isfinite(v)) {
    throw FormatError(fmt::format("{}: field '{}' = {} must be a finite number >= 0", where_, key, v));
  }
  return v;
}

void JsonReader::non_negative_numbers(std::string_view key, std::span<double> out) const {
  const Json& a = array(key);
  if (a.size() != out.size()) {
    throw FormatError(
        fmt::format("{}: field '{}' has {} numbers, expected {}", where_, key, a.size(), out.size()));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!a[i].is_number()) wrong_type(key, "array of numbers", a[i]);
    out[i] = a[i].get<double>();
    if (!(out[i] >= 0) || !std::isfinite(out[i])) {
      throw FormatError(
          fmt::format("{}: field '{}'[{}] = {} must be a finite number >= 0", where_, key, i, out[i]));
    }
  }
}

const Json& JsonReader::array(std::string_view key) const {
  const Json& j = field(key);
  if (!j.is_array()) wrong_type(key, "an array", j);
  return j;
}

std::vector<int64_t> JsonReader::int_list(std::string_view key) const {
  const Json& j = field(key);
  if (!j.is_array()) wrong_type(key, "an array of integers", j);
  std::vector<int64_t> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_integer()) {
      throw FormatError(fmt::format("{}: field '{}' must be an array of integers, element {} is {}", where_,
                                    key, i, json_type_name(j[i])));
    }
    out.push_back(to_int64(j[i], key));
  }
  return out;
}

std::vector<int32_t> JsonReader::id_list(std::string_view key) const {
  std::vector<int32_t> out;
  for (int64_t v : int_list(key)) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      throw FormatError(fmt::format("{}: field '{}' holds id {}, out of range", where_, key, v));
    }
    out.push_back(static_cast<int32_t>(v));
  }
  return out;
}

int64_t JsonReader::to_int64(const Json& j, std::string_view key) const {
  if (!j.is_number_integer()) wrong_type(key, "an integer", j);
  if (j.is_number_unsigned()) {
    const auto u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw FormatError(fmt::format("{}: field '{}' = {} does not fit in int64", where_, key, u));
    }
    return static_cast<int64_t>(u);
  }
  return j.get<int64_t>();
}

nlohmann::json::parser_callback_t unique_keys_callback() {
  // One set of keys per open object, innermost last.
  auto open = std::make_shared<std::vector<std::set<std::string>>>();
  return [open](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open->emplace_back();
    } else if (event == Event::object_end) {
      if (!open->empty()) open->pop_back();
    } else if (event == Event::key && !open->empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open->back().insert(key).second)
        throw FormatError(fmt::format("key '{}' is given twice in one object: give each key once", key));
    }
    return true;
  };
}

nlohmann::json parse_json_document(std::string_view text, std::string_view source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(fmt::format("{}: invalid JSON at byte {}: {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // a number past double's range (out_of_range 406)
    throw FormatError(fmt::format("{}: invalid JSON: {}", source, e.what()));
  }
}

}  // namespace mutwo::support

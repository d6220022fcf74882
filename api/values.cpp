#include "api/values.hpp"

#include "support/error.hpp"

namespace mutwo::api {

ir::Precision precision_value(const std::string& value) {
  try {
    return ir::parse_precision(value);
  } catch (const UnknownNameError&) {
    throw UnknownNameError("--precision '" + value +
                           "': unknown precision; valid: " + std::string(ir::precision_names()));
  }
}

}  // namespace mutwo::api

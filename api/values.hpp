#pragma once
// Request values as users give them (flags, keyword arguments), parsed with messages that name the
// option and the value: one wording for the CLI and the Python module.
#include <string>

#include "ir/precision.hpp"

namespace mutwo::api {

// "fp32", "tf32", "amp-fp16", ...; throws UnknownNameError "--precision 'x': unknown precision;
// valid: ...".
ir::Precision precision_value(const std::string& value);

}  // namespace mutwo::api

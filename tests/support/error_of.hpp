#pragma once
// The message of the mutwo::Error a call throws, or "(no error)": tests compare whole messages.
#include <string>

#include "support/error.hpp"

namespace mutwo::test {

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const mutwo::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace mutwo::test

#pragma once
// Shared by the fuzz targets: the input as text, and the rule every target checks. A reader of
// outside input may throw mutwo::Error (a clear message naming the field) and nothing else; any
// other exception, crash, leak, hang or sanitizer report is a bug (libFuzzer reports it).
#include <cstddef>
#include <cstdint>
#include <string>

#include "support/error.hpp"

namespace mutwo::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `read`; an Error is the expected way to refuse bad input.
template <class F>
void refuse_only_with_errors(F&& read) {
  try {
    read();
  } catch (const mutwo::Error&) {
  }
}

}  // namespace mutwo::fuzz

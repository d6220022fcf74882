// libFuzzer target: a PyTorch execution trace import (io/execution_trace.hpp), typed ops included.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_input.hpp"
#include "io/execution_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json doc = nlohmann::json::parse(mutwo::fuzz::text_of(data, size), nullptr, false);
  if (doc.is_discarded() || !mutwo::io::is_execution_trace_document(doc)) return 0;
  mutwo::fuzz::refuse_only_with_errors([&] { mutwo::io::import_execution_trace(doc, "fuzz.json"); });
  return 0;
}

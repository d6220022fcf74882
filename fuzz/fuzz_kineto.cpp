// libFuzzer target: a PyTorch profiler (Kineto / Chrome-trace) JSON import (io/kineto_trace.hpp),
// plain or gzip-compressed as torch.profiler commonly stores it (the bytes decoded as a file's are,
// support/text_file.hpp: a corrupt stream must be a FormatError).
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_input.hpp"
#include "io/kineto_trace.hpp"
#include "support/text_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors([&] {
    const std::string text = mutwo::support::text_of_bytes(mutwo::fuzz::text_of(data, size), "fuzz.json.gz");
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !mutwo::io::is_kineto_document(doc)) return;
    mutwo::io::import_kineto_trace(doc, "fuzz.json");
  });
  return 0;
}

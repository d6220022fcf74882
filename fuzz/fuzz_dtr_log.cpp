// libFuzzer target: a DTR operator log (io/dtr_log.hpp), parsed and turned into a trace.
#include "fuzz/fuzz_input.hpp"
#include "io/dtr_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = mutwo::fuzz::text_of(data, size);
  mutwo::fuzz::refuse_only_with_errors([&] {
    const mutwo::io::DtrLog log = mutwo::io::parse_dtr_log(text, "fuzz.log");
    mutwo::io::dtr_log_to_trace(log, "fuzz.log");
  });
  return 0;
}

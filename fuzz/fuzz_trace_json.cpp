// libFuzzer target: a mutwo trace file (io/trace_file.hpp), graph validation included.
#include "fuzz/fuzz_input.hpp"
#include "io/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors([&] { mutwo::io::trace_from_json(mutwo::fuzz::text_of(data, size)); });
  return 0;
}

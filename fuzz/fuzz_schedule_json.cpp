// libFuzzer target: a schedule file (io/schedule_json.hpp), its graph and instruction checks.
#include "fuzz/fuzz_input.hpp"
#include "io/schedule_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors([&] { mutwo::io::schedule_from_json(mutwo::fuzz::text_of(data, size)); });
  return 0;
}

// libFuzzer target: a device description (costmodel/device_file.hpp), as --gpu reads a file.
#include "costmodel/device_file.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors(
      [&] { (void)mutwo::costmodel::parse_device_toml(mutwo::fuzz::text_of(data, size), "fuzz.toml"); });
  return 0;
}

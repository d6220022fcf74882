// libFuzzer target: a wave model file (costmodel/wave_model.hpp), parsed and used to price a kernel.
#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_model.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors([&] {
    const mutwo::costmodel::WaveModel model =
        mutwo::costmodel::parse_wave_model(mutwo::fuzz::text_of(data, size), "fuzz.json");
    const mutwo::costmodel::DeviceSpec device = mutwo::costmodel::find_device("a100-40gb");
    mutwo::costmodel::KernelSample sample;
    sample.m = 1024;
    sample.n = 1024;
    sample.k = 1024;
    sample.flops = 2.0 * 1024 * 1024 * 1024;
    sample.bytes = 3.0 * 4 * 1024 * 1024;
    const auto kernel =
        mutwo::costmodel::wave_kernel("gemm", mutwo::ir::KindCategory::matmul, "", "fp32", sample, device);
    if (const auto* group = model.group_for(kernel.group, device))
      (void)mutwo::costmodel::predict_wave_ns(*group, kernel, device, model.clock_ratio(device));
  });
  return 0;
}

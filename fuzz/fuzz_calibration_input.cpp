// libFuzzer target: measured kernel times in any format `mutwo calibrate` reads by content (the
// calibration CSV, DeepBench's and NeuSight's CSVs, a profiler trace), then prepared for the wave
// model's fit (costmodel/calibration_csv.hpp, neusight_csv.hpp, wave_fit.hpp).
#include "costmodel/calibration_csv.hpp"
#include "costmodel/wave_fit.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors([&] {
    auto rows =
        mutwo::costmodel::parse_calibration_input(mutwo::fuzz::text_of(data, size), "fuzz.csv", "a100-40gb");
    (void)mutwo::costmodel::prepare_wave_rows(std::move(rows));
  });
  return 0;
}

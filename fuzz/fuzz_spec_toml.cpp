// libFuzzer target: an experiment spec (experiments/spec.hpp), parsed and checked as `mutwo
// experiment` checks it before anything runs: by its kind, its size, and each configuration once.
#include "experiments/runner.hpp"
#include "experiments/spec.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors([&] {
    const mutwo::experiments::ExperimentSpec spec =
        mutwo::experiments::parse_spec(mutwo::fuzz::text_of(data, size), "fuzz.toml", ".");
    mutwo::experiments::validate_experiment(spec);
  });
  return 0;
}

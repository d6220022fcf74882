// libFuzzer target: the published throughput CSV and the sequence length histogram its binned rows
// name (experiments/published_csv.hpp, padded_lengths.hpp); a histogram that parses is batched as
// LDDL batches it and as a loader without bins would.
#include "experiments/padded_lengths.hpp"
#include "experiments/published_csv.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = mutwo::fuzz::text_of(data, size);
  mutwo::fuzz::refuse_only_with_errors([&] { (void)mutwo::experiments::parse_published_csv(text, "fuzz.csv"); });
  mutwo::fuzz::refuse_only_with_errors([&] {
    const mutwo::experiments::LengthHistogram h = mutwo::experiments::parse_length_histogram(text, "fuzz.csv");
    (void)mutwo::experiments::padded_lengths(h, {32, 64, 8});
    (void)mutwo::experiments::padded_lengths(h, {3, h.longest_tokens(), 1});
  });
  return 0;
}

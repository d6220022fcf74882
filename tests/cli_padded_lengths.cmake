# CLI tests of `mutwo simulate --length-histogram` (api/simulate.hpp, experiments/padded_lengths.hpp),
# included by tests/CMakeLists.txt inside its `if(TARGET mutwo)` block, where mutwo_cli_test is defined.
# Batches padded to their longest sequence (api/simulate.hpp): tiny_lengths.csv in bins of 8 tokens,
# aligned to 4, batches of 2 pads to 4, 8, 12 and 16 tokens (tests/test_padded_lengths.cpp: shares 1/16,
# 3/16, 1/12, 2/3, mean 13.4 tokens); the report's figures are the 16-token batch's.
mutwo_cli_test(simulate_padded_lengths
               ARGS simulate --model bert-mini --batch 2 --seq-len 16 --length-histogram published/tiny_lengths.csv
                    --length-bin-tokens 8 --length-align-tokens 4 --host-mode none
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} "STDOUT_REGEX=padded lengths +4 lengths, mean 13.4 tokens: published/tiny_lengths.csv in bins of 8 tokens, aligned to 4.*mean step +[0-9.]+ [mu]s over the padded lengths [(]the figures above are the longest batch's, 16 tokens[)].*mean throughput +[0-9.]+ samples/s")
mutwo_cli_test(simulate_padded_lengths_json
               ARGS simulate --model bert-mini --batch 2 --seq-len 16 --length-histogram published/tiny_lengths.csv
                    --length-bin-tokens 8 --length-align-tokens 4 --json
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} "JSON_CHECKS=padded_lengths|steps|0|tokens=4\;padded_lengths|steps|1|tokens=8\;padded_lengths|steps|3|tokens=16\;padded_lengths|bin_tokens=8\;schedule|samples_per_step=2")
mutwo_cli_test(simulate_padded_lengths_too_long
               ARGS simulate --model bert-mini --seq-len 12 --length-histogram published/tiny_lengths.csv
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} EXPECT_RC=1 "STDERR_REGEX=^error: --length-histogram 'published/tiny_lengths.csv' holds sequences of 16 tokens, more than --seq-len 12")
mutwo_cli_test(simulate_padded_lengths_vision
               ARGS simulate --model resnet-mini --length-histogram published/tiny_lengths.csv
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} EXPECT_RC=1 "STDERR_REGEX=^error: --length-histogram: model 'resnet-mini' takes no sequence length")
# The histogram's loader settings without a histogram were read by nothing.
mutwo_cli_test(simulate_bin_tokens_needs_histogram ARGS simulate --model bert-mini --batch 2 --length-bin-tokens 32
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--length-bin-tokens requires --length-histogram")

# CLI tests of the precision modes (ir/precision.hpp, transforms/autocast.hpp), included by
# tests/CMakeLists.txt inside its `if(TARGET mutwo)` block, where mutwo_cli_test is defined.
# Hand-derived counts, bytes and the step-time ordering are in test_precision.cpp.

mutwo_cli_test(precision_help ARGS simulate --help DEFINES "STDOUT_REGEX=--precision.*amp-fp16")
mutwo_cli_test(simulate_precision_amp_bf16 ARGS simulate --model bert-base --precision amp-bf16
               DEFINES "STDOUT_REGEX=bert-base.*a100-40gb.*step time +[0-9.]+ ms")
mutwo_cli_test(simulate_precision_unknown ARGS simulate --model bert-base --precision fp8
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: --precision 'fp8': unknown precision. valid: fp32, tf32, amp-fp16, amp-bf16, bf16")
# torch.autocast(dtype=torch.bfloat16) raises on a GPU without bf16 (compute capability < 8.0) ...
mutwo_cli_test(simulate_precision_amp_bf16_v100 ARGS simulate --model bert-mini --gpu v100-16gb --precision amp-bf16
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: precision amp-bf16 on GPU 'v100-16gb': torch.autocast refuses")
# ... while a bf16 model runs there, its matmuls on CUDA cores.
mutwo_cli_test(simulate_precision_bf16_v100 ARGS simulate --model bert-mini --gpu v100-16gb --precision bf16
               DEFINES "STDOUT_REGEX=step time +[0-9.]+")
# --precision with a model built in another dtype is refused, naming both.
mutwo_cli_test(simulate_precision_needs_fp32_model ARGS simulate --model bert-mini --dtype bf16 --precision amp-fp16
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: model 'bert-mini': precision amp-fp16 trains an fp32 model. dtype is bf16")
# The trace records the mode; search takes it too.
mutwo_cli_test(trace_precision_amp_fp16 ARGS trace --model bert-mini --precision amp-fp16 -o bert-mini-amp.json
               DEFINES "STDOUT_REGEX=^bert-mini: [0-9]+ ops, .* -> bert-mini-amp\\.json")
mutwo_cli_test(search_precision_tf32 ARGS search --model resnet-mini:2 --precision tf32 --policies none --top 1
               DEFINES "STDOUT_REGEX=hfta")

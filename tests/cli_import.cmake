# CLI tests of the trace importers (issue 6): `mutwo replay --dtr-log` (simrd's protocol on DTR's
# own logs) and `mutwo simulate --trace` on mutwo traces, DTR logs and PyTorch profiler traces.
# Included by tests/CMakeLists.txt inside its `if(TARGET mutwo)` block.
set(dtr ${MUTWO_TEST_FIXTURES}/dtr)
set(kineto ${MUTWO_TEST_FIXTURES}/kineto)
set(resnet32 ${dtr}/resnet32-56-9000000000.0-2020-10-1-13-3-30-default.log.gz)
set(unet ${dtr}/unet-6-8000000000.0-2020-10-1-10-57-18-default.log.gz)

# simrd's answers (tests/fixtures/dtr/simrd_results.json): ResNet-32, DTR at 0.2 of the 9.37 GiB
# baseline peak: overhead 1.37108; at 0.1 the remat limit is exceeded.
mutwo_cli_test(replay_resnet32_dtr ARGS replay --dtr-log ${resnet32} --budget-ratio 0.1,0.2
               DEFINES "STDOUT_REGEX=baseline +peak 9\\.37 GiB \\(10061179152 B\\), compute 291\\.905 ms.*dtr +0\\.10 .* remat limit exceeded .*dtr +0\\.20 +1\\.87 GiB +1\\.3711 ")
# U-Net, every heuristic at 0.5 and 0.4 as JSON Lines: LargestStorage fits at 0.5 with overhead
# 1.65908 and runs out of memory at 0.4; budget = int(8415764640 x 0.5).
mutwo_cli_test(replay_unet_json ARGS replay --dtr-log ${unet} --heuristic all --budget-ratio 0.5,0.4 --json
               DEFINES "STDOUT_REGEX=\"heuristic\":\"dtr\",\"ratio\":0\\.5,\"budget_bytes\":4207882320,\"outcome\":\"ok\",\"overhead\":1\\.1587.*\"heuristic\":\"largest\",\"ratio\":0\\.5,\"budget_bytes\":4207882320,\"outcome\":\"ok\",\"overhead\":1\\.6590.*\"heuristic\":\"largest\",\"ratio\":0\\.4,\"budget_bytes\":3366305856,\"outcome\":\"OOM\",\"overhead\":null")
mutwo_cli_test(replay_unknown_heuristic ARGS replay --dtr-log ${unet} --heuristic belady
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: unknown DTR heuristic 'belady'. valid: dtr, dtr-eqclass, dtr-local, msps, lru, largest")
mutwo_cli_test(replay_kineto_refused ARGS replay --dtr-log ${kineto}/mi250_minitoy_train.json.gz
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: .*mi250_minitoy_train\\.json\\.gz: is a PyTorch profiler trace .*, not a DTR operator log")
mutwo_cli_test(replay_missing_file ARGS replay --dtr-log no-such.log
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: cannot open 'no-such\\.log' for reading")

# simulate --trace without --model replays the trace itself at its measured durations: U-Net's step
# is the sum of its logged TIMEs, 435,278,292 ns.
mutwo_cli_test(simulate_trace_dtr ARGS simulate --trace ${unet} --json
               DEFINES "JSON_CHECKS=cost_source=measured\;prediction|step_time_ns=435278292\;prediction|instructions_total=759"
                       "STDERR_REGEX=warning: .*46 view outputs share their base's storage")
# The V100 trace names its GPU: the catalog's v100-32gb is simulated; 1056 ops of ProfilerStep#105.
mutwo_cli_test(simulate_trace_kineto ARGS simulate --trace ${kineto}/v100_training_rank0.pt.trace.json.gz --json
               DEFINES "JSON_CHECKS=device|name=v100-32gb\;prediction|instructions_total=2112\;prediction|oom="
                       "STDERR_REGEX=imported ProfilerStep#105")
# A trace alone is simulated as it ran: a model array's settings are refused (they went unread).
mutwo_cli_test(simulate_trace_array_flag ARGS simulate --trace ${MUTWO_TEST_FIXTURES}/traces/tiny_relu_measured.json --batch 4
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: simulate: --batch sets a model array [(]--model[)]. a --trace alone is simulated as it ran\n$")
mutwo_cli_test(simulate_trace_mutwo ARGS simulate --trace ${MUTWO_TEST_FIXTURES}/traces/tiny_relu_measured.json --format mutwo --json
               DEFINES "JSON_CHECKS=cost_source=measured\;prediction|oom=")
mutwo_cli_test(simulate_trace_wrong_format ARGS simulate --trace ${kineto}/mi250_minitoy_train.json.gz --format dtr
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: .*mi250_minitoy_train\\.json\\.gz: is a PyTorch profiler trace .*, not a DTR operator log .* \\(--format dtr\\)")
mutwo_cli_test(simulate_trace_not_a_trace ARGS simulate --trace ${dtr}/README.md
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: .*README\\.md: not a trace mutwo reads. expected a mutwo trace .*, a PyTorch profiler trace .* or a DTR operator log")
mutwo_cli_test(simulate_two_traces_no_model ARGS simulate --trace ${unet} --trace ${resnet32}
               DEFINES EXPECT_RC=1 "STDERR_REGEX=a single --trace is simulated itself [(]or an execution trace followed by the profiler trace of the same step[)]. with several, give --model or --schedule")

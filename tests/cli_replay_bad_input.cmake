# Input `mutwo replay` (DTR logs) and `mutwo replay-trace` (profiler traces) must refuse with the field
# and value, a non-zero exit and no output, found by an audit on 2026-11-30. Included by
# tests/cli_replay_trace.cmake. The small logs and traces are tests/fixtures/replay_bad; each bad trace
# is trace_ok.json with one field changed.
set(bad ${MUTWO_TEST_FIXTURES}/replay_bad)
set(resnet32 ${MUTWO_TEST_FIXTURES}/dtr/resnet32-56-9000000000.0-2020-10-1-13-3-30-default.log.gz)

# Flags: NaN passed CLI11's Range (and read as no limit), -1 jobs passed unchecked.
mutwo_cli_test(replay_overhead_limit_nan ARGS replay --dtr-log ${resnet32} --overhead-limit nan
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--overhead-limit: 'nan' must be a finite number in \\[1, 100\\]")
# A limit past 100 is refused: a thrashing run replays until it, and 1e9 had not ended after 100 s.
mutwo_cli_test(replay_overhead_limit_past_max ARGS replay --dtr-log ${resnet32} --overhead-limit 1e9
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--overhead-limit: '1e9' must be a finite number in \\[1, 100\\]")
mutwo_cli_test(replay_jobs_negative ARGS replay --dtr-log ${resnet32} --jobs -1
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--jobs: '-1' must be a whole number >= 0")
mutwo_cli_test(replay_budget_ratio_inf ARGS replay --dtr-log ${resnet32} --budget-ratio inf
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--budget-ratio: 'inf' must be a finite number > 0")
# Each ratio and heuristic once: one given twice was replayed twice and printed twice.
mutwo_cli_test(replay_budget_ratio_twice ARGS replay --dtr-log ${resnet32} --budget-ratio 0.5,0.5
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: budget ratio 0\\.5 is given twice. give each ratio once\n$")
mutwo_cli_test(replay_heuristic_twice ARGS replay --dtr-log ${resnet32} --heuristic dtr,lru,dtr
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: heuristic 'dtr' is given twice. give each heuristic once\n$")
# "all" with others was refused as an unknown heuristic 'all', which it is not.
mutwo_cli_test(replay_heuristic_all_and_more ARGS replay --dtr-log ${resnet32} --heuristic all,lru
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --heuristic all names every heuristic. give it alone, not with all, lru\n$")
# int(10061179152 x 1e9) is past int64: it printed budget_bytes -9223372036854775808 and OOM.
mutwo_cli_test(replay_budget_past_int64 ARGS replay --dtr-log ${resnet32} --budget-ratio 0.5,1e9 --json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: budget ratio 1e\\+09 x the baseline peak 10061179152 B of log resnet32-[^ ]+ = 1\\.006e\\+19 B, past the 9223372036854775807 B a budget may be \\(a ratio up to 9\\.167e\\+08 fits\\)\n$")
# Logs that give a sweep nothing to measure: only START, every TIME 0, every MEMORY 0. One op of TIME 0
# among others is ordinary (dtr_ok.log).
mutwo_cli_test(replay_log_start_only ARGS replay --dtr-log ${bad}/dtr_start_only.log
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: log dtr_start_only.log: no CALL, MUTATE or CONSTANT after START \\(line 1\\): nothing to replay\n$")
mutwo_cli_test(replay_log_zero_time ARGS replay --dtr-log ${bad}/dtr_zero_time.log --json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: log dtr_zero_time.log: no compute after START \\(line 1\\): every CALL's and MUTATE's TIME is 0 \\(2 CALL, 0 MUTATE\\)")
mutwo_cli_test(replay_log_zero_memory ARGS replay --dtr-log ${bad}/dtr_zero_memory.log
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: log dtr_zero_memory.log: baseline peak memory is 0 bytes \\(every MEMORY after START \\(line 1\\) is 0\\)")
mutwo_cli_test(replay_log_one_zero_time_op ARGS replay --dtr-log ${bad}/dtr_ok.log --budget-ratio 1 --json
               DEFINES "JSON_CHECKS=outcome=ok\;baseline_peak_bytes=500\;baseline_compute_ns=10")
mutwo_cli_test(replay_log_time_out_of_range ARGS replay --dtr-log ${bad}/dtr_time_out_of_range.log
               DEFINES EXPECT_RC=1
               "STDERR_REGEX=^error: dtr_time_out_of_range.log:4: CALL field 'TIME' = \"99999999999999999999\" is out of range")

# Traces: the same small step, accepted as it is and with its kernel 2 us before its launch began
# (clock skew), refused with each inconsistency.
mutwo_cli_test(replay_trace_small_ok ARGS replay-trace ${bad}/trace_ok.json --json
               DEFINES "JSON_CHECKS=replay|profiled_step_ns=100000\;replay|device_work=2")
mutwo_cli_test(replay_trace_small_skew ARGS replay-trace ${bad}/trace_skew_ok.json --json
               DEFINES "JSON_CHECKS=replay|profiled_step_ns=100000\;replay|device_work=2")
mutwo_cli_test(replay_trace_kernel_before_launch ARGS replay-trace ${bad}/trace_kernel_before_launch.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_kernel_before_launch.json: event 4 \\('k2'\\): field 'ts' = -5 us, 1025 us before its launch \\(event 3 'cudaLaunchKernel', correlation 2\\) began at 1020 us")
mutwo_cli_test(replay_trace_kernel_correlation_dup ARGS replay-trace ${bad}/trace_kernel_correlation_dup.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_kernel_correlation_dup.json: event 4 \\('k2'\\): field 'args.correlation' = 1 is also event 2's \\('k1'\\): its launch \\(event 1 'cudaLaunchKernel', correlation 1\\) starts one kernel")
mutwo_cli_test(replay_trace_call_correlation_dup ARGS replay-trace ${bad}/trace_call_correlation_dup.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_call_correlation_dup.json: event 3 \\('cudaLaunchKernel'\\): field 'args.correlation' = 1 is also event 1's \\('cudaLaunchKernel'\\)")
mutwo_cli_test(replay_trace_stream_string ARGS replay-trace ${bad}/trace_stream_string.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_stream_string.json: event 2 \\('k1'\\): field 'args.stream' = \"x\", expected a stream id")
mutwo_cli_test(replay_trace_step_zero ARGS replay-trace ${bad}/trace_step_zero.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_step_zero.json: event 0 \\('ProfilerStep#1'\\): field 'dur' = 0 us: a ProfilerStep of no length")
# A step number twice replayed whichever came last; overlapping steps counted work twice; a step with
# nothing in it replayed 0 ns against 0 ns, "+0.0 %".
mutwo_cli_test(replay_trace_step_twice ARGS replay-trace ${bad}/trace_step_twice.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_step_twice.json: events 0 and 1 are both 'ProfilerStep#1': each ProfilerStep once")
mutwo_cli_test(replay_trace_step_overlap ARGS replay-trace ${bad}/trace_step_overlap.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_step_overlap.json: event 1 \\('ProfilerStep#2'\\) starts before event 0 \\('ProfilerStep#1'\\) ends on its thread")
mutwo_cli_test(replay_trace_step_empty ARGS replay-trace ${bad}/trace_step_empty.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_step_empty.json: the replayed window 'ProfilerStep#1' holds no CUDA runtime calls and no device work")
# An 86000 s kernel inside a 100 us step printed the step +86 billion % long: the device sync after
# it returned 27 us after it began.
mutwo_cli_test(replay_trace_kernel_past_sync ARGS replay-trace ${bad}/trace_kernel_day.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: trace_kernel_day.json: event 2 \\('k1'\\): ends at 86000001016 us \\('ts' \\+ 'dur'\\), 85999999959 us after the device sync \\(event 5 'cudaDeviceSynchronize', correlation 3\\) that waited for it returned at 1057 us")

# Input a researcher can type that the commands must refuse with the field and value, before any
# work or output: each case was found by an audit of the CLI on 2026-11-30.

# A search enumerates its partitions into memory: p(128) = 4.4e9 cannot be held, so it is refused
# before any graph is built; the partition flags narrow it (8 into at most 2 parts: 8, 7+1, 6+2,
# 5+3, 4+4; parts of 3 to 5: 5+3, 4+4).
mutwo_cli_test(search_too_many_partitions ARGS search --model bert-mini:128 --policies none
               DEFINES EXPECT_RC=1
               "STDERR_REGEX=^error: search: the array bert-mini:128 has 4351078600 sub-array partitions under the partition options, more than the 100000")
mutwo_cli_test(search_max_sub_arrays ARGS search --model bert-mini:8 --policies none --max-sub-arrays 2
               DEFINES "STDOUT_REGEX=searched 5 partitions x 1 policies")
mutwo_cli_test(search_min_max_width ARGS search --model bert-mini:8 --policies none --min-width 3 --max-width 5
               DEFINES "STDOUT_REGEX=searched 2 partitions x 1 policies")

# CLI11's PositiveNumber let NaN through (NaN <= 0 is false): a NaN bandwidth read as "not given".
mutwo_cli_test(simulate_nan_bandwidth ARGS simulate --model bert-mini --h2d-gbps nan
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--h2d-gbps: must be a positive finite number, got 'nan'")
mutwo_cli_test(simulate_batch_zero_message ARGS simulate --model bert-mini --batch 0
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--batch: must be a positive finite number, got '0'")
# A model trains in a floating-point type; bool and the integer types are tensors' (masks, indices).
mutwo_cli_test(simulate_bool_dtype ARGS simulate --model bert-mini --dtype bool
               DEFINES EXPECT_RC=1
               "STDERR_REGEX=^error: model 'bert-mini': dtype bool is not a floating-point type a model trains in")
mutwo_cli_test(search_int32_dtype ARGS search --model bert-mini:2 --dtype int32 --policies none
               DEFINES EXPECT_RC=1 "STDERR_REGEX=dtype int32 is not a floating-point type")
# trace's width as simulate's and search's: 1 to 1024 (a million models wrote 2.8 GB first).
mutwo_cli_test(trace_width_over_1024 ARGS trace --model bert-mini --models 1025 -o wide.json
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--models: Value 1025 not in range 1 to 1024")

# Every output is checked before the work: a --timeline into a missing folder used to fail after
# the schedule was saved, the same file for both kept only the second, and --strict's out-of-memory
# failure overwrote the schedule.
mutwo_cli_test(simulate_output_missing_dir
               ARGS simulate --model bert-mini --save-schedule early.json --timeline no-such-dir/t.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=early.json
               "STDERR_REGEX=^error: cannot write --timeline 'no-such-dir/t.json': no directory 'no-such-dir'")
mutwo_cli_test(simulate_outputs_same_file ARGS simulate --model bert-mini --save-schedule same.json --timeline ./same.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=same.json
               "STDERR_REGEX=^error: --save-schedule and --timeline are the same file './same.json'")
mutwo_cli_test(simulate_strict_oom_writes_nothing
               ARGS simulate --model bert-mini --memory 100KiB --strict --save-schedule oom.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=oom.json "STDOUT_REGEX=OOM +out of memory at t=0")
mutwo_cli_test(search_output_is_device ARGS search --model bert-mini:2 --policies none -o /dev/null
               DEFINES EXPECT_RC=1
               "STDERR_REGEX=^error: cannot write --output '/dev/null': /dev/null is a device, pipe or socket, not a regular file")
# A device never ends: refused unread (trace --check /dev/zero read until memory ran out).
mutwo_cli_test(trace_check_device ARGS trace --check /dev/zero
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: cannot read trace file '/dev/zero': it is a device or socket, not a file")

# A flag that would change nothing without its companion is refused rather than ignored.
mutwo_cli_test(simulate_order_needs_policy ARGS simulate --model bert-mini --order back-to-back
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--order requires --policy")
mutwo_cli_test(simulate_optimizer_on_needs_offload ARGS simulate --model bert-mini --optimizer-on host
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--optimizer-on requires --state-offload")
mutwo_cli_test(search_schemes_need_server ARGS search --model bert-mini:2 --schemes dp
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--schemes requires --server")

# An empty flag value ("" fell back to the default) is refused: python/tests/test_api.py, which can
# pass an empty argument (this file's ARGS cannot).

# trace --check reads gzip as simulate --trace does (tiny_relu_measured.json.gz: `gzip -n` of
# tiny_relu_measured.json); it used to fail with a JSON error at byte 1.
mutwo_cli_test(trace_check_gzip ARGS trace --check ${MUTWO_TEST_FIXTURES}/traces/tiny_relu_measured.json.gz
               DEFINES "STDOUT_REGEX=valid")
mutwo_cli_test(simulate_gpu_is_device ARGS simulate --model bert-mini --gpu /dev/null
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: cannot read device file '/dev/null': not a regular file")

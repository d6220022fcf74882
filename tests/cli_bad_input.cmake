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
mutwo_cli_test(search_jobs_negative ARGS search --model bert-mini:2 --jobs -1
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--jobs: Value -1 not in range 0 to 4096")

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

# A list flag names each item once (as experiment specs do): a policy, scheme or micro-batch count
# given twice was searched twice and its rows printed twice.
mutwo_cli_test(search_policy_twice ARGS search --model bert-mini:2 --policies none,capuchin,none
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: search: policy 'none' is given twice. give each policy once\n$")
mutwo_cli_test(search_server_scheme_twice
               ARGS search --server 4x-gtx1080ti --model gpt2-mini --schemes harmony-pp,harmony-pp
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: server search: scheme 'harmony-pp' is given twice. give each scheme once\n$")
mutwo_cli_test(search_server_micro_batches_twice
               ARGS search --server 4x-gtx1080ti --model gpt2-mini --micro-batches 2,4,2
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: server search: micro-batch count 2 is given twice. give each count once\n$")

# An empty flag value ("" fell back to the default) is refused: python/tests/test_api.py, which can
# pass an empty argument (this file's ARGS cannot).

# trace --check reads gzip as simulate --trace does (tiny_relu_measured.json.gz: `gzip -n` of
# tiny_relu_measured.json); it used to fail with a JSON error at byte 1.
mutwo_cli_test(trace_check_gzip ARGS trace --check ${MUTWO_TEST_FIXTURES}/traces/tiny_relu_measured.json.gz
               DEFINES "STDOUT_REGEX=valid")
mutwo_cli_test(simulate_gpu_is_device ARGS simulate --model bert-mini --gpu /dev/null
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: cannot read device file '/dev/null': not a regular file")

# The executor commands (`run`, `profile`, `bench-ops`, `bench-host`), audited on 2026-11-30. Flags
# refused as they are parsed: steps and launches are bounded (--iters 1000000000 ran for days),
# --seed is a whole number of 64 bits (-1 wrapped to 2^64 - 1, 2^64 saturated to it: both silently
# seed 18446744073709551615), --top lists at least one op (0 and -1 listed none and exited 0), and
# --gpu without --db, which stores the predictions it names, changed nothing.
mutwo_cli_test(run_iters_bounded ARGS run --model resnet-mini --iters 1000000000
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--iters: Value 1000000000 not in range 1 to 10000")
mutwo_cli_test(profile_warmup_bounded ARGS profile --model resnet-mini --warmup 1001 -o bad-warmup.measured.json
               DEFINES EXPECT_RC=2 ABSENT_FILE=bad-warmup.measured.json
               "STDERR_REGEX=--warmup: Value 1001 not in range 0 to 1000")
mutwo_cli_test(bench_ops_iters_bounded ARGS bench-ops --quick --iters 1001 -o bad-iters.csv
               DEFINES EXPECT_RC=2 ABSENT_FILE=bad-iters.csv "STDERR_REGEX=--iters: Value 1001 not in range 1 to 1000")
mutwo_cli_test(bench_host_warmup_bounded ARGS bench-host --warmup 1000000000
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--warmup: Value 1000000000 not in range 0 to 1000")
mutwo_cli_test(run_seed_negative ARGS run --model resnet-mini --seed -1
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--seed: '-1' must be a whole number from 0 to 18446744073709551615")
mutwo_cli_test(profile_seed_past_64_bits ARGS profile --model resnet-mini --seed 18446744073709551616 -o bad-seed.json
               DEFINES EXPECT_RC=2 ABSENT_FILE=bad-seed.json
               "STDERR_REGEX=--seed: '18446744073709551616' must be a whole number from 0 to 18446744073709551615")
mutwo_cli_test(profile_top_zero ARGS profile --model resnet-mini --top 0 -o bad-top.json
               DEFINES EXPECT_RC=2 ABSENT_FILE=bad-top.json "STDERR_REGEX=--top: must be a positive finite number, got '0'")
mutwo_cli_test(profile_gpu_needs_db ARGS profile --model resnet-mini --gpu h300 -o bad-gpu.json
               DEFINES EXPECT_RC=2 ABSENT_FILE=bad-gpu.json "STDERR_REGEX=--gpu requires --db")
# An integer flag is decimal digits that fit 64 bits (cli/main.cpp): CLI11's base-0 reading took -k 010
# as 8 and 0x10 as 16, and saturated past 64 bits silently.
mutwo_cli_test(simulate_models_leading_zero ARGS simulate --model bert-mini --models 010
               DEFINES "STDOUT_REGEX=schedule +bert-mini x10 ")
mutwo_cli_test(simulate_models_hex ARGS simulate --model bert-mini --models 0x10
               DEFINES EXPECT_RC=2
               "STDERR_REGEX=--models: '0x10' must be a whole number from -9223372036854775808 to 9223372036854775807")
mutwo_cli_test(bench_host_size_past_64_bits ARGS bench-host --sizes 4096,99999999999999999999
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--sizes: '99999999999999999999' must be a whole number from")

if(TARGET mutwo_exec)
  # A device index past int: std::stoi's out_of_range surfaced as "internal: stoi"; "cuda:" named none.
  mutwo_cli_test(run_device_index_overflow ARGS run --model resnet-mini --device cuda:99999999999999999999 --no-db
                 DEFINES EXPECT_RC=1
                 "STDERR_REGEX=^error: device 'cuda:99999999999999999999': expected cuda:N with N a device index\n$")
  mutwo_cli_test(bench_host_device_no_index ARGS bench-host --device cuda:
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: device 'cuda:': expected cuda:N with N a device index\n$")
  # A cap of 0 bytes read as no cap: the run went ahead uncapped and exited 0.
  mutwo_cli_test(run_memory_cap_zero ARGS run --model resnet-mini --device cpu --memory-cap 0GiB --no-db
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --memory-cap 0GiB: caps the device at 0 bytes")
  mutwo_cli_test(run_memory_cap_bad_size ARGS run --model resnet-mini --device cpu --memory-cap 1e30GiB --no-db
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --memory-cap: invalid memory size '1e30GiB'")
  # Without sub-arrays the graph's width is the step's model count: 3 over ops of one model ran and
  # reported two models that never trained (loss 0) and 6 samples a step. The error names the file, as
  # a JSON error does.
  mutwo_cli_test(run_schedule_graph_width
                 ARGS run --schedule ${MUTWO_TEST_FIXTURES}/schedules/graph_width_3.schedule.json --no-db
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: [^ ]*/graph_width_3.schedule.json: graph 'tiny-relu': field 'width' = 3, but its ops train 1 model")
  # A batch of 0 is unknown (imported traces): no throughput, where the table printed 0.0/s.
  mutwo_cli_test(run_schedule_batch_unknown
                 ARGS run --schedule ${MUTWO_TEST_FIXTURES}/schedules/tiny_relu_batch_0.schedule.json --no-db --iters 1
                      --warmup 0 --cost-source analytic
                 DEFINES "STDOUT_REGEX=0 samples per step.*\nsamples +- +-\n")
  # Each precision once: fp32,fp32 timed every shape twice and wrote each row twice (2 quick relu
  # shapes: 2 rows).
  mutwo_cli_test(bench_ops_precision_twice
                 ARGS bench-ops --device cpu --quick --kernels relu --precision fp32,fp32 -o bench-twice.csv
                 DEFINES "STDOUT_REGEX=relu +fp32 +2 .*wrote bench-twice.csv [(]2 rows")
  # A fit of latency and bandwidth needs two distinct sizes: refused before any copy is timed (it
  # failed after timing them all), a size given twice too (it weighed twice in the fit).
  mutwo_cli_test(bench_host_one_size ARGS bench-host --device cpu --sizes 4096 -o bad-one-size.json
                 DEFINES EXPECT_RC=1 ABSENT_FILE=bad-one-size.json "STDOUT_REGEX=^$"
                 "STDERR_REGEX=^error: bench-host: one size [(]4096 B[)] fits no latency and bandwidth. give two or more\n$")
  # The output is checked before anything is timed: a folder that is missing failed after the grid.
  mutwo_cli_test(bench_ops_output_missing_dir
                 ARGS bench-ops --device cpu --quick --kernels relu -o no-such-dir/rows.csv
                 DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
                 "STDERR_REGEX=^error: cannot write --output 'no-such-dir/rows.csv': no directory 'no-such-dir'\n$")
  mutwo_cli_test(bench_host_output_is_dir ARGS bench-host --device cpu -o .
                 DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$" "STDERR_REGEX=^error: cannot write --output '[.]': . is a directory")
  mutwo_cli_test(bench_host_size_twice ARGS bench-host --device cpu --sizes 8192,4096,8192
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: bench-host: size 8192 B is given twice\n$")
endif()

# CLI11 drops a comma list's empty items: "--sizes , -o f" read no size and took "-o" as the list,
# "2,,2" read as 2,2. Refused before CLI11 parses, naming the flag.
mutwo_cli_test(bench_host_sizes_only_comma ARGS bench-host --device cpu --sizes , -o link.json
               DEFINES EXPECT_RC=2 ABSENT_FILE=link.json
               "STDERR_REGEX=^--sizes: ',' lists an empty item: give values separated by single commas")
mutwo_cli_test(simulate_partition_empty_item ARGS simulate --model bert-mini --models 4 --partition=2,,2
               DEFINES EXPECT_RC=2 "STDERR_REGEX=^--partition: '2,,2' lists an empty item")
# A step past 2^63 ns (a link of 1e-12 GB/s moving the model state, 100 times) was refused as an
# internal "event at -9207496073625932980 ns is before now".
mutwo_cli_test(simulate_time_past_int64
               ARGS simulate --model resnet-mini --batch 8 --state-offload --d2h-gbps 1e-12 --iterations 100
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: the simulated time passes 2\\^63 ns [(]292 years[)]: [0-9]+ ns [+] [0-9]+ ns. an op or a transfer is too slow to simulate")
# tiny_relu_width5.json: tiny_relu.json with its graph's width 5, one model's ops: --check printed it
# valid ("width 5 model(s)"), which simulate --trace then refused.
mutwo_cli_test(trace_check_width ARGS trace --check ${MUTWO_TEST_FIXTURES}/traces/tiny_relu_width5.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$" "STDERR_REGEX=field 'width' = 5, but its ops train 1 model\n$")
# The smallest limit a failed search names was the smallest of the plans it made: at 0.4 MiB the
# state-offload plans were pruned unplanned and it said 1.8 MiB, though 0.48 MiB fits. Their bound is
# named too.
mutwo_cli_test(search_smallest_limit_pruned ARGS search -m mobilenetv2-mini:4 --batch 2 --memory 0.4MiB
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: no plan fits in 409\\.6 KiB. the smallest limit any plan met is 1\\.8 MiB, and plans with state offload pruned unplanned need at least 415\\.5 KiB [(]try a limit from there[)]\n$")
# bert_mini_op_per_stream.json.gz: `mutwo trace -m bert-mini --batch 2` with hand-set op_duration_ns, device
# a100-40gb added and each op on a stream of its own (op_streams). A tensor read on more than three
# streams besides the compute stream was refused as "emit_plan: ... read on more than 3 streams".
mutwo_cli_test(simulate_trace_op_per_stream_planned
               ARGS simulate --trace ${MUTWO_TEST_FIXTURES}/traces/bert_mini_op_per_stream.json.gz --policy vdnn --memory 1MiB
               DEFINES "STDOUT_REGEX=step time +1\\.033 ms")
# Outputs naming an exported model file or a device file the command reads are refused
# (tests/outputs_over_inputs.sh).
add_test(NAME cli_outputs_over_inputs
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/outputs_over_inputs.sh $<TARGET_FILE:mutwo> ${MUTWO_CLI_OUT}/outputs-over-inputs
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

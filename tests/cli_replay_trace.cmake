# CLI tests of `mutwo replay-trace` (issue 34): every real profiler trace of tests/fixtures/kineto
# replayed at the CUDA-runtime level (sim/runtime_replay.hpp) against its profiled step, with the
# what-ifs. Included by tests/CMakeLists.txt inside its `if(TARGET mutwo)` block. The figures are the
# replay's on these traces; the profiled steps are the traces' own ProfilerStep lengths.
set(kineto ${MUTWO_TEST_FIXTURES}/kineto)

# A100, a host waiting on CUDA events: 3.154 ms profiled and replayed; with no host time the step
# is its GPU work and the syncs' waits (53.016 us), captured in a CUDA graph 1 us more (the
# catalog's 500 ns a node, for the two nodes that follow other work on their stream); the spin
# kernel 2x faster saves 18 us.
mutwo_cli_test(replay_trace_event_sync ARGS replay-trace ${kineto}/a100_event_sync.json.gz --json
               DEFINES "JSON_CHECKS=replay|window=ProfilerStep#100\;replay|device=NVIDIA A100-PG509-200\;replay|profiled_step_ns=3154000\;replay|replayed_step_ns=3154000\;replay|breakdown|host_blocked_ns=46192\;replay|what_ifs|0|step_ns=53016\;replay|what_ifs|1|what_if=CUDA graph\;replay|what_ifs|1|step_ns=54016\;replay|what_ifs|2|step_ns=3136000")
# Three streams joined by event record/wait, no ProfilerStep: one window, the wait from the trace's
# cuda_sync records.
mutwo_cli_test(replay_trace_multi_stream ARGS replay-trace ${kineto}/a100_event_sync_multi_stream.json.gz --json
               DEFINES "JSON_CHECKS=replay|window=whole trace\;replay|annotated=OFF\;replay|profiled_step_ns=19896864\;replay|replayed_step_ns=19896864\;replay|breakdown|recorded_waits=1")
mutwo_cli_test(replay_trace_unannotated_table ARGS replay-trace ${kineto}/a100_event_sync_multi_stream.json.gz
               DEFINES "STDOUT_REGEX=whole trace \\(the trace has no ProfilerStep annotation: replayed as one window\\)")
# A100 distributed training, NCCL on a second stream: every step exact; host-bound (39.7 ms with no
# host time, 40.3 ms as a CUDA graph), so neither faster kernels nor collectives without their wait
# move it.
mutwo_cli_test(replay_trace_a100_nccl ARGS replay-trace ${kineto}/a100_nccl_training.json.gz --json
               DEFINES "JSON_CHECKS=replay|profiled_step_ns=224936243\;replay|replayed_step_ns=224936243\;steps|0|replayed_ns=222442191\;steps|1|replayed_ns=219726905\;replay|breakdown|collective_ns=22587443\;replay|breakdown|collective_wait_ns=14124262\;replay|what_ifs|0|step_ns=39698782\;replay|what_ifs|1|step_ns=40324282\;replay|what_ifs|3|what_if=collectives without their wait")
# V100, NCCL overlapping compute on a second stream (the op-level replay of `simulate --trace` puts
# it 26 % long): the runtime replay gives the profiled 336.328 ms, its cross-stream waits inferred
# from timing (the trace has no cuda_sync events).
mutwo_cli_test(replay_trace_v100_nccl ARGS replay-trace ${kineto}/v100_nccl_training.json.gz --json
               DEFINES "JSON_CHECKS=replay|profiled_step_ns=336328000\;replay|replayed_step_ns=336328000\;replay|breakdown|inferred_waits=1886\;replay|breakdown|collective_ns=119069000\;replay|what_ifs|0|step_ns=246524000")
# V100 whose launches wait for a full launch queue: 63.7 ms of each step, as the trace shows;
# replayed 95.552 ms of 95.699 (-0.15 %), every step within 1 %.
mutwo_cli_test(replay_trace_v100_queue ARGS replay-trace ${kineto}/v100_training_rank0.pt.trace.json.gz --step all
               DEFINES "STDOUT_REGEX=replayed step +95.552 ms \\(-0.2 % of the profiled\\).*ProfilerStep#102 +72.077 ms +71.442 ms +-0.9 %.*5 steps: replayed vs profiled, mean -0.3 %")
mutwo_cli_test(replay_trace_v100_queue_json ARGS replay-trace ${kineto}/v100_training_rank0.pt.trace.json.gz --json
               DEFINES "JSON_CHECKS=replay|replayed_step_ns=95551709\;replay|breakdown|queue_held_ns=63701260")
# MI250 (ROCm): exact; with no host time the step is its 149.042 us of GPU work.
mutwo_cli_test(replay_trace_mi250 ARGS replay-trace ${kineto}/mi250_minitoy_train.json.gz --step 1 --json
               DEFINES "JSON_CHECKS=replay|window=ProfilerStep#1\;replay|replayed_step_ns=9288291\;replay|what_ifs|0|step_ns=149042")
# A sampled trace (events dropped): -0.001 %.
mutwo_cli_test(replay_trace_sampled ARGS replay-trace ${kineto}/sampled_training_rank0.json.gz --json
               DEFINES "JSON_CHECKS=replay|profiled_step_ns=622928000\;replay|replayed_step_ns=622921992")
# Errors: a step the trace lacks, a step that is no number, a file that is no trace.
mutwo_cli_test(replay_trace_no_such_step ARGS replay-trace ${kineto}/mi250_minitoy_train.json.gz --step 9
               DEFINES EXPECT_RC=1 "STDERR_REGEX=mi250_minitoy_train.json.gz: no ProfilerStep#9. the trace holds steps 1, 2")
mutwo_cli_test(replay_trace_bad_step ARGS replay-trace ${kineto}/mi250_minitoy_train.json.gz --step last
               DEFINES EXPECT_RC=1 "STDERR_REGEX=--step: 'last' is not a step number or 'all'")
mutwo_cli_test(replay_trace_not_a_trace ARGS replay-trace ${MUTWO_TEST_FIXTURES}/kineto/README.md
               DEFINES EXPECT_RC=1 "STDERR_REGEX=README.md: invalid JSON at byte 1")
# The timeline of a what-if, and one that is not there.
mutwo_cli_test(replay_trace_timeline ARGS replay-trace ${kineto}/a100_event_sync.json.gz --timeline ${MUTWO_CLI_OUT}/replay-timeline.json --timeline-what-if "kernels 2x faster"
               DEFINES "STDOUT_REGEX=replayed step +3.154 ms")
mutwo_cli_test(replay_trace_timeline_unknown ARGS replay-trace ${kineto}/a100_event_sync.json.gz --timeline ${MUTWO_CLI_OUT}/replay-timeline-x.json --timeline-what-if nope
               DEFINES EXPECT_RC=1 "STDERR_REGEX=--timeline-what-if: unknown what-if 'nope'. valid: replay, host infinitely fast, CUDA graph, kernels 2x faster")
# The work moved to another GPU (costmodel/kernel_transfer.hpp). The V100 trace has no shapes, so
# its kernels are wave scaled from their launches (2,160 under one wave, 2,190 scaled by the HBM
# bandwidths) and its copies by the host links; moved to its own GPU it replays unchanged
# (95.552 ms). Its launch queue holds most of the step, so an A100 saves 7.2 %, an H100 11.6 %.
mutwo_cli_test(replay_trace_other_gpu ARGS replay-trace ${kineto}/v100_training_rank0.pt.trace.json.gz --json --what-if-gpu a100-40gb --what-if-gpu h100-sxm-80gb --what-if-gpu v100-32gb
               DEFINES "JSON_CHECKS=replay|what_ifs|3|what_if=on a100-40gb (waves)\;replay|what_ifs|3|step_ns=88663654\;replay|what_ifs|4|step_ns=84458111\;replay|what_ifs|5|step_ns=95551709\;replay|moved_to_gpus|0|rules|1|work=2160\;replay|moved_to_gpus|0|rules|2|work=2190\;replay|moved_to_gpus|0|rules|3|work=1745")
# A trace whose shaped ops are priced (428 kernels) needs the GPU it ran on: named with --trace-gpu
# when its deviceProperties do not say, refused naming the flag otherwise.
mutwo_cli_test(replay_trace_other_gpu_priced ARGS replay-trace ${kineto}/sampled_training_rank0.json.gz --what-if-gpu h100-sxm-80gb --trace-gpu a100-40gb --what-if-source analytic
               DEFINES "STDOUT_REGEX=on h100-sxm-80gb \\(analytic\\).*moved to another GPU: 428 priced")
mutwo_cli_test(replay_trace_other_gpu_unknown_origin ARGS replay-trace ${kineto}/sampled_training_rank0.json.gz --what-if-gpu h100-sxm-80gb
               DEFINES EXPECT_RC=1 "STDERR_REGEX=--what-if-gpu: the trace's GPU '\\(none named\\)' is not a catalog device. name the GPU it ran on with --trace-gpu")
mutwo_cli_test(replay_trace_other_gpu_unknown_gpu ARGS replay-trace ${kineto}/a100_event_sync.json.gz --what-if-gpu a200
               DEFINES EXPECT_RC=1 "STDERR_REGEX=unknown device 'a200'")
# A GPU named twice (here once by its device file) was replayed and printed twice.
mutwo_cli_test(replay_trace_other_gpu_twice ARGS replay-trace ${kineto}/a100_event_sync.json.gz --what-if-gpu h100-sxm-80gb
                    --what-if-gpu ${CMAKE_SOURCE_DIR}/costmodel/devices/h100-sxm-80gb.toml
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: --what-if-gpu '[^']*/costmodel/devices/h100-sxm-80gb.toml' is the GPU 'h100-sxm-80gb', given already as 'h100-sxm-80gb'. give each GPU once\n$")
# Bad logs, traces and flags of `replay` and `replay-trace`, refused naming the field and value.
include(${CMAKE_CURRENT_LIST_DIR}/cli_replay_bad_input.cmake)
# Settings of outputs not asked for were read by nothing.
mutwo_cli_test(replay_trace_timeline_what_if_needs_timeline
               ARGS replay-trace ${kineto}/a100_event_sync.json.gz --timeline-what-if "host infinitely fast"
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--timeline-what-if requires --timeline")
mutwo_cli_test(replay_trace_what_if_source_needs_gpu
               ARGS replay-trace ${kineto}/a100_event_sync.json.gz --what-if-source analytic
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--what-if-source requires --what-if-gpu")

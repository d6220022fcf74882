# End-to-end tests of the `measured` cost source: `simulate` / `search` with --cost-source measured
# and --trace FILE. Included by tests/CMakeLists.txt (mutwo_cli_test, MUTWO_CLI_OUT, MUTWO_TEST_FIXTURES).
#
# Run as a script (cmake -DIN=in.json -DOUT=out.json -DDEVICE=name -DDURATION_NS=n -P cli_measured.cmake),
# this file instead turns a trace written by `mutwo trace` into a measured one: every op measured
# DURATION_NS, on DEVICE. It stands in for `mutwo profile`, which needs LibTorch and a GPU.
if(CMAKE_SCRIPT_MODE_FILE)
  file(READ ${IN} json)
  string(JSON ops LENGTH "${json}" graph ops)
  string(REPEAT "${DURATION_NS}," ${ops} durations)
  string(REGEX REPLACE ",$" "" durations "${durations}")
  string(JSON json SET "${json}" op_duration_ns "[${durations}]")
  string(JSON json SET "${json}" device "\"${DEVICE}\"")
  file(WRITE ${OUT} "${json}")
  return()
endif()

function(mutwo_measured_trace name in out device duration_ns)
  add_test(NAME cli_${name}
           COMMAND ${CMAKE_COMMAND} -DIN=${in} -DOUT=${out} "-DDEVICE=${device}" -DDURATION_NS=${duration_ns}
                   -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
           WORKING_DIRECTORY ${MUTWO_CLI_OUT})
endfunction()

# A trace as `mutwo trace` writes it has no durations: the measured source refuses it by name.
set(r18 --model|resnet18|--batch|2|--image-size|32)
mutwo_cli_test(measured_trace_plain ARGS trace ${r18} -o measured-r18-plain.json
               PROPERTIES FIXTURES_SETUP cli_measured_plain)
mutwo_cli_test(measured_refuses_trace_without_durations
               ARGS simulate ${r18} --cost-source measured --trace measured-r18-plain.json
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: measured-r18-plain.json: trace 'resnet18': field 'op_duration_ns' is empty"
               PROPERTIES FIXTURES_REQUIRED cli_measured_plain)
mutwo_cli_test(measured_needs_a_trace ARGS simulate ${r18} --cost-source measured
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: cost source 'measured' needs at least one measured trace [(]--trace FILE[)]")
mutwo_cli_test(measured_trace_needs_measured_source
               ARGS simulate ${r18} --trace ${MUTWO_TEST_FIXTURES}/traces/tiny_relu_measured.json
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: --trace is read only by --cost-source measured. cost source 'waves' ignores it")
# Each file once: a trace given twice (here by a second path) weighed its durations twice in the
# medians; a profile given twice is one profile.
mutwo_cli_test(measured_trace_twice
               ARGS simulate ${r18} --cost-source measured --trace ${MUTWO_TEST_FIXTURES}/traces/tiny_relu_measured.json
                    --trace ${MUTWO_TEST_FIXTURES}/../fixtures/traces/tiny_relu_measured.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
                       "STDERR_REGEX=^error: --trace '[^']*/[.][.]/fixtures/traces/tiny_relu_measured.json' is given already as '[^']*/fixtures/traces/tiny_relu_measured.json'. give each file once\n$")
mutwo_cli_test(calibrated_profile_twice
               ARGS simulate ${r18} --cost-source calibrated --profile ${CMAKE_SOURCE_DIR}/costmodel/profiles/t4.json
                    --profile ${CMAKE_SOURCE_DIR}/costmodel/profiles/t4.json
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$"
                       "STDERR_REGEX=^error: --profile '[^']*/costmodel/profiles/t4.json' is given already as '[^']*/costmodel/profiles/t4.json'. give each file once\n$")
mutwo_cli_test(measured_missing_trace_file ARGS simulate ${r18} --cost-source measured --trace nowhere.json
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: cannot open trace file 'nowhere.json'")
mutwo_cli_test(measured_help ARGS simulate --help DEFINES "STDOUT_REGEX=--cost-source.*measured.*--trace")
mutwo_cli_test(measured_search_help ARGS search --help DEFINES "STDOUT_REGEX=--cost-source.*--trace")

# The tiny relu measured 2,500 ns on "NVIDIA H100 80GB HBM3": one compute, no copies -> 2,500 ns,
# on the device the trace names (h100-sxm-80gb) unless --gpu is given. The measured GPU time alone
# (--host-mode none): these traces measured no host side. One iteration: a later one would start
# with the next batch's upload (10 us of host-link latency against this 2.5 us step).
set(tiny simulate|--schedule|traces/tiny_relu.schedule.json|--cost-source|measured|--trace|traces/tiny_relu_measured.json|--host-mode|none|--iterations|1)
mutwo_cli_test(measured_tiny_report ARGS ${tiny}
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES}
                       "STDOUT_REGEX=device +h100-sxm-80gb [(]NVIDIA H100-SXM5-80GB[)].*cost source +measured [(]1 of 1 ops from 1 trace on NVIDIA H100 80GB HBM3[)].*step time +2.500 us")
mutwo_cli_test(measured_tiny_json ARGS ${tiny} --json
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES}
                       "JSON_CHECKS=device|name=h100-sxm-80gb\;cost_source=measured\;cost_source_detail=measured (1 of 1 ops from 1 trace on NVIDIA H100 80GB HBM3)\;prediction|step_time_ns=2500")
mutwo_cli_test(measured_tiny_gpu_flag_wins ARGS ${tiny} --gpu v100-16gb --json
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES}
                       "JSON_CHECKS=device|name=v100-16gb\;prediction|step_time_ns=2500")

# resnet18 (batch 2, 32 px, Adam): a 202-op training step, every op measured 1,000 ns on an H100.
# The plain schedule runs the ops one after another on one compute stream, no swaps:
# 202 x 1,000 = 202,000 ns; two sub-arrays of one model each ("s0/", "s1/" names): 404,000 ns.
# simulate reports the steady state (iteration 3 of 3), which starts with its batch's upload on the
# compute stream (sim/iterations.hpp): x, 2 x 3 x 32 x 32 fp32 = 24,576 B over the H100's 50 GB/s
# link, 10,000 + 492 ns, and the labels, 2 x int64 = 16 B, 10,000 + 1 ns: + 20,493 ns per model.
mutwo_measured_trace(measured_trace_h100 measured-r18-plain.json measured-r18-h100.json "NVIDIA H100 80GB HBM3" 1000)
set_tests_properties(cli_measured_trace_h100 PROPERTIES FIXTURES_REQUIRED cli_measured_plain
                                                        FIXTURES_SETUP cli_measured_h100)
mutwo_cli_test(measured_resnet18_report ARGS simulate ${r18} --cost-source measured --trace measured-r18-h100.json --host-mode none
               DEFINES "STDOUT_REGEX=device +h100-sxm-80gb .*cost source +measured [(]202 of 202 ops from 1 trace on NVIDIA H100 80GB HBM3[)].*step time +222.493 us"
               PROPERTIES FIXTURES_REQUIRED cli_measured_h100)
mutwo_cli_test(measured_resnet18_json ARGS simulate ${r18} --cost-source measured --trace measured-r18-h100.json --json --host-mode none
               DEFINES "JSON_CHECKS=device|name=h100-sxm-80gb\;device|memory_bytes=85899345920\;prediction|step_time_ns=222493\;prediction|first_step_ns=202000\;prediction|bytes_swapped_out=0"
               PROPERTIES FIXTURES_REQUIRED cli_measured_h100)
mutwo_cli_test(measured_resnet18_two_sub_arrays
               ARGS simulate ${r18} --models 2 --partition 1,1 --cost-source measured --trace measured-r18-h100.json --json
                    --host-mode none
               DEFINES "JSON_CHECKS=cost_source_detail=measured (404 of 404 ops from 1 trace on NVIDIA H100 80GB HBM3)\;prediction|step_time_ns=444986"
               PROPERTIES FIXTURES_REQUIRED cli_measured_h100)
# Fused width 2 is another kernel: none of its ops was measured, all fall back to analytic.
mutwo_cli_test(measured_resnet18_fused_falls_back
               ARGS simulate ${r18} --models 2 --cost-source measured --trace measured-r18-h100.json
               DEFINES "STDOUT_REGEX=cost source +measured [(]0 of 202 ops from 1 trace on NVIDIA H100 80GB HBM3. rest analytic[)]"
               PROPERTIES FIXTURES_REQUIRED cli_measured_h100)
# search: the sequential baseline runs the two single models one after another, 2 x 202,000 ns.
mutwo_cli_test(measured_search ARGS search --model resnet18:2 --batch 2 --image-size 32 --policies none
                                      --cost-source measured --trace measured-r18-h100.json --host-mode none
               DEFINES "STDOUT_REGEX=2 x resnet18 on h100-sxm-80gb.*sequential +resnet18:1[+]1 +none +2 +404.000 us"
               PROPERTIES FIXTURES_REQUIRED cli_measured_h100)

# A trace measured on the CPU says nothing of a GPU's memory or link: --gpu's default stays
# (202 x 3,000 ns + the batch's upload over the A100's 25 GB/s: 10,000 + 984 ns, 10,000 + 1 ns).
mutwo_measured_trace(measured_trace_cpu measured-r18-plain.json measured-r18-cpu.json cpu 3000)
set_tests_properties(cli_measured_trace_cpu PROPERTIES FIXTURES_REQUIRED cli_measured_plain
                                                       FIXTURES_SETUP cli_measured_cpu)
mutwo_cli_test(measured_cpu_trace_keeps_default_gpu
               ARGS simulate ${r18} --cost-source measured --trace measured-r18-cpu.json --json --host-mode none
               DEFINES "JSON_CHECKS=device|name=a100-40gb\;prediction|step_time_ns=626985"
               PROPERTIES FIXTURES_REQUIRED cli_measured_cpu)
mutwo_cli_test(measured_refuses_mixed_devices
               ARGS simulate ${r18} --cost-source measured --trace measured-r18-h100.json --trace measured-r18-cpu.json
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: --trace files measured on different devices: measured-r18-h100.json on 'NVIDIA H100 80GB HBM3', measured-r18-cpu.json on 'cpu'")
set_tests_properties(cli_measured_refuses_mixed_devices PROPERTIES FIXTURES_REQUIRED "cli_measured_h100;cli_measured_cpu")

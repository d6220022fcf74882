# CLI tests of `mutwo bench-ops` (the calibration CSV of single ATen kernels), included by
# tests/CMakeLists.txt inside its `if(TARGET mutwo)` block. They run on the CPU: the rows' device is
# "cpu", which the reader reads and `mutwo calibrate` refuses to fit. Without LibTorch the command
# exists and refuses with how to build it.
mutwo_cli_test(bench_ops_help ARGS bench-ops --help
               DEFINES "STDOUT_REGEX=--device.*--kernels.*--precision.*--gpu.*--quick.*--warmup.*--iters.*--output")
# Names are checked before the executor is loaded, so these hold with or without LibTorch.
mutwo_cli_test(bench_ops_unknown_kernel ARGS bench-ops --kernels gemm,matmul -o bench-bad.csv
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: unknown kernel 'matmul'. valid: gemm, conv2d_forward, conv2d_backward_data, conv2d_backward_filter, relu, gelu, add, softmax, layernorm, batchnorm2d, conv [(]the three conv2d passes[)], all\n$")
mutwo_cli_test(bench_ops_unknown_precision ARGS bench-ops --precision fp8 -o bench-bad.csv
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: unknown precision 'fp8'. valid: fp32, tf32, fp16, bf16\n$")
mutwo_cli_test(bench_ops_needs_output ARGS bench-ops --quick DEFINES EXPECT_RC=2 "STDERR_REGEX=--output is required")
if(NOT TARGET mutwo_exec)
  mutwo_cli_test(bench_ops_without_torch ARGS bench-ops --quick -o bench-quick.csv DEFINES EXPECT_RC=1
                 "STDERR_REGEX=^error: 'mutwo bench-ops' needs the LibTorch executor")
  return()
endif()

# Every kernel at its --quick shapes (2 each, the convolutions 3 with a depthwise one, batchnorm2d 1:
# 22 rows at fp32, the CPU's only precision); the note that CPU timings do not calibrate a GPU comes
# first, the summary table last.
mutwo_cli_test(bench_ops_cpu_quick ARGS bench-ops --device cpu --quick -o bench-quick.csv
               DEFINES "STDOUT_REGEX=^timing on the cpu [(]cpu[)]: the rows' device is 'cpu'. CPU timings do not calibrate a GPU.*gemm +fp32 +2 .*conv2d_backward_filter +fp32 +3 .*batchnorm2d +fp32 +1 .*wrote bench-quick.csv [(]22 rows of device 'cpu'[)]"
               PROPERTIES FIXTURES_SETUP cli_bench_quick)
add_test(NAME cli_bench_ops_csv_rows
         COMMAND ${CMAKE_COMMAND} -DCSV=${MUTWO_CLI_OUT}/bench-quick.csv -DDEVICE=cpu -DMIN_ROWS=22
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_bench_csv.cmake)
set_tests_properties(cli_bench_ops_csv_rows PROPERTIES FIXTURES_REQUIRED cli_bench_quick)
# The calibration reader reads every row (a bad field would fail with FILE:LINE: field ...), then the
# fit refuses the host CPU's rows.
mutwo_cli_test(bench_ops_calibrate_refuses_cpu ARGS calibrate bench-quick.csv -o bench-cpu.json
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: calibrate: rows of device 'cpu' time the host CPU [(]mutwo bench-ops on a CPU[)]: they do not calibrate a GPU"
               PROPERTIES FIXTURES_REQUIRED cli_bench_quick)
mutwo_cli_test(bench_ops_fp16_on_cpu ARGS bench-ops --device cpu --kernels gemm --precision fp32,fp16 --quick -o bench-bad.csv
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: bench-ops: precision 'fp16' does not run on device 'cpu' [(]cpu[)]. it runs: fp32\n$")
mutwo_cli_test(bench_ops_gpu_on_cpu ARGS bench-ops --device cpu --gpu v100-16gb --quick -o bench-bad.csv
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: bench-ops: --gpu v100-16gb names a CUDA device's catalog entry")
# --kernels conv is the three passes; --warmup 0 is allowed.
mutwo_cli_test(bench_ops_conv_group ARGS bench-ops --device cpu --kernels conv --quick --warmup 0 --iters 2 -o bench-conv.csv
               DEFINES "STDOUT_REGEX=timing conv2d_forward, conv2d_backward_data, conv2d_backward_filter on cpu.*0 warm-up [+] 2 timed.*wrote bench-conv.csv [(]9 rows")
if(NOT MUTWO_WITH_CUDA)
  mutwo_cli_test(bench_ops_cuda_in_cpu_build ARGS bench-ops --device cuda --quick -o bench-bad.csv
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: device 'cuda' needs mutwo built against a LibTorch with CUDA")
endif()

# CLI tests of `mutwo bench-host` (the host link and dispatch), included by tests/CMakeLists.txt inside
# its `if(TARGET mutwo)` block. On the CPU the "link" is a host memcpy: the command runs end to end,
# fits a latency and a bandwidth per way and writes its JSON; the figures are the CPU's.
mutwo_cli_test(bench_host_help ARGS bench-host --help DEFINES "STDOUT_REGEX=--device.*--sizes.*--warmup.*--iters.*--output")
if(NOT TARGET mutwo_exec)
  mutwo_cli_test(bench_host_without_torch ARGS bench-host --device cpu DEFINES EXPECT_RC=1
                 "STDERR_REGEX=^error: 'mutwo bench-host' needs the LibTorch executor")
  return()
endif()
mutwo_cli_test(bench_host_cpu ARGS bench-host --device cpu --sizes 4096,1048576,4194304 --iters 3 -o bench-host.json
               DEFINES "STDOUT_REGEX=^timing the host link of cpu [(]cpu[)], 3 warm-up [+] 3 timed copies each.*4[.]0 MiB +both.*fit: h2d [0-9.]+ GB/s [+] .* latency.*dispatch: .* host time per small op.*wrote bench-host.json. a run on this link: mutwo run [.][.][.] --h2d-gbps [0-9.]+ --d2h-gbps [0-9.]+")
mutwo_cli_test(bench_host_bad_size ARGS bench-host --device cpu --sizes 0
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: bench-host: size 0 B must be in 1 [.][.] 17179869184 B [(]16 GiB[)]\n$")

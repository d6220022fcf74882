# Executor runtime suites (LibTorch, CPU): the interpreter's residency, memory accounting and
# OOM, the executor and profiler, and the policy x partition bit-identity property.
mutwo_test(test_exec_interpreter mutwo::exec_internal mutwo::policies mutwo::sim mutwo::costmodel)
mutwo_test(test_exec_exported mutwo::exec_internal mutwo::policies)
mutwo_test(test_exec_policies mutwo::exec_internal mutwo::policies mutwo::sim)
# Each GPU's part of a server plan run alone (issue 21, item 5).
mutwo_test(test_exec_server_parts mutwo::exec_internal mutwo::policies mutwo::sim mutwo::costmodel)
# `mutwo bench-ops`' kernel timings on the CPU.
mutwo_test(test_exec_bench_ops mutwo::exec_internal)
mutwo_test(test_exec_bench_host mutwo::exec_internal mutwo::costmodel)
# The CUDA suite is compiled in every LibTorch build (so it cannot rot) and run only where the CUDA
# path is built: scripts/device-check.sh runs it on a lent GPU.
add_executable(test_exec_cuda test_exec_cuda.cpp)
target_link_libraries(test_exec_cuda PRIVATE mutwo_test_main mutwo::exec_internal mutwo::policies mutwo::sim mutwo_warnings
                                     mutwo_glue_flags mutwo_suite_flags)
target_compile_definitions(test_exec_cuda PRIVATE MUTWO_TEST_FIXTURES="${MUTWO_TEST_FIXTURES}")
mutwo_precompile_test(test_exec_cuda ON)
if(MUTWO_WITH_CUDA)
  add_test(NAME test_exec_cuda COMMAND test_exec_cuda)
endif()

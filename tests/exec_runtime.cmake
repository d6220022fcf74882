# Executor runtime suites (LibTorch, CPU): the interpreter's residency, memory accounting and
# OOM, the executor and profiler, and the policy x partition bit-identity property.
mutwo_test(test_exec_interpreter mutwo::exec mutwo::policies mutwo::sim mutwo::costmodel)
mutwo_test(test_exec_policies mutwo::exec mutwo::policies mutwo::sim)

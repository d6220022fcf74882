# Executor suites (LibTorch), included by tests/CMakeLists.txt when the exec target exists.
# The numerics suites compare exec/ with LibTorch autograd on the CPU in double precision: an
# independent reference (high-level differentiable ATen ops, autograd, torch::optim) in a library
# of its own, so its slow LibTorch headers compile once for both suites.
add_library(mutwo_autograd_reference STATIC support/autograd_reference.cpp support/bert_adam_reference.cpp)
target_link_libraries(mutwo_autograd_reference PUBLIC mutwo::exec_internal mutwo::policies ${TORCH_LIBRARIES}
                      PRIVATE fmt::fmt mutwo_warnings mutwo_glue_flags mutwo_suite_flags)
mutwo_precompile_torch_tests(mutwo_autograd_reference)

# (a) every op kind's explicit backward against autograd, and width-2 fusion against 2 models.
mutwo_test(test_exec_kernels mutwo_autograd_reference mutwo::exec_internal mutwo::policies)
mutwo_test(test_exec_kernels_tensor_ops mutwo_autograd_reference mutwo::exec_internal mutwo::policies)
# (b) training steps of every test-scale zoo family against autograd + torch::optim, and
# (c) fused width-3 steps against 3 separate models.
mutwo_test(test_exec_families mutwo_autograd_reference mutwo::exec_internal mutwo::policies)

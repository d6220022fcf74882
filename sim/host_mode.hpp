#pragma once
// How the host issues a step's work (DESIGN.md "Simulation": the host timeline). eager: PyTorch
// eager, each op dispatched from Python or C++ and its kernels launched one by one (the device
// catalog's host figures, or a measured trace's host time per op); cuda_graph: the step captured as a
// CUDA graph and replayed (a small per-kernel cost); none: the host never limits the GPU (the step is
// GPU time alone, the engine's default, which the unit tests of GPU-side rules use).
#include <cstdint>
#include <string_view>

namespace mutwo::sim {

enum class HostMode : uint8_t { eager, cuda_graph, none };
std::string_view host_mode_name(HostMode mode);   // "eager", "cuda-graph", "none"
HostMode parse_host_mode(std::string_view name);  // throws UnknownNameError naming the valid ones

}  // namespace mutwo::sim

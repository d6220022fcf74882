#pragma once
// How the host issues a step's work (docs/ARCHITECTURE.md "Simulation": the host timeline). eager: PyTorch
// eager, each op dispatched from Python or C++ and its kernels launched one by one (the device
// catalog's host figures, or a measured trace's host time per op) by a Python training loop;
// libtorch: the same dispatch issued from C++ through LibTorch, as mutwo's executor issues a step
// (every op a C++ call: costmodel::HostIssuer::cpp); cuda_graph: the step captured as a
// CUDA graph and replayed (a small per-kernel cost); none: the host never limits the GPU (the step is
// GPU time alone, the engine's default, which the unit tests of GPU-side rules use).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mutwo::sim {

enum class HostMode : uint8_t { eager, libtorch, cuda_graph, none };
std::string_view host_mode_name(HostMode mode);   // "eager", "libtorch", "cuda-graph", "none"
HostMode parse_host_mode(std::string_view name);  // throws UnknownNameError naming the valid ones
// Every mode's name, in enum order (command-line choices).
const std::vector<std::string>& host_mode_names();

}  // namespace mutwo::sim

#pragma once
// A GPU described in a TOML file, one file per GPU with each figure's source in a comment beside it:
// the format of the built-in catalog (costmodel/devices/*.toml, compiled into the binary) and of a
// user's own GPU, given by path wherever a catalog name is (--gpu, experiment specs).
//
//   name = "a100-40gb"             # catalog key: lower-case letters, digits, '.', '_' and '-'
//   description = "NVIDIA A100-SXM4-40GB"
//   chip = "GA100"                 # optional: the die; parts of one chip are one GPU to validation
//   board_power_w = 400            # optional: the board's power limit (TDP), W, and
//   process = "TSMC N7"            #   its process (process_node.hpp): what may hold math below boost
//                                  #   (wave_kernel.hpp); without both the GPU is never power-limited
//   memory_gib = 40                # device memory in GiB (a datasheet's "40 GB" of HBM is binary)
//   sm_count = 108                 # streaming multiprocessors
//   boost_clock_mhz = 1410         # the datasheet's boost clock
//   l2_cache_mib = 40              # last-level cache, MiB (fractions allowed: 2.75); 1/64 to 2 per SM
//   fp32_tflops = 19.5             # dense peaks, TFLOP/s: FP32 on CUDA cores,
//   tf32_tflops = 156              #   TF32 tensor cores (0: none),
//   half_tflops = 312              #   FP16/BF16 (tensor cores with FP32 accumulate where the GPU has them),
//   fp64_tflops = 9.7              #   FP64
//   memory_gbps = 1555             # device memory bandwidth, GB/s
//   host_link = "PCIe 4.0 x16"     # "PCIe 3.0 x16" | "PCIe 4.0 x16" | "PCIe 5.0 x16": the pinned copy
//                                  # rate per direction of costmodel/link_rates.hpp
// Optional, for a measured host: h2d_gbps, d2h_gbps, copy_latency_us, launch_overhead_us (default:
// the catalog's 4 us per kernel), half_duplex (bool). The host's dispatch and optimizer figures are
// the host's, not the GPU's: every device takes the catalog's (device_catalog.hpp).
// Unknown keys, a missing key, a wrong type or a value out of range are refused with the file, the
// line, the key and the value; the result is then checked by validate_device.
#include <string>
#include <string_view>

#include "costmodel/device_spec.hpp"

namespace mutwo::costmodel {

// Throws FormatError naming `source` (a path, or "<builtin>/a100-40gb.toml") and the key at fault.
DeviceSpec parse_device_toml(std::string_view text, std::string_view source);
// Reads a device file; throws Error when it cannot be read, FormatError as above.
DeviceSpec read_device_file(const std::string& path);
// Whether a --gpu value names a file rather than a catalog device: it holds a '/' or ends in ".toml".
bool is_device_path(std::string_view gpu);

}  // namespace mutwo::costmodel

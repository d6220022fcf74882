#pragma once
// The GPUs mutwo knows (the built-in catalog, costmodel/devices/*.toml) and any described by a device
// file, as `mutwo.devices()` and `mutwo.device()` return them: each figure in the units its name says.
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/device_spec.hpp"

namespace mutwo::api {

// name, description, chip, memory_bytes, fp32/tf32/half/fp64_tflops, memory_gbps, sm_count,
// boost_clock_mhz, l2_bytes, board_power_w, process, host_link, h2d_gbps, d2h_gbps,
// launch_overhead_ns, host {forward_op_ns, backward_op_ns, launch_ns, graph_kernel_ns, source}.
nlohmann::ordered_json device_json(const costmodel::DeviceSpec& device);

// Every built-in GPU, in catalog order.
nlohmann::ordered_json devices_json();

// A built-in GPU by name, or the device a file describes (a path: costmodel::find_device). Throws
// UnknownNameError listing the valid names, FormatError naming the file, field and value.
nlohmann::ordered_json device_json(const std::string& name_or_path);

}  // namespace mutwo::api

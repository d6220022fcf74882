#include "api/devices.hpp"

#include "costmodel/device_catalog.hpp"

namespace mutwo::api {

nlohmann::ordered_json device_json(const costmodel::DeviceSpec& d) {
  nlohmann::ordered_json j;
  j["name"] = d.name;
  j["description"] = d.description;
  j["chip"] = d.chip;
  j["memory_bytes"] = d.memory_bytes;
  // FLOP per ns is TFLOP/s x 1000; bytes per ns is GB/s.
  j["fp32_tflops"] = d.fp32_flops_per_ns / 1000.0;
  j["tf32_tflops"] = d.tf32_flops_per_ns / 1000.0;
  j["half_tflops"] = d.half_flops_per_ns / 1000.0;
  j["fp64_tflops"] = d.fp64_flops_per_ns / 1000.0;
  j["memory_gbps"] = d.hbm_bytes_per_ns;
  j["sm_count"] = d.sm_count;
  j["boost_clock_mhz"] = d.boost_clock_mhz;
  j["l2_bytes"] = d.l2_bytes;
  j["board_power_w"] = d.board_power_w;
  j["process"] = d.process;
  j["host_link"] = d.host_link;
  j["h2d_gbps"] = d.h2d_bytes_per_ns;
  j["d2h_gbps"] = d.d2h_bytes_per_ns;
  j["launch_overhead_ns"] = d.launch_overhead_ns;
  j["host"] = {{"forward_op_ns", d.host.forward_op_ns},
               {"backward_op_ns", d.host.backward_op_ns},
               {"launch_ns", d.host.launch_ns},
               {"python_op_ns", d.host.python_op_ns},
               {"graph_kernel_ns", d.host.graph_kernel_ns},
               {"source", d.host.source}};
  return j;
}

nlohmann::ordered_json devices_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const costmodel::DeviceSpec& d : costmodel::builtin_devices().devices()) out.push_back(device_json(d));
  return out;
}

nlohmann::ordered_json device_json(const std::string& name_or_path) {
  return device_json(costmodel::find_device(name_or_path));
}

}  // namespace mutwo::api

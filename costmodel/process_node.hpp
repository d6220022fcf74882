#pragma once
// The fabrication processes of the catalog's GPUs and the energy a switching op costs on each,
// relative to TSMC 16FF+ at the same clock: what lets one fitted energy per FLOP (wave_fit.hpp) say
// which boards run out of power before their boost clock (wave_kernel.hpp, sustained_clock_ratio).
// The figures are the foundries' own iso-speed power claims for logic, chained where a process is
// compared with its predecessor; they describe a reference core, not a GPU, so they fix only the
// ratios between processes and the fit sets the scale.
#include <string>
#include <string_view>

namespace mutwo::costmodel {

struct ProcessNode {
  std::string_view name;  // as a device file's `process` names it
  double energy_vs_16ff;  // energy per op at the same clock, TSMC 16FF+ = 1
};

// nullptr for a name the table lacks.
const ProcessNode* find_process_node(std::string_view name);
std::string process_node_names();  // "TSMC 16FF+, TSMC 12FFN, ...", for errors

}  // namespace mutwo::costmodel

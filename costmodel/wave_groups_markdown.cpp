#include "costmodel/wave_groups_markdown.hpp"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/device_catalog.hpp"
#include "support/percent.hpp"

namespace mutwo::costmodel {

std::string wave_groups_markdown(const WaveRows& w, const WaveModel& model, const WaveHeldOut& h) {
  std::string out;
  out += "\n### The fitted groups\n\n";
  out += fmt::format(
      "Fitted {} on every GPU above (costmodel/models/waves.json, shipped in the binary). tile: the group's "
      "(<=: each kernel runs the quickest tile up to it, either way round); c0, d0: ns; cw: "
      "cycles "
      "per wave; cf, cq, dh: 1 / fraction of the peak or bandwidth; cb: HBM passes paid beside the math; dl: "
      "SM-cycles per byte from L2; a group "
      "measured only as eager ops takes a fixed cost of {:.0f} ns (kUnfittedFixedCostNs). In-sample error on "
      "the "
      "kernel time.\n\n",
      model.fitted_on, kUnfittedFixedCostNs);
  out += "| group | tile | kernels | GPUs | c0 | cw | cf | cq | cb | d0 | dh | dl | median | mean |\n";
  out += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const WaveGroupFit& g : model.groups) {
    const std::string fixed_c = g.fixed_cost_fitted ? fmt::format("{:.0f}", g.compute[0]) : "-";
    const std::string fixed_m = g.fixed_cost_fitted ? fmt::format("{:.0f}", g.memory[0]) : "-";
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {:.0f} | {:.3f} | {:.3f} | {:.3f} | {} | {:.3f} | {:.3f} | {} | {} |\n",
        wave_group_text(g.key), wave_tile_text(g), g.rows, g.devices.size(), fixed_c, g.compute[1],
        g.compute[2], g.compute[3], g.compute[4], fixed_m, g.memory[1], g.memory[2],
        support::percent(g.error.median), support::percent(g.error.mean));
  }
  size_t refined = 0;
  for (const WaveRefinement& r : model.refinements) refined += r.groups.size();
  out += fmt::format(
      "\n{} GPUs carry refinements ({} groups fitted on their own kernels), which price them in place "
      "of the rows above.\n",
      model.refinements.size(), refined);
  // Refinements of GPUs outside these rows: fitted on --refine-only kernels (wave_fit.hpp).
  std::set<std::string> fitted_gpus;
  for (const DeviceSpec& d : w.devices) fitted_gpus.insert(d.name);
  for (const WaveRefinement& r : model.refinements) {
    if (fitted_gpus.contains(r.device)) continue;
    int64_t kernels = 0;
    for (const WaveGroupFit& g : r.groups) kernels += g.rows;
    std::vector<std::string> takers;
    for (const std::string& name : builtin_devices().names()) {
      const RefinementMatch match = model.refinement_for(builtin_devices().find(name));
      if (match.refinement == &r && match.compute_only) takers.push_back(name);
    }
    out += fmt::format(
        "{}'s {} groups are fitted on {} kernels timed on it for mutwo (`mutwo calibrate --refine-only`): "
        "they "
        "refine that GPU alone, outside the cross-GPU groups and the held-out tables above{}.\n",
        r.device, r.groups.size(), kernels,
        takers.empty() ? ""
                       : fmt::format("; {} (the same chip, clocks and peaks on other memory) takes its GEMM "
                                     "and convolution groups",
                                     fmt::join(takers, ", ")));
  }
  // The power limit.
  std::string folds;
  for (const auto& [chip, fit] : h.fits) {
    folds += fmt::format("{}{} {:.1f}", folds.empty() ? "" : ", ", chip, fit.energy_pj_per_flop);
  }
  out += fmt::format(
      "\n**Power limit.** A GEMM-like kernel's waves and FLOPs run at the clock the board's power sustains "
      "(costmodel/wave_kernel.hpp, sustained_clock_ratio): min(1, board power / (e x the process's energy "
      "per op relative to TSMC 16FF+ x FP32 peak)), with the boards' power and process from their datasheets "
      "(costmodel/devices/*.toml, costmodel/process_node.cpp) and e fitted by grid with the coefficients: "
      "e = {:.1f} pJ per FP32 FLOP (fitted with each chip held out: {}). The catalog GPUs it holds below "
      "their boost clock on math:\n\n",
      model.energy_pj_per_flop, folds);
  out += "| GPU | board power | process | FP32 peak | share of boost clock on math |\n";
  out += "|---|---:|---|---:|---:|\n";
  for (const std::string& name : builtin_devices().names()) {
    const DeviceSpec d = builtin_devices().find(name);
    const double r = model.clock_ratio(d);
    if (r >= 1) continue;
    out += fmt::format("| {} | {:.0f} W | {} | {:.1f} TFLOP/s | {:.2f} |\n", d.name, d.board_power_w,
                       d.process, d.fp32_flops_per_ns / 1000.0, r);
  }
  return out;
}

}  // namespace mutwo::costmodel

#include "costmodel/process_node.hpp"

#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mutwo::costmodel {
namespace {

// TSMC 16FF+: Pascal (GP100, GP102, GP104), the reference.
// TSMC 12FFN (Volta GV100, Turing TU104): NVIDIA's variant of 12FFC, 25 % lower power than 16FFC at
//   the same clock (TSMC's figures as tabled in AnandTech, "Samsung and TSMC Roadmaps: 12 nm, 8 nm and
//   6 nm Added", 2017).
// TSMC N7 (Ampere GA100): 60 % lower power than 16FF+ (TSMC at the start of volume production, as
//   reported by TechGage, "TSMC Has Begun Mass Production of Chips Built on Its 7nm Process", 2018).
// TSMC 4N (Hopper GH100, Ada AD102/AD104) and 4NP (Blackwell GB100): NVIDIA's variants of N5, 30 %
//   lower power than N7 at the same speed (TSMC, as reported by Tom's Hardware, "TSMC Upgrades 7nm,
//   5nm Processes For Performance", 2019): 0.40 x 0.70; 4NP has no published figure of its own.
// Samsung 8N (Ampere GA102): 8LPP 10 % lower power than 10LPP, 10LPE 40 % lower than 14LPE (Samsung
//   Newsroom, 2017 and 2016), with Samsung 14LPE taken as TSMC 16FF+'s class: 0.90 x 0.60.
constexpr std::array<ProcessNode, 6> kProcessNodes{{
    {"TSMC 16FF+", 1.0},
    {"TSMC 12FFN", 0.75},
    {"TSMC N7", 0.40},
    {"TSMC 4N", 0.40 * 0.70},
    {"TSMC 4NP", 0.40 * 0.70},
    {"Samsung 8N", 0.90 * 0.60},
}};

}  // namespace

const ProcessNode* find_process_node(std::string_view name) {
  for (const ProcessNode& p : kProcessNodes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string process_node_names() {
  std::array<std::string_view, kProcessNodes.size()> names;
  for (size_t i = 0; i < kProcessNodes.size(); ++i) names[i] = kProcessNodes[i].name;
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace mutwo::costmodel

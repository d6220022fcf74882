#pragma once
// The measured op cost source: replays per-op durations profiled on a real device (`mutwo
// profile`), matched by op signature, falling back to another source for ops never measured.
//
// μ-TWO (Purandare et al., MLSys 2023) profiles every op over a few iterations and schedules on
// those times; `mutwo profile` does the same (1 warm-up + 3 measured iterations, the median per
// op) and writes a trace (io/trace_file.hpp) that this source reads back.
//
// Look-up rule:
//   op_duration_ns(g, op) = median of the measured durations of every op, over every trace given,
//                           whose op_signature equals op_signature(g, op);
//                         = fallback.op_duration_ns(g, op) when no trace op has that signature.
// The median of an even count is the lower middle value (durations are whole ns, so no rounding):
// {10, 30, 20} -> 20, {10, 40} -> 10.
//
// The signature leaves out names and ids on purpose: the same op of a concatenated multi-sub-array
// schedule graph (names prefixed "s0/", "s1/" by ir::concat_graphs), or of a repeated
// identical layer, matches the traced op. It keeps everything that changes the kernel that runs:
// kind, phase, width, every attribute (so optimizer hyper-parameters such as lr are part of it:
// profile and simulate with the same optimizer settings) and the shapes and dtypes of the inputs
// and outputs, in order.
//
// Ops without a measurement fall back to `analytic` on the caller's device (cost_source_registry.cpp),
// which prices every catalog device (docs/ARCHITECTURE.md "Cost model").
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/op_cost_model.hpp"
#include "io/trace_file.hpp"

namespace mutwo::costmodel {

// Deterministic text key of an op, independent of its name, its id and the ids of its tensors:
// "<kind>|<phase>|w<width>|{<attrs>}|(<inputs>)->(<outputs>)" with attributes "key"=value joined
// by ';' in the Attributes map's order (ints in decimal, doubles as exact hex floats ({:a}),
// strings quoted with \" and \\ escaped, lists in [a,b]), and tensors as dtype[d0,d1,...] joined by
// ','. Example: relu|forward|w1|{}|(fp32[2,3])->(fp32[2,3]).
std::string op_signature(const ir::Graph& graph, const ir::Op& op);

// Throws Error naming the trace (its graph name) and the field when a trace cannot serve as a
// measurement: op_duration_ns empty, a count other than the number of ops, or a negative value.
void validate_measured_trace(const ir::Trace& trace);

// Where a measured trace came from, kept for reports.
struct MeasuredTraceSummary {
  std::string graph_name;
  std::string device;  // as the trace names it ("NVIDIA H100 80GB HBM3", "cpu"; "" if unnamed)
  int64_t ops = 0;
};

// Cross-GPU prediction of a trace (Habitat, Yu et al., ATC'21): a trace measured on catalog GPU A
// predicts GPU B by scaling each measured op duration by calibrated_B(op) / calibrated_A(op), the
// two devices' calibrated prices of that op (rounded to the nearest ns). Ops either profile cannot
// price keep their measured duration unscaled and are counted in describe().
struct CrossDeviceScaling {
  std::shared_ptr<const CalibratedCostModel> from;  // A: the device the traces were measured on
  std::shared_ptr<const CalibratedCostModel> to;    // B: the device simulated
};

// Per-op durations looked up by op signature in measured traces; unmeasured ops go to a fallback.
// Immutable after construction (the medians are precomputed into a sorted map), so concurrent const
// calls are safe when the fallback's are.
class MeasuredCostModel final : public OpCostModel {
 public:
  // Throws Error on no traces, an invalid trace (validate_measured_trace) or a null fallback.
  MeasuredCostModel(const std::vector<ir::Trace>& traces, std::unique_ptr<OpCostModel> fallback);

  std::string_view name() const override { return "measured"; }
  // The look-up rule above.
  int64_t op_duration_ns(const ir::Graph& graph, const ir::Op& op) const override;
  // The median measured host time (Trace::op_host_ns) of ops with this op's signature, from the
  // traces that carry host times (same median rule), whoever issues: a measured host time is what
  // its issuer measured (a Kineto trace: Python; `mutwo profile` on a GPU: the executor, C++); the
  // fallback's op_host_ns otherwise.
  int64_t op_host_ns(const ir::Graph& graph, const ir::Op& op,
                     HostIssuer issuer = HostIssuer::python) const override;
  // The fallback's device: memory, host link and fallback pricing come from it.
  const DeviceSpec& device() const override { return fallback_->device(); }
  // "measured (1180 of 1256 ops from 1 trace on NVIDIA H100 80GB HBM3; rest analytic)": the
  // coverage of `graph` (measured_coverage), the traces' devices, and the fallback when it is used.
  std::string describe(const ir::Graph& graph) const override;

  // Scale measured durations from the traces' device to this one (see CrossDeviceScaling).
  void set_cross_device_scaling(CrossDeviceScaling scaling) { scaling_ = std::move(scaling); }
  const std::optional<CrossDeviceScaling>& cross_device_scaling() const { return scaling_; }
  // calibrated_B(op) / calibrated_A(op) when both price the op (and A's price is > 0); nullopt
  // without scaling or for an op either cannot price.
  std::optional<double> scale_factor(const ir::Graph& graph, const ir::Op& op) const;

  // The median measured duration of ops with this op's signature; nullopt when none was measured.
  std::optional<int64_t> measured_duration_ns(const ir::Graph& graph, const ir::Op& op) const;
  const OpCostModel& fallback() const { return *fallback_; }
  const std::vector<MeasuredTraceSummary>& traces() const { return traces_; }
  // Distinct signatures measured.
  int64_t signature_count() const { return static_cast<int64_t>(median_ns_.size()); }

 private:
  std::unique_ptr<OpCostModel> fallback_;
  std::vector<MeasuredTraceSummary> traces_;
  std::optional<CrossDeviceScaling> scaling_;
  std::map<std::string, int64_t, std::less<>> median_ns_;  // signature -> median duration
  std::map<std::string, int64_t, std::less<>> median_host_ns_;  // signature -> median host time
};

// How many ops of a graph the model prices from measurements (the rest go to the fallback).
struct MeasuredCoverage {
  int64_t ops = 0;
  int64_t measured_ops = 0;
};
MeasuredCoverage measured_coverage(const MeasuredCostModel& model, const ir::Graph& graph);

}  // namespace mutwo::costmodel

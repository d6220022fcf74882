#pragma once
// The cost model interface: how long an op and a host<->device copy take on a device.
// Sources (analytic roofline, calibrated fit, measured lookup) implement it; runs pick one by name.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/device_spec.hpp"
#include "ir/graph.hpp"

namespace mutwo::costmodel {

enum class CopyDirection : uint8_t { device_to_host, host_to_device };

// Who issues a step's ops under PyTorch eager: a Python training loop (forward ops are Python module
// calls), or C++ through LibTorch, as mutwo's executor does (every op of the schedule one C++ call).
enum class HostIssuer : uint8_t { python, cpp };

class OpCostModel {
 public:
  virtual ~OpCostModel() = default;
  virtual std::string_view name() const = 0;
  // Duration of one op of `graph` on the model's device, >= 0, deterministic.
  virtual int64_t op_duration_ns(const ir::Graph& graph, const ir::Op& op) const = 0;
  virtual const DeviceSpec& device() const = 0;
  // One line for reports on how `graph` is priced: the name, and for sources with inputs what they
  // cover ("measured (1180 of 1256 ops from 1 trace on NVIDIA H100 80GB HBM3; rest analytic)").
  virtual std::string describe(const ir::Graph& graph) const;
  // Host time to issue one op under PyTorch eager (framework dispatch and its kernel launches), >= 0.
  // Default, from the device's host figures: a forward op is a Python module call (forward_op_ns), a
  // backward op an autograd-engine call from C++ (backward_op_ns); ops PyTorch issues inside another
  // call cost their kernel launch alone (launch_ns): autocast's casts and their backward (inside the
  // parent op's dispatch), the optimizer's per-weight updates and GradScaler's unscale (torch.optim's
  // and GradScaler's foreach kernels, PyTorch's default on CUDA since 2.0, update many tensors per call);
  // NVIDIA's BertAdam, a Python loop, issues each of its kernels as a statement (python_op_ns each).
  // Issued from C++ (HostIssuer::cpp, the executor's interpreter): every op is one C++ call that
  // dispatches its ATen ops and launches their kernels, priced at the C++ figure (backward_op_ns),
  // the only per-op dispatch cost measured from C++ (the catalog says where); casts and updates too,
  // as the interpreter issues each as an instruction of its own.
  virtual int64_t op_host_ns(const ir::Graph& graph, const ir::Op& op,
                             HostIssuer issuer = HostIssuer::python) const;
};

// latency + bytes / link bandwidth, rounded up to whole ns (documented rounding rule).
// Rounding rule: the bandwidth term is the smallest whole number of ns n with n * bandwidth >= bytes
// (1 GiB over 25 GB/s: 1073741824 / 25 = 42949672.96 -> 42949673 ns). A copy of 0 bytes issues no
// DMA and takes 0 ns. Throws Error on negative bytes, and on a copy longer than 4e18 ns (a bandwidth
// near 0: 1 GiB at 1e-300 GB/s), which no int64 time holds.
int64_t transfer_duration_ns(const DeviceSpec& device, int64_t bytes, CopyDirection direction);

// The longest time a price or copy may take, in ns: under int64's 9.2e18 with room for sums of a few.
inline constexpr double kMaxPricedNs = 4.0e18;

// A price in ns as the whole ns it takes, rounded up: Error naming the source and the op (when given)
// when the price is not finite, is negative or passes 4e18 ns (a profile's coefficient or a device
// figure out of range: a compute term of 1e300 ns), rather than an int64 out of range.
int64_t whole_price_ns(double ns, std::string_view source, const ir::Op* op = nullptr);

// op_durations_ns(model, graph)[i] = model.op_duration_ns(graph, graph.ops[i]).
std::vector<int64_t> op_durations_ns(const OpCostModel& model, const ir::Graph& graph);

std::string_view direction_name(CopyDirection direction);  // "device_to_host" / "host_to_device"

}  // namespace mutwo::costmodel

#pragma once
// Per-run changes to a catalog device (a smaller memory limit, a measured host link) and the
// parser of memory sizes such as "16GiB" that the command line and experiment specs use.
#include <cstdint>
#include <optional>
#include <string_view>

#include "costmodel/device_spec.hpp"

namespace mutwo::costmodel {

// Fields left empty keep the catalog value.
struct DeviceOverrides {
  std::optional<int64_t> memory_bytes;  // the memory limit (e.g. to emulate a smaller GPU)
  std::optional<double> h2d_gbps;       // host->device GB/s (== bytes/ns)
  std::optional<double> d2h_gbps;       // device->host GB/s
  std::optional<int64_t> h2d_latency_ns;
  std::optional<int64_t> d2h_latency_ns;
  std::optional<int64_t> launch_overhead_ns;
  std::optional<bool> half_duplex;  // true: one copy engine, the two directions serialise
  // The host optimizer's rate, GB/s of update bytes, for every update size (a measured host's
  // figure; the catalog's is the development host's, cache-resident and large updates apart).
  std::optional<double> host_optimizer_gbps;
};

// Returns the device with the overrides applied; throws Error naming the device, the field and the
// value when a result is out of range (memory and bandwidths > 0, latencies >= 0).
DeviceSpec apply_overrides(DeviceSpec device, const DeviceOverrides& overrides);

// Parses a memory size: a non-negative number and an optional unit, case-insensitive, spaces
// allowed between them: B, KB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024).
// "16GiB" = 17179869184, "40GB" = 40000000000, "1.5GiB" = 1610612736, "123456" = 123456 bytes.
// A fractional size is rounded to the nearest byte; a size without a unit or in B must be a whole
// number.
// Throws Error "invalid memory size '16XB': ..." naming the value and what is wrong.
int64_t parse_memory_size(std::string_view text);

}  // namespace mutwo::costmodel

#pragma once
// The GPU time of each shaped aten op in a PyTorch profiler (Kineto) trace recorded with
// record_shapes=True: the measured kernels that calibrate a cost model (costmodel/
// kineto_calibration.hpp turns them into calibration rows).
//
// Rules. Every CPU op ("cpu_op" / "Operator" events) with "Input Dims" and "Input type" is a
// record, over the whole trace (every step). Each GPU kernel, memcpy and memset counts for the
// innermost op that launched it: the CPU op whose "External id" its launch carries (on the launch's
// thread, enclosing it), else the shortest CPU op on that thread whose span encloses the launch. So
// aten::linear's GEMM counts for the aten::addmm inside it. A record's gpu_ns is the summed duration
// of its kernels; ops that launched none are left out. The device is the deviceProperties name of
// the GPU most kernels ran on ("" when the trace names none).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace mutwo::io {

struct KinetoOpRecord {
  size_t event = 0;                              // index in traceEvents, for messages
  std::string name;                              // "aten::addmm"
  std::vector<std::vector<int64_t>> input_dims;  // per input; [] for scalars and lists
  std::vector<std::string> input_types;          // "float", "c10::Half", "c10::BFloat16", ""
  int64_t gpu_ns = 0;                            // its kernels' summed duration, > 0
  int64_t kernels = 0;
  std::vector<size_t> work_events;  // its kernels, memcpys and memsets: their indices in traceEvents
};

struct KinetoOpRecords {
  std::string device;               // deviceProperties name, "" when absent
  std::vector<KinetoOpRecord> ops;  // in trace order
  int64_t shaped_ops = 0;           // CPU ops with Input Dims, with or without kernels
};

// Throws FormatError naming `source`, the event index, name and field for a malformed trace, and
// when the trace has no CPU op with "Input Dims" (recorded without record_shapes) or no GPU kernel.
KinetoOpRecords kineto_op_records(const nlohmann::json& doc, const std::string& source);
// The same for a reader that can do without shapes: no records (and no error) when the trace has no
// CPU op with "Input Dims" or no GPU kernel; still throws for a malformed trace.
KinetoOpRecords kineto_op_records_if_shaped(const nlohmann::json& doc, const std::string& source);
KinetoOpRecords read_kineto_op_records(const std::filesystem::path& path);

}  // namespace mutwo::io

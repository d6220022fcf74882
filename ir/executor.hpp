#pragma once
// The executor interface: what runs a Schedule on a real device (exec/, LibTorch) looks like to
// the rest of mutwo. Declared here, beside the Schedule it runs, so that experiments/ and cli/
// reach exec/ only through it and build without LibTorch. exec/ implements it in a separately
// linked module (libmutwo_exec.so) that experiments/executor_loader.hpp opens on demand: commands that do not
// execute never load LibTorch.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/bench_host.hpp"
#include "ir/bench_ops.hpp"
#include "ir/schedule.hpp"
#include "ir/trace.hpp"
#include "ir/unrolled_schedule.hpp"

namespace mutwo::ir {

// A device as the runtime reports it once opened.
struct ExecDevice {
  std::string device;   // canonical name: "cpu", "cuda:0"
  std::string product;  // "cpu", "NVIDIA H100 80GB HBM3"
  bool is_cuda = false;
  int64_t total_memory_bytes = 0;  // the CUDA device's; 0 on the cpu
};

// The most warm-up or timed steps of a run, and of a profile (which holds every op's time of every
// measured step): a typo such as --iters 1000000000 is refused rather than run for days.
inline constexpr int32_t kMaxRunSteps = 10000;
inline constexpr int32_t kMaxProfileSteps = 1000;

struct RunOptions {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
  int32_t warmup_iterations = 3;
  int32_t timed_iterations = 20;
  uint64_t seed = 0;
  // Accounted cap on the step's tensors (exec/interpreter.hpp): the CPU's way to emulate a smaller
  // device. 0: none.
  int64_t memory_limit_bytes = 0;
  // CUDA: cap the caching allocator at this fraction of the device's memory. 0: none.
  double memory_cap_fraction = 0.0;
  bool cuda_graph = false;  // capture one step as a CUDA graph after warm-up and replay it
  // Timed steps issued back to back, the host never waiting for the device between them, as a
  // training loop runs and as the simulator's N iterations model the steady state (ir/unrolled_schedule.hpp):
  // each step's time is the interval between its end and the previous step's end on the device. false:
  // each step timed alone, the device idle before it (synchronised).
  bool back_to_back = true;
  // With back_to_back: the timed steps run as one unrolled program whose iteration boundaries are
  // merged so (ir/unrolled_schedule.hpp), the order the simulator replays with
  // SimOptions::wrap_iterations. Not with cuda_graph.
  std::optional<BoundaryMerge> wrap;
  // Polled before each step: true stops the run with mutwo::InterruptedError (Python's Ctrl-C; the
  // CLI leaves SIGINT to end the process). Not inside a step, nor inside a wrapped program. Empty: never.
  std::function<bool()> stop_requested;
};

struct Measurement {
  std::string device;  // product name: "cpu", "NVIDIA H100 80GB HBM3"
  bool oom = false;
  InstrId oom_instruction = kNoId;
  std::string oom_message;
  int32_t warmup_iterations = 0;
  int32_t iterations = 0;              // timed steps completed
  std::vector<int64_t> step_times_ns;  // one per timed step
  bool back_to_back = false;           // timed back to back (RunOptions::back_to_back), else one by one
  bool wrapped = false;                // timed as one program with merged boundaries (RunOptions::wrap)
  // Median of step_times_ns (an even count: the mean of the two middle values, rounded down).
  int64_t step_time_ns = 0;
  int64_t step_time_min_ns = 0;
  int64_t step_time_max_ns = 0;
  // The device allocator's peak over the timed steps (CUDA), else the accounted peak.
  int64_t peak_bytes = 0;
  std::string peak_source;  // "cuda_allocator" or "accounted"
  int64_t accounted_peak_bytes = 0;
  int64_t resident_bytes = 0;
  std::vector<double> first_losses;  // per model: the first step's losses
  std::vector<double> losses;        // per model: the last step's
  bool cuda_graph = false;           // the timed steps replayed a captured graph
};

struct ProfileOptions {
  std::string device = "cpu";
  int32_t warmup_iterations = 1;
  int32_t measured_iterations = 3;
  uint64_t seed = 0;
  // Record each op's host issue time (Trace::op_host_ns, the median over measured_iterations more
  // steps, each issue timed on a synchronised device): always on a GPU; on the cpu only when asked,
  // as there an op's issue is its work.
  bool time_host = false;
  std::function<bool()> stop_requested;  // as RunOptions::stop_requested
};

// Runs schedules on a device. Every method throws mutwo::Error (or a subclass) on failure.
class Executor {
 public:
  virtual ~Executor() = default;

  // "cuda" in a build with the CUDA path, else "cpu".
  virtual std::string default_device() const = 0;
  // Opens `device` ("cpu", "cuda", "cuda:N") to read its name and memory. Throws naming the device
  // when it is unknown, when this build has no CUDA path, or when no CUDA device is present.
  virtual ExecDevice open_device(std::string_view device) = 0;
  // Warm-up, then timed training steps (exec::measure_schedule). An out-of-memory step ends the
  // run with oom set; throws on bad options.
  virtual Measurement measure(const Schedule& schedule, const RunOptions& options) = 0;
  // Per-op durations, the median over the measured steps, as a measured trace of the schedule's
  // graph on the device's product name (exec::profile_schedule). Throws on OOM.
  virtual ir::Trace profile(const Schedule& schedule, const ProfileOptions& options) = 0;
  // Times single ATen kernels (ir/bench_ops.hpp): every shape at every requested precision
  // that applies to its kernel, in shape order then precision order; warm-up launches, then the
  // median of the timed ones. Throws naming the shape, or the precision and the device when the
  // device does not run it (the CPU runs fp32 only; bf16 needs a CUDA device of compute
  // capability 8.0 or newer), and on bad iteration counts; an out-of-memory shape throws too.
  virtual std::vector<KernelTiming> bench_ops(const BenchOpsOptions& options) = 0;
  // Times the host link (every size each way alone and both at once) and the host's dispatch of a
  // small op (ir/bench_host.hpp). Throws naming the field on bad options, and naming the copy
  // when one fails (an out-of-memory size too).
  virtual HostBench bench_host(const BenchHostOptions& options) = 0;
};

// The C symbol the module exports: returns a new Executor the caller owns (delete it with the
// module loaded; experiments/executor_loader.hpp never unloads it).
inline constexpr const char* kExecutorFactorySymbol = "mutwo_exec_create_executor";
// The module's file name, looked for next to the running program.
inline constexpr const char* kExecutorModuleName = "libmutwo_exec.so";
// Environment variable naming the module's path instead.
inline constexpr const char* kExecutorModuleEnv = "MUTWO_EXEC_MODULE";

}  // namespace mutwo::ir

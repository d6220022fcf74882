#pragma once
// Measured runs of a Schedule on a device: `measure_schedule` (mutwo run: warm-up, then timed
// training steps; median step time, peak memory, losses) and `profile_schedule` (mutwo profile:
// per-op times over a few steps, as μ-TWO profiles, written as a measured trace that the
// simulator's `measured` cost source replays). Torch-free: this is exec/'s public header.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "io/trace_file.hpp"
#include "ir/executor.hpp"
#include "ir/schedule.hpp"

namespace mutwo::exec {

// The option and result types are the executor interface's (ir/executor.hpp).
using ir::Measurement;
using ir::ProfileOptions;
using ir::RunOptions;

// Runs warm-up + timed steps. An out-of-memory step ends the run with oom set (and whatever was
// timed before it); other errors throw mutwo::Error. Throws on bad options (iterations < 1, a cap
// outside (0, 1], a device this build cannot use).
Measurement measure_schedule(const ir::Schedule& schedule, const RunOptions& options);

// Per-op durations of the schedule's graph: every compute instruction timed on its own (CUDA
// events around it on the compute stream; wall clock on the CPU) in each measured step, the
// median per op (an odd count's middle; an even count's lower middle). Then, on a GPU (or when
// asked), as many steps again with each op's host issue timed (Trace::op_host_ns, the same median).
// Returns a trace of the schedule's graph with those durations and the device's product name.
// Throws mutwo::Error on OOM.
ir::Trace profile_schedule(const ir::Schedule& schedule, const ProfileOptions& options);

// Times single ATen kernels at the options' shapes and precisions (exec/bench_ops.cpp; the contract
// is ir::Executor::bench_ops).
std::vector<ir::KernelTiming> bench_ops(const ir::BenchOpsOptions& options);

// Times the host link and the host's dispatch (exec/bench_host.cpp; the contract is
// ir::Executor::bench_host).
ir::HostBench bench_host(const ir::BenchHostOptions& options);

// The device as the interface reports it (name, product, memory); throws as make_backend.
ir::ExecDevice open_device(std::string_view device);

// The executor interface over the functions above (module.cpp exports it from libmutwo_exec.so).
std::unique_ptr<ir::Executor> make_executor();

// The median as measure_schedule defines it; 0 for an empty list.
int64_t median_ns(std::vector<int64_t> values);

}  // namespace mutwo::exec

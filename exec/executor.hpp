#pragma once
// Measured runs of a Schedule on a device: `measure_schedule` (mutwo run: warm-up, then timed
// training steps; median step time, peak memory, losses) and `profile_schedule` (mutwo profile:
// per-op times over a few steps, as μ-TWO profiles, written as a measured trace that the
// simulator's `measured` cost source replays). Torch-free: this is exec/'s public header.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "profiles/executor.hpp"
#include "profiles/schedule.hpp"
#include "profiles/trace_file.hpp"

namespace mutwo::exec {

// The option and result types are the executor interface's (profiles/executor.hpp).
using profiles::Measurement;
using profiles::ProfileOptions;
using profiles::RunOptions;

// Runs warm-up + timed steps. An out-of-memory step ends the run with oom set (and whatever was
// timed before it); other errors throw mutwo::Error. Throws on bad options (iterations < 1, a cap
// outside (0, 1], a device this build cannot use).
Measurement measure_schedule(const profiles::Schedule& schedule, const RunOptions& options);

// Per-op durations of the schedule's graph: every compute instruction timed on its own (CUDA
// events around it on the compute stream; wall clock on the CPU) in each measured step, the
// median per op (an odd count's middle; an even count's lower middle). Then, on a GPU (or when
// asked), as many steps again with each op's host issue timed (Trace::op_host_ns, the same median).
// Returns a trace of the schedule's graph with those durations and the device's product name.
// Throws mutwo::Error on OOM.
profiles::Trace profile_schedule(const profiles::Schedule& schedule, const ProfileOptions& options);

// Times single ATen kernels at the options' shapes and precisions (exec/bench_ops.cpp; the contract
// is profiles::Executor::bench_ops).
std::vector<profiles::KernelTiming> bench_ops(const profiles::BenchOpsOptions& options);

// Times the host link and the host's dispatch (exec/bench_host.cpp; the contract is
// profiles::Executor::bench_host).
profiles::HostBench bench_host(const profiles::BenchHostOptions& options);

// The device as the interface reports it (name, product, memory); throws as make_backend.
profiles::ExecDevice open_device(std::string_view device);

// The executor interface over the functions above (module.cpp exports it from libmutwo_exec.so).
std::unique_ptr<profiles::Executor> make_executor();

// The median as measure_schedule defines it; 0 for an empty list.
int64_t median_ns(std::vector<int64_t> values);

}  // namespace mutwo::exec

#include "exec/executor.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "exec/device_backend.hpp"
#include "exec/interpreter.hpp"
#include "ir/iterations.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

namespace mutwo::exec {
namespace {

void fill_oom(Measurement& m, const StepResult& step) {
  m.oom = true;
  m.oom_instruction = step.oom_instruction;
  m.oom_message = step.oom_message;
}

// Before each step: the caller's stop (RunOptions::stop_requested) ends the command, no result kept.
void check_stop(const std::function<bool()>& stop_requested, std::string_view command, int32_t step,
                int32_t steps) {
  if (stop_requested && stop_requested())
    throw InterruptedError(fmt::format("{}: interrupted before step {} of {}", command, step + 1, steps));
}

}  // namespace

int64_t median_ns(std::vector<int64_t> values) {
  return support::median(std::move(values), support::EvenMedian::mean_of_middles);
}

Measurement measure_schedule(const ir::Schedule& schedule, const RunOptions& options) {
  ir::check_iterations(options.warmup_iterations, options.timed_iterations, ir::kMaxRunSteps, "run");
  if (options.cuda_graph && schedule.host_stream != ir::kNoStream) {
    throw Error(fmt::format("--cuda-graph cannot capture this schedule: its optimizer updates run on the host "
                            "(field 'host_stream' = {}), which a CUDA graph cannot replay",
                            schedule.host_stream));
  }
  if (options.wrap.has_value() && (options.cuda_graph || !options.back_to_back)) {
    throw Error(fmt::format("wrapped iterations run back to back as one program: not with {}",
                            options.cuda_graph ? "--cuda-graph" : "--sync-each-step"));
  }
  std::unique_ptr<DeviceBackend> backend = make_backend(options.device);
  if (options.memory_cap_fraction != 0.0) backend->set_memory_fraction(options.memory_cap_fraction);

  Measurement m;
  m.device = backend->name();
  m.peak_source = backend->peak_allocated_bytes().has_value() ? "cuda_allocator" : "accounted";
  InterpreterOptions interpreter_options;
  interpreter_options.seed = options.seed;
  interpreter_options.memory_limit_bytes = options.memory_limit_bytes;
  std::unique_ptr<Interpreter> interpreter;
  try {
    interpreter = std::make_unique<Interpreter>(schedule, *backend, interpreter_options);
  } catch (const std::exception& error) {
    // The persistent state alone does not fit (a capped device).
    if (!backend->is_out_of_memory(error)) throw;
    m.oom = true;
    m.oom_message =
        fmt::format("out of memory allocating the persistent state: {}",
                    std::string_view(error.what()).substr(0, std::string_view(error.what()).find('\n')));
    return m;
  }

  for (int32_t i = 0; i < options.warmup_iterations; ++i) {
    check_stop(options.stop_requested, "run", i, options.warmup_iterations + options.timed_iterations);
    const StepResult step = interpreter->step();
    ++m.warmup_iterations;
    if (i == 0) m.first_losses = step.losses;
    if (step.oom) {
      fill_oom(m, step);
      return m;
    }
    m.losses = step.losses;
  }

  backend->reset_peak_memory();
  if (options.cuda_graph) {
    if (!backend->supports_graph_capture()) {
      throw Error(fmt::format("--cuda-graph needs a CUDA device; device is '{}'", options.device));
    }
    interpreter->prepare_capture();
    backend->begin_capture();
    interpreter->issue_step();
    backend->end_capture();
    interpreter->finish_captured_step();
    m.cuda_graph = true;
  }
  const bool back_to_back = options.back_to_back && !m.cuda_graph;
  m.back_to_back = back_to_back;
  if (back_to_back) backend->mark_steps_start();
  if (back_to_back && options.wrap.has_value()) {
    // The timed steps as one program with merged boundaries (ir/unrolled_schedule.hpp).
    const ir::UnrolledSchedule program =
        ir::unroll_iterations(schedule, options.timed_iterations, &*options.wrap);
    const StepResult run = interpreter->run_iterations(program);
    m.accounted_peak_bytes = std::max(m.accounted_peak_bytes, run.accounted_peak_bytes);
    m.resident_bytes = run.resident_bytes;
    m.wrapped = true;
    if (run.oom) {
      fill_oom(m, run);
    } else {
      m.iterations = options.timed_iterations;
    }
  }
  for (int32_t i = 0; i < options.timed_iterations && !m.wrapped; ++i) {
    check_stop(options.stop_requested, "run", options.warmup_iterations + i,
               options.warmup_iterations + options.timed_iterations);
    if (m.cuda_graph) {
      backend->start_step_timer();
      backend->replay();
      m.step_times_ns.push_back(backend->stop_step_timer_ns());
      ++m.iterations;
      continue;
    }
    const StepResult step = interpreter->step(/*wait=*/!back_to_back);
    m.accounted_peak_bytes = std::max(m.accounted_peak_bytes, step.accounted_peak_bytes);
    m.resident_bytes = step.resident_bytes;
    if (step.oom) {
      fill_oom(m, step);
      break;
    }
    if (!back_to_back) {
      if (m.first_losses.empty()) m.first_losses = step.losses;
      m.losses = step.losses;
      m.step_times_ns.push_back(step.step_time_ns);
    }
    ++m.iterations;
  }
  if (back_to_back && m.iterations > 0) {
    // Each step's time: from the previous step's end on the device (the first: from the start
    // mark, issued right after the warm-up's last step had finished) to its own end.
    const std::vector<int64_t> ends = backend->steps_elapsed_ns();
    int64_t previous = 0;
    for (int32_t i = 0; i < m.iterations; ++i) {
      m.step_times_ns.push_back(ends.at(static_cast<size_t>(i)) - previous);
      previous = ends[static_cast<size_t>(i)];
    }
    if (m.first_losses.empty()) m.first_losses = interpreter->back_to_back_losses(0);
    m.losses = interpreter->back_to_back_losses(static_cast<size_t>(m.iterations) - 1);
  }
  if (!m.step_times_ns.empty()) {
    m.step_time_ns = median_ns(m.step_times_ns);
    m.step_time_min_ns = *std::min_element(m.step_times_ns.begin(), m.step_times_ns.end());
    m.step_time_max_ns = *std::max_element(m.step_times_ns.begin(), m.step_times_ns.end());
  }
  m.peak_bytes = backend->peak_allocated_bytes().value_or(m.accounted_peak_bytes);
  return m;
}

ir::Trace profile_schedule(const ir::Schedule& schedule, const ProfileOptions& options) {
  ir::check_iterations(options.warmup_iterations, options.measured_iterations, ir::kMaxProfileSteps,
                       "profile");
  std::unique_ptr<DeviceBackend> backend = make_backend(options.device);
  InterpreterOptions interpreter_options;
  interpreter_options.seed = options.seed;
  interpreter_options.time_ops = true;
  Interpreter interpreter(schedule, *backend, interpreter_options);
  // The host side only where the host issues work to a device (on the cpu an op's issue is its
  // work): as many more steps, each op's issue timed on an idle device (Interpreter: time_host).
  const bool time_host = backend->is_cuda() || options.time_host;

  const size_t op_count = schedule.graph.ops.size();
  std::vector<std::vector<int64_t>> samples(op_count);
  std::vector<std::vector<int64_t>> host_samples(time_host ? op_count : 0);
  const int32_t device_steps = options.warmup_iterations + options.measured_iterations;
  const int32_t steps = device_steps + (time_host ? options.measured_iterations : 0);
  for (int32_t i = 0; i < steps; ++i) {
    check_stop(options.stop_requested, "profile", i, steps);
    if (i == device_steps) interpreter.set_timing(false, true);
    const StepResult step = interpreter.step();
    if (step.oom)
      throw Error(
          fmt::format("profile of '{}' ran out of memory: {}", schedule.graph.name, step.oom_message));
    if (i < options.warmup_iterations) continue;
    if (i < device_steps) {
      for (size_t k = 0; k < op_count; ++k)
        samples[k].push_back(backend->op_time_ns(static_cast<ir::OpId>(k)));
    } else {
      for (size_t k = 0; k < op_count; ++k)
        host_samples[k].push_back(interpreter.op_host_ns(static_cast<ir::OpId>(k)));
    }
  }
  ir::Trace trace;
  trace.graph = schedule.graph;
  trace.device = backend->name();
  trace.op_duration_ns.reserve(op_count);
  for (std::vector<int64_t>& s : samples)
    trace.op_duration_ns.push_back(support::median(std::move(s), support::EvenMedian::lower_middle));
  for (std::vector<int64_t>& s : host_samples)
    trace.op_host_ns.push_back(support::median(std::move(s), support::EvenMedian::lower_middle));
  return trace;
}

ir::ExecDevice open_device(std::string_view device) {
  const std::unique_ptr<DeviceBackend> backend = make_backend(device);
  ir::ExecDevice d;
  d.device = backend->device().str();
  d.product = backend->name();
  d.is_cuda = backend->is_cuda();
  d.total_memory_bytes = backend->total_memory_bytes().value_or(0);
  return d;
}

namespace {

class LibTorchExecutor final : public ir::Executor {
 public:
  std::string default_device() const override {
#ifdef MUTWO_WITH_CUDA
    return "cuda";
#else
    return "cpu";
#endif
  }
  ir::ExecDevice open_device(std::string_view device) override {
    return exec::open_device(device);
  }
  Measurement measure(const ir::Schedule& schedule, const RunOptions& options) override {
    return measure_schedule(schedule, options);
  }
  ir::Trace profile(const ir::Schedule& schedule, const ProfileOptions& options) override {
    return profile_schedule(schedule, options);
  }
  std::vector<ir::KernelTiming> bench_ops(const ir::BenchOpsOptions& options) override {
    return exec::bench_ops(options);
  }
  ir::HostBench bench_host(const ir::BenchHostOptions& options) override {
    return exec::bench_host(options);
  }
};

}  // namespace

std::unique_ptr<ir::Executor> make_executor() {
  return std::make_unique<LibTorchExecutor>();
}

}  // namespace mutwo::exec

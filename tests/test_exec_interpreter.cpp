// The Schedule interpreter on the CPU: memory accounting against the simulator, the OOM boundary,
// host-buffer reuse, issue order, errors; the executor's run and the profiler's measured trace.
#include "tests/support/torch_doctest.hpp"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "exec/device_backend.hpp"
#include "exec/executor.hpp"
#include "exec/interpreter.hpp"
#include "io/trace_file.hpp"
#include "ir/unrolled_schedule.hpp"
#include "policies/array_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "tests/support/exec_arrays.hpp"

namespace {

using namespace mutwo;

using ir::Schedule;
using test::sim_options;

std::vector<ir::Graph> steps(const std::string& model, const std::vector<int32_t>& partition,
                             transforms::OptimizerKind optimizer = transforms::OptimizerKind::adam) {
  return test::array_steps(model, partition, optimizer);
}

std::unique_ptr<costmodel::OpCostModel> analytic() {
  return costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
}

Schedule planned(const std::string& model, std::vector<int32_t> partition, const std::string& policy,
                 double activation_fraction) {
  const auto cost = analytic();
  const std::vector<ir::Graph> parts = steps(model, partition);
  const Schedule plain = policies::build_plain_schedule(parts);
  const sim::Prediction p = sim::simulate(plain, *cost, sim_options(-1));
  const auto limit =
      p.resident_bytes +
      static_cast<int64_t>(static_cast<double>(p.peak_bytes - p.resident_bytes) * activation_fraction);
  return policies::plan_sub_arrays(parts, *policies::builtin_policies().create(policy), *cost, limit,
                                   policies::SubArrayOrder::back_to_back)
      .result.schedule;
}

exec::StepResult one_step(const Schedule& s, int64_t limit = 0) {
  auto backend = exec::make_backend("cpu");
  exec::InterpreterOptions options;
  options.memory_limit_bytes = limit;
  exec::Interpreter interpreter(s, *backend, options);
  return interpreter.step();
}

// A backend that records what the interpreter asks of the CPU backend it wraps.
class RecordingBackend final : public exec::DeviceBackend {
 public:
  RecordingBackend() : inner_(exec::make_cpu_backend()) {}
  at::Device device() const override { return inner_->device(); }
  std::string name() const override { return inner_->name(); }
  bool is_cuda() const override { return false; }
  void before(const ir::Instruction& i) override {
    issued.push_back(i.id);
    inner_->before(i);
  }
  void after(const ir::Instruction& i) override { inner_->after(i); }
  void end_step() override { ++steps; }
  void synchronize() override {}
  at::Tensor host_buffer(const at::Tensor& like) override {
    at::Tensor t = inner_->host_buffer(like);
    buffers.insert(t.data_ptr());
    ++buffers_handed_out;
    return t;
  }
  void release_host_buffers() override { inner_->release_host_buffers(); }
  void note_use(const at::Tensor& t, int32_t s) override { inner_->note_use(t, s); }
  void start_step_timer() override { inner_->start_step_timer(); }
  int64_t stop_step_timer_ns() override { return inner_->stop_step_timer_ns(); }
  void mark_steps_start() override { inner_->mark_steps_start(); }
  void mark_step_end() override { inner_->mark_step_end(); }
  std::vector<int64_t> steps_elapsed_ns() override { return inner_->steps_elapsed_ns(); }
  void start_op_timer(ir::OpId op) override { inner_->start_op_timer(op); }
  void stop_op_timer(ir::OpId op) override { inner_->stop_op_timer(op); }
  int64_t op_time_ns(ir::OpId op) override { return inner_->op_time_ns(op); }
  void reset_op_timers(size_t n) override { inner_->reset_op_timers(n); }
  int64_t time_copy_ns(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                       const at::Tensor& d) override {
    return inner_->time_copy_ns(a, b, c, d);
  }
  void reset_peak_memory() override {}
  std::optional<int64_t> peak_allocated_bytes() override { return std::nullopt; }
  std::optional<int64_t> total_memory_bytes() override { return std::nullopt; }
  void set_memory_fraction(double f) override { inner_->set_memory_fraction(f); }
  bool is_out_of_memory(const std::exception& e) const override { return inner_->is_out_of_memory(e); }

  std::vector<ir::InstrId> issued;
  std::set<void*> buffers;
  int buffers_handed_out = 0;
  int steps = 0;

 private:
  std::unique_ptr<exec::DeviceBackend> inner_;
};

}  // namespace

TEST_CASE("accounted peak equals the simulator's peak on one compute stream") {
  // No swaps: allocations happen in list order in both, so the sums of live 512-B-rounded tensors
  // agree exactly, at the same instruction.
  const auto cost = analytic();
  for (const auto& [model, policy] :
       std::vector<std::pair<std::string, std::string>>{{"resnet-mini", "none"},
                                                        {"bert-mini", "none"},
                                                        {"bert-mini", "checkpoint"},
                                                        {"dlrm-mini", "none"}}) {
    CAPTURE(model);
    CAPTURE(policy);
    const Schedule s = policy == "none" ? policies::build_plain_schedule(steps(model, {2}))
                                        : planned(model, {2}, policy, 0.5);
    const sim::Prediction p = sim::simulate(s, *cost, sim_options(-1));
    const exec::StepResult r = one_step(s);
    REQUIRE_FALSE(r.oom);
    CHECK(r.resident_bytes == p.resident_bytes);
    CHECK(r.accounted_peak_bytes == p.peak_bytes);
    CHECK(r.peak_instruction == p.peak_instruction);
  }
}

TEST_CASE(
    "a limit one byte under the peak runs out of memory where the simulator does; at the peak it fits") {
  const auto cost = analytic();
  const Schedule s = policies::build_plain_schedule(steps("bert-mini", {2}));
  const sim::Prediction p = sim::simulate(s, *cost, sim_options(-1));
  const exec::StepResult fits = one_step(s, p.peak_bytes);
  CHECK_FALSE(fits.oom);
  CHECK(fits.accounted_peak_bytes == p.peak_bytes);

  const exec::StepResult over = one_step(s, p.peak_bytes - 1);
  const sim::Prediction p_over = sim::simulate(s, *cost, sim_options(p.peak_bytes - 1));
  REQUIRE(over.oom);
  REQUIRE(p_over.oom);
  CHECK(over.oom_instruction == p_over.oom_instruction);
  CHECK(over.oom_instruction == p.peak_instruction);
  CHECK(over.oom_message.find("out of memory at instruction") == 0);
  CHECK(over.losses.empty());
}

TEST_CASE("after an out-of-memory step the interpreter keeps its persistent state and can step again") {
  const Schedule s = policies::build_plain_schedule(steps("resnet-mini", {1}));
  auto backend = exec::make_backend("cpu");
  const sim::Prediction p = sim::simulate(s, *analytic(), sim_options(-1));
  exec::InterpreterOptions options;
  options.memory_limit_bytes = p.peak_bytes - 1;
  exec::Interpreter interpreter(s, *backend, options);
  CHECK(interpreter.step().oom);
  CHECK(interpreter.step().oom);  // the same plan fails the same way, without a crash
  for (const ir::Tensor& t : s.graph.tensors) {
    if (ir::is_persistent(t.role)) CHECK(interpreter.tensor(t.id).defined());
  }
}

TEST_CASE("swapped tensors go through host buffers that the next step reuses") {
  const Schedule s = planned("resnet-mini", {2}, "vdnn", 0.3);
  int swaps = 0;
  for (const auto& i : s.instructions) swaps += i.kind == ir::InstrKind::swap_out ? 1 : 0;
  REQUIRE(swaps > 0);
  RecordingBackend backend;
  exec::Interpreter interpreter(s, backend);
  REQUIRE_FALSE(interpreter.step().oom);
  const std::set<void*> first = backend.buffers;
  CHECK(backend.buffers_handed_out == swaps);
  REQUIRE_FALSE(interpreter.step().oom);
  CHECK(backend.buffers_handed_out == 2 * swaps);
  CHECK(backend.buffers == first);  // no new host memory in the second step
}

TEST_CASE("instructions are issued in schedule order, once per step") {
  const Schedule s = planned("bert-mini", {1, 1}, "capuchin", 0.4);
  RecordingBackend backend;
  exec::Interpreter interpreter(s, backend);
  REQUIRE_FALSE(interpreter.step().oom);
  REQUIRE(backend.issued.size() == s.instructions.size());
  for (size_t i = 0; i < backend.issued.size(); ++i) CHECK(backend.issued[i] == static_cast<ir::InstrId>(i));
  CHECK(backend.steps == 1);
}

TEST_CASE("losses are per model, in schedule order, and fall over steps") {
  // Two sub-arrays of one BERT each: two losses (MLM + NSP summed per model).
  const Schedule s =
      policies::build_plain_schedule(steps("bert-mini", {1, 1}, transforms::OptimizerKind::adam));
  auto backend = exec::make_backend("cpu");
  exec::Interpreter interpreter(s, *backend);
  const exec::StepResult first = interpreter.step();
  REQUIRE(first.losses.size() == 2);
  // MLM over 96 tokens + NSP over 2 classes at initialisation: about ln 96 + ln 2 = 5.26.
  for (double l : first.losses) CHECK(l == doctest::Approx(5.26).epsilon(0.1));
  double last = 0;
  for (int i = 0; i < 20; ++i) last = interpreter.step().losses[0];
  CHECK(last < first.losses[0] - 0.5);  // 21 Adam steps on one batch memorise it
}

TEST_CASE("an op kind without a kernel is refused before anything runs") {
  Schedule s = policies::build_plain_schedule(steps("resnet-mini", {1}));
  s.graph.ops[3].kind = ir::OpKind::opaque;
  auto backend = exec::make_backend("cpu");
  CHECK_THROWS_WITH_AS(exec::Interpreter(s, *backend), doctest::Contains("which mutwo cannot execute"),
                       mutwo::Error);
}

TEST_CASE("an op listing fewer inputs than its kernel reads is refused naming the op, not a crash") {
  // A hand-edited schedule's optimizer step with no inputs (optimizer kinds have no shape rules)
  // read past its inputs and crashed the executor.
  Schedule s = policies::build_plain_schedule(steps("resnet-mini", {1}));
  ir::Op* step = nullptr;
  for (ir::Op& op : s.graph.ops) {
    if (step == nullptr && op.kind == ir::OpKind::adam_step) step = &op;
  }
  REQUIRE(step != nullptr);
  step->inputs.clear();
  ir::link(s.graph);
  CHECK_THROWS_WITH_AS(
      one_step(s),
      doctest::Contains(
          ("'" + step->name + "' (adam_step): its kind reads input 0, and it lists 0 inputs").c_str()),
      mutwo::Error);
}

TEST_CASE("devices: unknown names and CUDA in a CPU-only build are errors naming the device") {
  CHECK_THROWS_WITH_AS(exec::make_backend("tpu"), "unknown device 'tpu'; valid: cpu, cuda, cuda:N",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(exec::make_backend("cuda:x"), doctest::Contains("expected cuda:N"), mutwo::Error);
#ifndef MUTWO_WITH_CUDA
  CHECK_THROWS_WITH_AS(exec::make_backend("cuda"),
                       doctest::Contains("needs mutwo built against a LibTorch with CUDA"), mutwo::Error);
#endif
  CHECK_THROWS_WITH_AS(exec::make_backend("cpu")->set_memory_fraction(0.5),
                       doctest::Contains("needs a CUDA device"), mutwo::Error);
}

TEST_CASE("median of step times: the middle value, or the mean of the two middle values rounded down") {
  CHECK(exec::median_ns({}) == 0);
  CHECK(exec::median_ns({5}) == 5);
  CHECK(exec::median_ns({9, 1, 5}) == 5);
  CHECK(exec::median_ns({4, 1, 3, 2}) == 2);  // (2 + 3) / 2 = 2.5 -> 2
  CHECK(exec::median_ns({10, 20}) == 15);
}

TEST_CASE("measure_schedule: warm-up, timed steps, median, losses; an OOM is a result, not a throw") {
  const Schedule s = policies::build_plain_schedule(steps("resnet-mini", {2}));
  exec::RunOptions options;
  options.warmup_iterations = 1;
  options.timed_iterations = 3;
  const exec::Measurement m = exec::measure_schedule(s, options);
  CHECK_FALSE(m.oom);
  CHECK(m.device == "cpu");
  CHECK(m.warmup_iterations == 1);
  CHECK(m.iterations == 3);
  REQUIRE(m.step_times_ns.size() == 3);
  CHECK(m.step_time_ns == exec::median_ns(m.step_times_ns));
  CHECK(m.step_time_min_ns <= m.step_time_ns);
  CHECK(m.step_time_ns <= m.step_time_max_ns);
  CHECK(m.peak_source == "accounted");
  CHECK(m.peak_bytes == m.accounted_peak_bytes);
  CHECK(m.first_losses.size() == 2);
  CHECK(m.losses.size() == 2);
  CHECK(m.losses[0] != m.first_losses[0]);

  options.memory_limit_bytes = m.resident_bytes + 1024;
  const exec::Measurement oom = exec::measure_schedule(s, options);
  CHECK(oom.oom);
  CHECK(oom.iterations == 0);
  CHECK(oom.oom_message.find("out of memory at instruction") == 0);

  options.timed_iterations = 0;
  CHECK_THROWS_WITH_AS(exec::measure_schedule(s, options), "run: timed iterations 0 must be >= 1",
                       mutwo::Error);
  options.timed_iterations = ir::kMaxRunSteps + 1;  // --iters 1000000000 ran for days
  CHECK_THROWS_WITH_AS(exec::measure_schedule(s, options),
                       "run: 1 warm-up and 10001 timed iterations: each must be at most 10000", mutwo::Error);
}

TEST_CASE("a stop poll (Python's Ctrl-C) ends a run or a profile before its next step, no result kept") {
  const Schedule s = policies::build_plain_schedule(steps("resnet-mini", {1}));
  int32_t polls = 0;
  exec::RunOptions options;
  options.warmup_iterations = 2;
  options.timed_iterations = 5;
  options.stop_requested = [&polls] { return ++polls == 4; };  // asked to stop before the 4th step
  CHECK_THROWS_WITH_AS(exec::measure_schedule(s, options), "run: interrupted before step 4 of 7",
                       mutwo::InterruptedError);
  CHECK(polls == 4);
  polls = 0;
  options.stop_requested = [&polls] { return ++polls > 100; };  // polled once per step, never stopping
  CHECK(exec::measure_schedule(s, options).iterations == 5);
  CHECK(polls == 7);

  exec::ProfileOptions profile;
  profile.warmup_iterations = 1;
  profile.measured_iterations = 3;
  polls = 0;
  profile.stop_requested = [&polls] { return ++polls == 2; };
  CHECK_THROWS_WITH_AS(exec::profile_schedule(s, profile), "profile: interrupted before step 2 of 4",
                       mutwo::InterruptedError);
}

TEST_CASE("back-to-back timed steps (the steady state) train exactly as steps timed one by one") {
  // RunOptions::back_to_back (the default) times the interval between consecutive step ends, the
  // host never waiting between steps; the training itself is the same: the same seed gives the
  // same first and last losses, bit for bit, as the synchronised per-step timing.
  const Schedule s = policies::build_plain_schedule(steps("resnet-mini", {2}));
  exec::RunOptions options;
  options.warmup_iterations = 1;
  options.timed_iterations = 4;
  const exec::Measurement steady = exec::measure_schedule(s, options);
  options.back_to_back = false;
  const exec::Measurement synced = exec::measure_schedule(s, options);
  for (const exec::Measurement* m : {&steady, &synced}) {
    CHECK_FALSE(m->oom);
    CHECK(m->iterations == 4);
    REQUIRE(m->step_times_ns.size() == 4);
    for (int64_t t : m->step_times_ns) CHECK(t > 0);
    CHECK(m->step_time_ns == exec::median_ns(m->step_times_ns));
  }
  CHECK(steady.first_losses == synced.first_losses);
  CHECK(steady.losses == synced.losses);
  CHECK(steady.losses != steady.first_losses);
  CHECK(steady.peak_bytes == synced.peak_bytes);
  // An OOM in the back-to-back loop is a result too.
  options.back_to_back = true;
  options.memory_limit_bytes = steady.resident_bytes + 1024;
  const exec::Measurement oom = exec::measure_schedule(s, options);
  CHECK(oom.oom);
  CHECK(oom.iterations == 0);
  CHECK(oom.step_times_ns.empty());
}

TEST_CASE("wrapped iterations train exactly as steps one by one; the accounted peak is the simulator's") {
  // A multiplexed two-sub-array plan with swaps and model state on the host (capuchin at 60 % of
  // the activations), run as 3 unrolled iterations with merged boundaries
  // (ir/unrolled_schedule.hpp): every iteration's losses equal those of 3 plain steps from the
  // same seed, bit for bit (same ops, same dropout masks and Adam steps, another order), and the
  // accounting, which follows the memory rule in issue order as the simulator does, peaks where the
  // simulator's wrapped replay peaks.
  const auto cost = analytic();
  const std::vector<ir::Graph> parts = steps("bert-mini", {2, 2});
  const Schedule plain = policies::build_plain_schedule(parts);
  const sim::Prediction unlimited = sim::simulate(plain, *cost, sim_options(-1));
  const int64_t limit = unlimited.resident_bytes + (unlimited.peak_bytes - unlimited.resident_bytes) * 6 / 10;
  const policies::ArrayPlan plan =
      policies::plan_sub_arrays(parts, *policies::builtin_policies().create("capuchin"), *cost, limit,
                                policies::SubArrayOrder::multiplexed, /*state_offload=*/true);
  const Schedule& s = plan.result.schedule;
  REQUIRE(plan.multiplexed);
  REQUIRE(s.sub_arrays.size() == 2);
  REQUIRE_FALSE(s.host_state.empty());

  const ir::BoundaryMerge merge = ir::boundary_merge(s, costmodel::op_durations_ns(*cost, s.graph));
  const ir::UnrolledSchedule program = ir::unroll_iterations(s, 3, &merge);
  sim::SimOptions o = sim_options(-1);
  o.iterations = 3;
  o.wrap_iterations = true;
  const sim::Prediction p = sim::simulate(s, *cost, o);
  REQUIRE(p.wrapped);

  auto backend = exec::make_backend("cpu");
  exec::Interpreter wrapped(s, *backend);
  const exec::StepResult r = wrapped.run_iterations(program);
  REQUIRE_FALSE(r.oom);
  CHECK(r.resident_bytes == p.resident_bytes);
  CHECK(wrapped.steps_done() == 3);
  // The interpreter accounts in issue order (as a caching allocator sees allocations), the
  // simulator at each instruction's simulated start. Merged boundaries issue a prefetch of
  // sub-array 1's state after tail instructions that it overtakes in time, so the simulator's peak
  // (a swap_in of sub-array 1's weight while sub-array 2's backward peaks) is the higher, here by
  // 4,096 B (1.0 %): a conservative prediction.
  CHECK(r.accounted_peak_bytes == 422'912);
  CHECK(p.peak_bytes == 427'008);
  // Unwrapped, the same program runner and the simulator agree to the byte.
  {
    sim::SimOptions unwrapped = o;
    unwrapped.wrap_iterations = false;
    auto b = exec::make_backend("cpu");
    exec::Interpreter plain_run(s, *b);
    const exec::StepResult u = plain_run.run_iterations(ir::unroll_iterations(s, 3));
    CHECK(u.accounted_peak_bytes == sim::simulate(s, *cost, unwrapped).peak_bytes);
  }

  auto backend2 = exec::make_backend("cpu");
  exec::Interpreter stepped(s, *backend2);
  for (size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    const exec::StepResult step = stepped.step();
    REQUIRE_FALSE(step.oom);
    CHECK(wrapped.back_to_back_losses(k) == step.losses);
  }
  for (const ir::Tensor& t : s.graph.tensors) {
    if (t.role != ir::TensorRole::weight) continue;
    CAPTURE(t.name);
    CHECK(at::equal(wrapped.tensor(t.id).cpu(), stepped.tensor(t.id).cpu()));
  }

  // measure_schedule runs the timed steps so, and refuses it where steps are not back to back.
  exec::RunOptions options;
  options.warmup_iterations = 1;
  options.timed_iterations = 3;
  options.wrap = merge;
  const exec::Measurement m = exec::measure_schedule(s, options);
  CHECK(m.wrapped);
  CHECK(m.iterations == 3);
  CHECK(m.step_times_ns.size() == 3);
  options.back_to_back = false;
  CHECK_THROWS_WITH_AS(exec::measure_schedule(s, options),
                       "wrapped iterations run back to back as one program: not with --sync-each-step",
                       Error);
}

TEST_CASE("the profiler's trace has one measured duration per op and replays through the measured source") {
  const Schedule s = policies::build_plain_schedule(steps("bert-mini", {2}));
  exec::ProfileOptions options;
  options.warmup_iterations = 1;
  options.measured_iterations = 3;
  const ir::Trace trace = exec::profile_schedule(s, options);
  CHECK(trace.device == "cpu");
  REQUIRE(trace.op_duration_ns.size() == s.graph.ops.size());
  int64_t sum = 0;
  for (int64_t d : trace.op_duration_ns) {
    CHECK(d >= 0);
    sum += d;
  }
  CHECK(sum > 0);
  // It survives its JSON round trip and prices every op of the same array's schedule from
  // measurements (op signatures match); the plain replay's step is the sum of the op times.
  const ir::Trace back = io::trace_from_json(io::trace_to_json(trace));
  CHECK(back.op_duration_ns == trace.op_duration_ns);
  const auto measured = costmodel::builtin_cost_sources().create(
      "measured", costmodel::find_device("a100-40gb"), costmodel::CostSourceInputs{{back}});
  const auto& model = dynamic_cast<const costmodel::MeasuredCostModel&>(*measured);
  const Schedule again = policies::build_plain_schedule(steps("bert-mini", {2}));
  const costmodel::MeasuredCoverage coverage = costmodel::measured_coverage(model, again.graph);
  CHECK(coverage.measured_ops == coverage.ops);
  const sim::Prediction p = sim::simulate(again, *measured, sim_options(-1));
  // The plain replay's step is the sum of the measured source's prices. Identical layers share the
  // median of their times, so it is close to the raw sum, but not equal: one op the loaded CI host
  // preempted moves the sum and not the medians, so only the prices are compared exactly.
  int64_t priced = 0;
  for (const ir::Op& op : again.graph.ops) priced += measured->op_duration_ns(again.graph, op);
  CHECK(p.step_time_ns == priced);
}

TEST_CASE("the profiler records each op's host issue time where asked (always on a GPU)") {
  const Schedule s = policies::build_plain_schedule(steps("bert-mini", {2}));
  exec::ProfileOptions options;
  options.warmup_iterations = 1;
  options.measured_iterations = 3;
  // On the cpu by default none: an op's issue there is its work, not a host in front of a device.
  CHECK(exec::profile_schedule(s, options).op_host_ns.empty());
  options.time_host = true;
  const ir::Trace trace = exec::profile_schedule(s, options);
  REQUIRE(trace.op_host_ns.size() == s.graph.ops.size());
  // Every op of a plain schedule is computed once a step; its issue (from before() to after(), the op
  // timers' calls taken out) holds its kernel, which on the cpu runs inside the call: > 0 for every
  // op. (Host and op times come from separate steps, so no per-op inequality between them holds.)
  for (size_t k = 0; k < trace.op_host_ns.size(); ++k) {
    CAPTURE(s.graph.ops[k].name);
    CHECK(trace.op_host_ns[k] > 0);
  }
  // The measured source charges the host timeline these medians (op signatures match).
  const ir::Trace back = io::trace_from_json(io::trace_to_json(trace));
  CHECK(back.op_host_ns == trace.op_host_ns);
  const auto measured = costmodel::builtin_cost_sources().create(
      "measured", costmodel::find_device("a100-40gb"), costmodel::CostSourceInputs{{back}});
  const ir::Op& first = s.graph.ops.front();
  const int64_t host = measured->op_host_ns(s.graph, first, costmodel::HostIssuer::cpp);
  CHECK(host > 0);
  CHECK(host != 14'100);  // not the catalog's C++ figure
}

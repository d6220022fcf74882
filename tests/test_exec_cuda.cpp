// The executor on a CUDA device (registered with ctest only in a MUTWO_WITH_CUDA build; compiled in
// every build so it cannot rot): CUDA steps against CPU steps from the same state, swaps and
// recomputes across the three streams, the allocator cap and its OOM, CUDA-graph replay, the
// profiler's event timings, and bench-ops' kernel timings.
#include "tests/support/torch_doctest.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/link_fit.hpp"
#include "exec/device_backend.hpp"
#include "exec/executor.hpp"
#include "exec/interpreter.hpp"
#include "ir/optimizer_kernels.hpp"
#include "policies/array_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/simulator.hpp"
#include "tests/support/exec_arrays.hpp"

namespace {

using namespace mutwo;
using ir::Schedule;

std::vector<ir::Graph> steps(const std::string& model, const std::vector<int32_t>& partition, ir::DType dtype,
                             int64_t batch = 0, int64_t image = 0) {
  return test::array_steps(model, partition, transforms::OptimizerKind::adam, dtype, batch, image);
}

// Every persistent tensor after `count` steps, on the CPU.
std::vector<at::Tensor> state_after(exec::Interpreter& interpreter, int count) {
  for (int i = 0; i < count; ++i) REQUIRE_FALSE(interpreter.step().oom);
  std::vector<at::Tensor> state;
  for (const ir::Tensor& t : interpreter.schedule().graph.tensors) {
    state.push_back(ir::is_persistent(t.role) ? interpreter.tensor(t.id).cpu() : at::Tensor());
  }
  return state;
}

// The tensors of `a` and `b` (one graph's) that differ beyond rtol/atol; the first few are named with
// their largest difference, so that a failure on a GPU says where the two steps part. With
// `atol_per_magnitude`, a tensor's atol is scaled by its largest |a| (at least 1).
int64_t count_not_close(const ir::Graph& graph, const std::vector<at::Tensor>& a,
                        const std::vector<at::Tensor>& b, double rtol, double atol,
                        bool atol_per_magnitude = false) {
  int64_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].defined()) continue;
    const double tensor_atol =
        atol_per_magnitude ? atol * std::max(1.0, a[i].abs().max().item<double>()) : atol;
    if (at::allclose(a[i], b[i], rtol, tensor_atol)) continue;
    if (++bad <= 8) {
      const at::Tensor x = a[i].to(at::kDouble), y = b[i].to(at::kDouble);
      MESSAGE("tensor " << i << " '" << graph.tensors[i].name << "' (" << ir::role_name(graph.tensors[i].role)
                        << "): max |a - b| " << (x - y).abs().max().item<double>() << ", max |a| "
                        << x.abs().max().item<double>() << ", elements differing "
                        << (x - y).abs().gt(tensor_atol + rtol * y.abs()).sum().item<int64_t>() << " of "
                        << x.numel());
    }
  }
  return bad;
}

// Deterministic cuDNN algorithms (no atomics in the weight gradients, no benchmark choice), so that
// two runs of one step on one GPU agree to rounding and a stream race cannot hide in their noise.
void deterministic_cudnn() {
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
}

}  // namespace

TEST_CASE("a CUDA step from the CPU's state ends where the CPU step ends (fp64)") {
  // Models without dropout, so both devices draw no random numbers after initialisation; the CUDA
  // interpreter starts from the CPU interpreter's leaves. cuDNN / cuBLAS sum in other orders than
  // the CPU: fp64 gradients agree to ~1e-14 absolute. Adam then divides by sqrt(v) + eps: a gradient
  // near 0 moves its weight by lr * g / (|g| + eps), so a gradient's error reaches the weight
  // multiplied by up to lr / eps = 1e5 (lr 1e-3, eps 1e-8). On an H200 (2026-11-27) the largest
  // difference after one step was 1.4e-9 (layer3.1.bn2.bias); checked at 1e-8 absolute, 1e-9
  // relative, where a wrong kernel or a race would miss by many orders.
  deterministic_cudnn();
  for (const std::string model : {"resnet-mini", "dlrm-mini"}) {
    CAPTURE(model);
    const Schedule s = policies::build_plain_schedule(steps(model, {2}, ir::DType::f64));
    auto cpu = exec::make_backend("cpu");
    auto cuda = exec::make_backend("cuda");
    exec::Interpreter on_cpu(s, *cpu);
    exec::Interpreter on_cuda(s, *cuda);
    int64_t copied = 0;
    for (const ir::Tensor& t : s.graph.tensors) {
      const bool leaf =
          ir::is_persistent(t.role) || t.role == ir::TensorRole::input || t.role == ir::TensorRole::label;
      if (!leaf) continue;
      on_cuda.set_tensor(t.id, on_cpu.tensor(t.id));
      ++copied;
    }
    REQUIRE(copied > 0);
    // One step first: where a first step already differs, the forward or backward does; else Adam.
    const std::vector<at::Tensor> a1 = state_after(on_cpu, 1);
    const std::vector<at::Tensor> b1 = state_after(on_cuda, 1);
    CHECK(count_not_close(s.graph, a1, b1, 1e-9, 1e-8) == 0);
    // The second step's gradients are taken at weights that already differ by Adam's amplified
    // rounding, so they differ in proportion to their own size: on an H100 (2026-11-27) by up to
    // 1.7e-8 where the tensor's largest gradient was 6.2 (2.7e-9 of it; 18 elements of resnet-mini's
    // weight gradients past an absolute 1e-8). Checked at 1e-8 of each tensor's largest value.
    const std::vector<at::Tensor> a = state_after(on_cpu, 1);
    const std::vector<at::Tensor> b = state_after(on_cuda, 1);
    CHECK(count_not_close(s.graph, a, b, 1e-9, 1e-8, /*atol_per_magnitude=*/true) == 0);
    CHECK(on_cuda.steps_done() == 2);
  }
}

TEST_CASE("fused Adam on CUDA (ATen's _fused_adam_) ends where the CPU's single-tensor step ends (fp64)") {
  // The CPU runs a fused step as torch.optim's single-tensor form (exec/kernels/optimizer.cpp); the GPU
  // runs ATen's multi-tensor kernel. Same update, other rounding: the tolerance of the plain Adam case.
  deterministic_cudnn();
  const Schedule s = policies::build_plain_schedule(
      test::array_steps("resnet-mini", {2}, transforms::OptimizerKind::adam_fused, ir::DType::f64));
  REQUIRE(std::any_of(s.graph.ops.begin(), s.graph.ops.end(),
                      [](const ir::Op& op) { return ir::is_fused_update(op); }));
  auto cpu = exec::make_backend("cpu");
  auto cuda = exec::make_backend("cuda");
  exec::Interpreter on_cpu(s, *cpu);
  exec::Interpreter on_cuda(s, *cuda);
  for (const ir::Tensor& t : s.graph.tensors) {
    if (ir::is_persistent(t.role) || t.role == ir::TensorRole::input || t.role == ir::TensorRole::label)
      on_cuda.set_tensor(t.id, on_cpu.tensor(t.id));
  }
  const std::vector<at::Tensor> a = state_after(on_cpu, 1);
  const std::vector<at::Tensor> b = state_after(on_cuda, 1);
  CHECK(count_not_close(s.graph, a, b, 1e-9, 1e-8) == 0);
}

TEST_CASE("swaps and recomputes on the CUDA streams leave the state of the none schedule") {
  // Three streams and events: a swap-in read before its copy finished, or memory reused before a
  // copy stream was done with it, would corrupt values far beyond this tolerance.
  const auto cost =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("h100-sxm-80gb"));
  const std::vector<ir::Graph> parts = steps("resnet-mini", {2, 2}, ir::DType::f32, 16, 64);
  const auto none = policies::builtin_policies().create("none");
  const Schedule plain =
      policies::plan_sub_arrays(parts, *none, *cost, int64_t{1} << 40, policies::SubArrayOrder::back_to_back)
          .result.schedule;
  deterministic_cudnn();
  auto backend = exec::make_backend("cuda");
  exec::Interpreter reference_run(plain, *backend);
  const std::vector<at::Tensor> reference = state_after(reference_run, 2);
  {
    // The none schedule again: its own noise, the floor under every comparison below.
    exec::Interpreter again(plain, *backend);
    CHECK(count_not_close(plain.graph, reference, state_after(again, 2), 1e-5, 1e-7) == 0);
  }
  const sim::Prediction p = sim::simulate(plain, *cost, test::sim_options(-1));
  const int64_t limit = p.resident_bytes + (p.peak_bytes - p.resident_bytes) / 2;
  int swaps = 0;
  for (const std::string name : {"vdnn", "capuchin", "mutwo", "dtr", "checkpoint"}) {
    for (auto order : {policies::SubArrayOrder::multiplexed, policies::SubArrayOrder::back_to_back}) {
      CAPTURE(name);
      const Schedule s =
          policies::plan_sub_arrays(parts, *policies::builtin_policies().create(name), *cost, limit, order)
              .result.schedule;
      for (const auto& i : s.instructions) swaps += i.kind == ir::InstrKind::swap_out ? 1 : 0;
      exec::Interpreter run(s, *backend);
      CHECK(count_not_close(s.graph, reference, state_after(run, 2), 1e-5, 1e-7) == 0);
    }
  }
  CHECK(swaps > 0);
}

TEST_CASE("a cap below the step's needs is an OOM result; without it the allocator's peak is reported") {
  const Schedule s =
      policies::build_plain_schedule(steps("resnet18", {2}, ir::DType::f32, /*batch=*/32, /*image=*/224));
  exec::RunOptions options;
  options.device = "cuda";
  options.warmup_iterations = 1;
  options.timed_iterations = 3;
  options.memory_cap_fraction = 0.002;  // ~160 MB of an 80 GB card: far below 2 resnet18 at batch 32
  const exec::Measurement capped = exec::measure_schedule(s, options);
  CHECK(capped.oom);
  CHECK(capped.oom_message.find("out of memory") != std::string::npos);
  exec::make_backend("cuda")->set_memory_fraction(1.0);  // the cap is process-wide: lift it

  options.memory_cap_fraction = 0.0;
  const exec::Measurement m = exec::measure_schedule(s, options);
  REQUIRE_FALSE(m.oom);
  CHECK(m.peak_source == "cuda_allocator");
  CHECK(m.iterations == 3);
  // The allocator holds what the accounting counts, plus library workspaces (cuBLAS, cuDNN).
  CHECK(m.peak_bytes >= m.accounted_peak_bytes * 9 / 10);
  CHECK(m.step_time_ns > 0);
  CHECK(m.device.find("cpu") == std::string::npos);
}

TEST_CASE(
    "back-to-back steps on the GPU: per-step intervals between CUDA events, same losses as synchronised "
    "steps") {
  const Schedule s = policies::build_plain_schedule(steps("resnet-mini", {2}, ir::DType::f32));
  exec::RunOptions options;
  options.device = "cuda";
  options.warmup_iterations = 2;
  options.timed_iterations = 5;
  const exec::Measurement steady = exec::measure_schedule(s, options);
  options.back_to_back = false;
  const exec::Measurement synced = exec::measure_schedule(s, options);
  REQUIRE_FALSE(steady.oom);
  REQUIRE(steady.step_times_ns.size() == 5);
  for (int64_t t : steady.step_times_ns) CHECK(t > 0);
  REQUIRE(steady.losses.size() == synced.losses.size());
  for (size_t i = 0; i < steady.losses.size(); ++i)
    CHECK(steady.losses[i] == doctest::Approx(synced.losses[i]));
  // How the two intervals compare is a timing, not a property: the device check reports it (on an H100
  // the steady interval of this tiny model once came out 15 % over the synchronised one).
  CHECK(synced.step_time_ns > 0);
}

TEST_CASE("a captured CUDA graph replays the step") {
  const Schedule s = policies::build_plain_schedule(steps("resnet-mini", {2}, ir::DType::f32));
  exec::RunOptions options;
  options.device = "cuda";
  options.warmup_iterations = 2;
  options.timed_iterations = 5;
  options.cuda_graph = true;
  const exec::Measurement m = exec::measure_schedule(s, options);
  CHECK_FALSE(m.oom);
  CHECK(m.cuda_graph);
  CHECK(m.iterations == 5);
  CHECK(m.step_time_ns > 0);
}

TEST_CASE("the profiler times every op with CUDA events") {
  const Schedule s = policies::build_plain_schedule(steps("bert-mini", {2}, ir::DType::f32));
  exec::ProfileOptions options;
  options.device = "cuda";
  const ir::Trace trace = exec::profile_schedule(s, options);
  REQUIRE(trace.op_duration_ns.size() == s.graph.ops.size());
  int64_t positive = 0;
  for (int64_t d : trace.op_duration_ns) positive += d > 0 ? 1 : 0;
  CHECK(positive == static_cast<int64_t>(s.graph.ops.size()));  // every kernel takes > 0 ns
  CHECK(costmodel::match_device(trace.device).has_value());
  // The host side: each op's issue (dispatch and launches) measured, > 0 ns, and far below a second.
  REQUIRE(trace.op_host_ns.size() == s.graph.ops.size());
  for (int64_t h : trace.op_host_ns) {
    CHECK(h > 0);
    CHECK(h < 1'000'000'000);
  }
}

TEST_CASE("bench-ops times every kernel at every precision the GPU runs, and restores PyTorch's TF32 flags") {
  const bool cublas_tf32 = at::globalContext().allowTF32CuBLAS();
  const bool cudnn_tf32 = at::globalContext().allowTF32CuDNN();
  ir::BenchOpsOptions options;
  options.device = "cuda";
  for (const std::string& kernel : ir::bench_kernel_names()) {
    for (const ir::BenchShape& s : ir::default_bench_grid(kernel, true)) options.shapes.push_back(s);
  }
  const std::vector<ir::KernelTiming> timings = exec::bench_ops(options);
  // fp32 and fp16 everywhere; tf32 (GEMM and conv shapes only) and bf16 from compute capability 8.
  CHECK(timings.size() >= 2 * options.shapes.size());
  for (const ir::KernelTiming& t : timings) {
    CHECK(t.time_ns >= 1);
    CHECK(t.min_ns <= t.time_ns);
    CHECK(t.time_ns <= t.max_ns);
  }
  CHECK(at::globalContext().allowTF32CuBLAS() == cublas_tf32);
  CHECK(at::globalContext().allowTF32CuDNN() == cudnn_tf32);

  // A 4096^3 GEMM on tensor cores (fp16) is faster than on CUDA cores with TF32 off (fp32): on every
  // GPU with tensor cores the peak ratio is >= 4x (V100 125 vs 15.7 TFLOP/s).
  ir::BenchOpsOptions big;
  big.device = "cuda";
  big.shapes = {{"gemm", {4096, 4096, 4096}, "test"}};
  big.precisions = {"fp32", "fp16"};
  const std::vector<ir::KernelTiming> gemm = exec::bench_ops(big);
  REQUIRE(gemm.size() == 2);
  CHECK(gemm[1].time_ns * 2 < gemm[0].time_ns);
}

TEST_CASE("bench-host times the PCIe link with pinned copies on the copy streams, and the launch interval") {
  ir::BenchHostOptions options;
  options.device = "cuda";
  options.sizes_bytes = {64 << 10, 4 << 20, 64 << 20};
  const ir::HostBench b = exec::bench_host(options);
  REQUIRE(b.copies.size() == 9);
  const costmodel::LinkFit fit = costmodel::fit_link(b.copies);
  // A PCIe 3.0 to 5.0 x16 link moves pinned copies at 10 to 64 GB/s each way.
  CHECK(fit.h2d.gbps > 5);
  CHECK(fit.h2d.gbps < 70);
  CHECK(fit.d2h.gbps > 5);
  CHECK(fit.d2h.gbps < 70);
  // Both ways at once are never slower than one after another (beyond noise).
  CHECK(fit.duplex_speedup > 0.9);
  // A launch costs the host a few us and the GPU sees kernels at most that often.
  CHECK(b.dispatch_ns > 100);
  CHECK(b.dispatch_ns < 1'000'000);
  CHECK(b.kernel_interval_ns > 100);
}

// `_mutwo`: the C++ side of the Python module `mutwo` (python/mutwo/__init__.py wraps it). Every
// function computes what the matching command computes, through api/ (the same request, result and
// JSON), and returns Python values: what `mutwo <command> --json` prints, as dicts and lists.
// mutwo's errors become Python exceptions (mutwo.Error and its subclasses) carrying mutwo's message;
// long searches release the GIL and report progress through a Python callable.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/compare_json.hpp"
#include "api/devices.hpp"
#include "api/experiment.hpp"
#include "api/models.hpp"
#include "api/profile.hpp"
#include "api/replay_trace.hpp"
#include "api/run.hpp"
#include "api/search.hpp"
#include "api/server_search.hpp"
#include "api/simulate.hpp"
#include "api/simulate_trace.hpp"
#include "api/trace.hpp"
#include "api/values.hpp"
#include "costmodel/cost_setup.hpp"
#include "costmodel/device_overrides.hpp"
#include "costmodel/kernel_transfer.hpp"
#include "experiments/db_merge.hpp"
#include "experiments/executor_loader.hpp"
#include "experiments/results_db.hpp"
#include "experiments/results_db_error.hpp"
#include "experiments/run_pipeline.hpp"
#include "io/trace_file.hpp"
#include "io/trace_import.hpp"
#include "ir/graph.hpp"
#include "ir/op_kind.hpp"
#include "policies/array_plan.hpp"
#include "policies/server_search.hpp"
#include "policies/state_offload.hpp"
#include "python/arguments.hpp"
#include "sim/timeline_export.hpp"
#include "support/error.hpp"

namespace py = pybind11;

namespace mutwo::python {
namespace {

// One training step's graph (k models fused), as `mutwo trace` writes it.
struct StepGraph {
  ir::Graph graph;
};

StepGraph trace_step(const std::string& model, int32_t models, int64_t batch, int64_t seq_len,
                     int64_t image_size, const std::string& dtype, const std::string& precision,
                     const std::string& optimizer) {
  return {api::training_step({model, models, batch, seq_len, image_size, dtype, precision, optimizer, {}})};
}

py::object graph_ops(const ir::Graph& g) {
  py::list out;
  for (const ir::Op& op : g.ops) {
    py::dict d;
    d["name"] = op.name;
    d["kind"] = std::string(ir::kind_name(op.kind));
    d["phase"] = std::string(ir::phase_name(op.phase));
    d["flops"] = op.flops;
    d["bytes_read"] = op.bytes_read;
    d["bytes_written"] = op.bytes_written;
    out.append(std::move(d));
  }
  return out;
}

py::object simulate(const std::string& model, int32_t models, const std::vector<int32_t>& partition,
                    int64_t batch, int64_t seq_len, int64_t image_size, const std::string& dtype,
                    const std::string& precision, const std::string& optimizer, const std::string& lean_ops,
                    const std::optional<std::string>& gpu, const py::object& memory,
                    const std::string& cost_source, const std::vector<std::string>& traces,
                    const std::string& policy, const std::string& order, bool state_offload,
                    const std::string& optimizer_on, const std::string& host_mode, int32_t iterations,
                    bool wrap, bool timeline, const std::string& length_histogram, int64_t length_bin_tokens,
                    int64_t length_align_tokens) {
  // Read only with a policy or state_offload, but a misspelt name is refused, not ignored.
  policies::parse_order(order);
  policies::parse_optimizer_place(optimizer_on);
  const CostChoice c = cost_choice(gpu, memory, cost_source, traces);
  api::SimulateRequest request;
  request.source.array = array_request(model, models, partition, batch, seq_len, image_size, dtype, precision,
                                       optimizer, lean_ops);
  request.policy = policy;
  request.order = order;
  request.state_offload = state_offload;
  request.optimizer_on = optimizer_on;
  request.host_mode = host_mode;
  request.iterations = iterations;
  request.wrap = wrap;
  request.record_timeline = timeline;
  request.length_histogram = length_histogram;
  request.length_bin_tokens = length_bin_tokens;
  request.length_align_tokens = length_align_tokens;
  api::SimulateResult r;
  {
    py::gil_scoped_release release;
    r = api::simulate(request, *c.cost, c.device);
  }
  nlohmann::json j = api::simulate_json(r.schedule, r.prediction, r.host_mode, c.device, c.source,
                                        c.cost->describe(r.schedule.graph));
  if (!r.padded_steps.empty()) j["padded_lengths"] = api::padded_lengths_json(request, r);
  py::dict out = to_python(j);
  if (timeline) {
    out["timeline"] =
        to_python(nlohmann::json::parse(sim::chrome_trace_json(r.prediction, r.schedule.graph.name)));
  }
  return out;
}

// Trace mode of `mutwo simulate`: the step one measured trace recorded (or an execution trace and
// its profiler trace), replayed and priced from that replay, as `mutwo simulate --trace --json`.
py::object simulate_trace(const std::vector<std::string>& traces, const std::string& format,
                          const std::optional<std::string>& gpu, const py::object& memory,
                          const std::string& cost_source, const std::string& policy,
                          const std::string& host_mode, int32_t iterations, bool wrap, bool timeline) {
  costmodel::CostSetup setup;
  setup.gpu = gpu.value_or("");  // none: the GPU the trace ran on (measured source), else the A100
  setup.overrides.memory_bytes = memory_bytes(memory);
  setup.cost_source = cost_source;
  setup.trace_files = traces;
  if (!format.empty()) setup.trace_format = io::parse_trace_format(format);
  setup.traces_are_step = true;
  api::SimulateRequest request;
  request.policy = policy;
  request.host_mode = host_mode;
  request.iterations = iterations;
  request.wrap = wrap;
  request.record_timeline = timeline;
  const CostChoice c = cost_choice(std::move(setup));
  api::TraceSimulation t;
  {
    py::gil_scoped_release release;
    t = api::simulate_trace(std::move(request), c.setup, c.inputs, c.device, *c.cost);
  }
  py::dict out = to_python(api::simulate_json(t.result.schedule, t.result.prediction, t.result.host_mode,
                                              c.device, cost_source, t.cost_source_detail, &t.traced));
  if (timeline) {
    out["timeline"] = to_python(
        nlohmann::json::parse(sim::chrome_trace_json(t.result.prediction, t.result.schedule.graph.name)));
  }
  return out;
}

py::object search(const std::vector<std::string>& models, int64_t batch, int64_t seq_len, int64_t image_size,
                  const std::string& dtype, const std::string& precision, const std::string& lean_ops,
                  const std::string& host_mode, const std::string& optimizer,
                  const std::vector<std::string>& policies, int32_t top,
                  const std::optional<std::string>& gpu, const py::object& memory,
                  const std::string& cost_source, const std::vector<std::string>& traces,
                  const py::object& progress, const std::string& server,
                  const std::vector<std::string>& schemes, const std::vector<int32_t>& micro_batches,
                  const std::vector<int32_t>& packs, int32_t jobs) {
  if (models.empty()) throw Error("models = []: give at least one model, e.g. \"bert-base:8\"");
  check_range("jobs", jobs, 0, 4096);  // 0: one per hardware thread
  check_callable("progress", progress);
  if (server.empty() && !(schemes.empty() && micro_batches.empty() && packs.empty()))
    throw Error("schemes, micro_batches and packs place one model over a server's GPUs: give server= too");
  check_each("micro_batches", micro_batches, 1, policies::kMaxMicroBatches);
  check_each("packs", packs, 1, policies::kMaxLayerPacks);
  // As `mutwo search`: the named GPU, else the server's, else the A100; a server prices its own GPU.
  std::optional<costmodel::ServerSpec> spec;
  if (!server.empty()) spec = api::find_server_for(server, gpu.value_or(""));
  const CostChoice c =
      cost_choice(spec ? std::optional<std::string>(spec->gpu) : gpu, memory, cost_source, traces);
  api::SearchRequest request;
  request.models = models;
  request.batch_size = batch;
  request.seq_len = seq_len;
  request.image_size = image_size;
  request.dtype = dtype;
  request.precision = precision;
  request.lean_ops = lean_ops;
  request.host_mode = host_mode;
  request.optimizer = optimizer;
  request.policies = policies;
  request.top = top;
  request.jobs = jobs;
  // An exception the callable raises, or Ctrl-C, stops the search and reaches the caller.
  request.progress = search_progress(progress);
  const policies::SearchConfig config = api::search_config(request, *c.cost, c.device.memory_bytes);
  if (spec) {
    policies::ServerSearchConfig sc;
    sc.array = config;
    sc.server = *spec;
    sc.schemes = schemes;
    if (!micro_batches.empty()) sc.micro_batches = micro_batches;
    if (!packs.empty()) sc.packs = packs;
    policies::ServerSearchReport server_report;
    {
      py::gil_scoped_release release;
      server_report = policies::run_server_search(sc);
    }
    return to_python(api::server_search_json(server_report, sc));
  }
  policies::SearchReport report;
  {
    py::gil_scoped_release release;
    report = policies::run_search(config);
  }
  return to_python(api::search_json(report, c.device, c.source));
}

py::object replay(const std::string& trace, const std::optional<int64_t>& step, bool all,
                  double kernel_speedup, const std::vector<std::string>& what_if_gpus,
                  const std::string& what_if_source, const std::string& trace_gpu) {
  costmodel::kernel_pricers().find(what_if_source);  // read only with what-if GPUs; misspelt: refused
  api::ReplayTraceRequest request;
  request.trace = trace;
  request.step = step;
  request.all = all;
  request.kernel_speedup = kernel_speedup;
  request.what_if_gpus = what_if_gpus;
  request.what_if_source = what_if_source;
  request.trace_gpu = trace_gpu;
  api::ReplayTraceResult result;
  {
    py::gil_scoped_release release;
    result = api::replay_trace(request);
  }
  return to_python(api::replay_trace_json(result));
}

// The executor module is the one built with this extension (MUTWO_EXEC_MODULE_PATH) unless
// MUTWO_EXEC_MODULE names another: in a Python process there is no `mutwo` program beside which the
// loader looks.
void use_built_executor() {
#ifdef MUTWO_EXEC_MODULE_PATH
  setenv(ir::kExecutorModuleEnv, MUTWO_EXEC_MODULE_PATH, /*overwrite=*/0);
#endif
}

// A profiled step, as `mutwo profile --json` prints it: every op of the array's training step timed
// on LibTorch, the measured trace written to `output` (for the measured cost source), the GIL
// released while it runs.
py::object profile(const std::string& model, int32_t models, const std::vector<int32_t>& partition,
                   int64_t batch, int64_t seq_len, int64_t image_size, const std::string& dtype,
                   const std::string& precision, const std::string& optimizer, const std::string& lean_ops,
                   const std::string& output, const std::string& device, uint64_t seed, int32_t warmup,
                   int32_t iterations, bool host_times, const std::string& db, const std::string& gpu,
                   int32_t top) {
  check_range("top", top, 1, INT64_MAX);  // 0 listed no op
  // As the command's --gpu, which needs --db: without one no prediction is stored and a name went unread.
  if (!gpu.empty() && db.empty())
    throw Error(fmt::format("gpu = '{}' prices the ops stored in db=: give db too", gpu));
  experiments::ProfileRequest r;
  r.source.array = array_request(model, models, partition, batch, seq_len, image_size, dtype, precision,
                                 optimizer, lean_ops);
  r.device = device;
  r.seed = seed;
  r.warmup_iterations = warmup;
  r.measured_iterations = iterations;
  r.time_host = host_times;
  r.output = output;
  r.db = db;
  r.gpu = gpu;
  use_built_executor();
  r.stop_requested = python_interrupt();
  experiments::ProfileOutcome out;
  without_gil_interruptible([&] {
    const std::unique_ptr<ir::Executor> executor = experiments::load_executor("mutwo.profile");
    out = experiments::profile_pipeline(r, *executor);
  });
  return to_python(api::profile_json(out, output, top));
}

// An experiment spec run into a database, the GIL released; `progress(dict)` after each written
// task. An exception the callable raises stops the run at the next task (running ones finish and
// are written, as on SIGINT for the command) and is raised once it has stopped.
py::object experiment(const std::string& spec_path, const std::string& db_path, int jobs,
                      const py::object& progress) {
  check_range("jobs", jobs, 0, INT64_MAX);  // 0: one per CPU core
  check_callable("progress", progress);
  use_built_executor();  // a measured kind loads it
  const experiments::ExperimentSpec spec = experiments::read_spec(spec_path);
  // As `mutwo experiment`: the spec and an existing database checked before the file is opened to
  // write, so a refused spec creates no database and a damaged one is not written to.
  experiments::validate_experiment(spec);
  experiments::check_results_destination(db_path, "db");
  experiments::ResultsDb db = experiments::ResultsDb::open(db_path);
  std::atomic<bool> stop{false};
  std::optional<py::error_already_set> raised;
  experiments::RunnerOptions options;
  options.jobs = jobs;
  options.stop = &stop;
  // Called in this thread between tasks, where Ctrl-C (KeyboardInterrupt) also stops the run.
  options.on_progress = [&](const experiments::RunnerProgress& p) {
    py::gil_scoped_acquire acquire;
    if (raised) return;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (progress.is_none()) return;
      progress(py::dict(py::arg("tasks") = p.tasks, py::arg("tasks_skipped") = p.tasks_skipped,
                        py::arg("tasks_done") = p.tasks_done, py::arg("rows_written") = p.rows_written,
                        py::arg("elapsed_s") = p.elapsed_s, py::arg("last") = p.last_label));
    } catch (py::error_already_set& e) {
      raised = std::move(e);
      stop = true;
    }
  };
  experiments::RunnerReport report;
  {
    py::gil_scoped_release release;
    report = experiments::run_experiment(spec, db, options);
  }
  if (raised) throw std::move(*raised);
  py::dict out = to_python(api::experiment_json(spec, report, db_path, "0/1", ""));
  out["table"] = to_python(api::table_json(experiments::experiment_table(spec, db)));
  return out;
}

// A measured run, as `mutwo run --json` prints it, the GIL released while it runs.
py::object run(const std::string& model, int32_t models, const std::vector<int32_t>& partition, int64_t batch,
               int64_t seq_len, int64_t image_size, const std::string& dtype, const std::string& precision,
               const std::string& optimizer, const std::string& lean_ops,
               const std::optional<std::string>& gpu, const py::object& memory,
               const std::string& cost_source, const std::vector<std::string>& traces,
               const std::string& policy, const std::string& order, bool allow_oom, bool state_offload,
               const std::string& optimizer_on, const std::string& device, const std::string& memory_cap,
               uint64_t seed, int32_t iterations, int32_t warmup, bool sync_each_step, bool wrap,
               bool cuda_graph, const std::string& host_mode, const std::string& db) {
  experiments::RunRequest r;
  r.source.array = array_request(model, models, partition, batch, seq_len, image_size, dtype, precision,
                                 optimizer, lean_ops);
  r.policy = policy;
  r.order = order;
  r.allow_oom = allow_oom;
  r.state_offload = state_offload;
  r.optimizer_on = optimizer_on;
  r.device = device;
  r.memory_cap = memory_cap;
  r.seed = seed;
  r.warmup_iterations = warmup;
  r.timed_iterations = iterations;
  r.cuda_graph = cuda_graph;
  r.back_to_back = !sync_each_step;
  r.wrap = wrap;
  r.host_mode = host_mode;
  r.db = db;
  // As `mutwo run`: the named GPU, else the catalog GPU of the CUDA device it runs on, else the A100.
  r.cost = [gpu, bytes = memory_bytes(memory), cost_source,
            traces](const std::optional<std::string>& executed_on) {
    CostChoice c = cost_choice(gpu ? gpu : executed_on, bytes, cost_source, traces);
    experiments::RunCost setup;
    setup.gpu = c.device;
    setup.cost = std::move(c.cost);
    setup.cost_source = cost_source;
    setup.traces = traces;
    return setup;
  };
  use_built_executor();
  r.stop_requested = python_interrupt();
  experiments::RunOutcome out;
  without_gil_interruptible([&] {
    const std::unique_ptr<ir::Executor> executor = experiments::load_executor("mutwo.run");
    out = experiments::run_pipeline(r, *executor);
  });
  experiments::throw_if_not_stored(out, api::run_json(out, db).dump());  // the measurement in the message
  return to_python(api::run_json(out, db));
}

}  // namespace
}  // namespace mutwo::python

PYBIND11_MODULE(_mutwo, m) {
  using namespace mutwo::python;
  namespace api = mutwo::api;
  m.doc() = "mutwo's C++ core; use the package `mutwo`";

  // Exceptions: mutwo.Error and one subclass per kind of mistake a caller can fix.
  static py::exception<mutwo::Error> error(m, "Error");
  static py::exception<mutwo::FormatError> format_error(m, "FormatError", error.ptr());
  static py::exception<mutwo::UnknownNameError> name_error(m, "UnknownNameError", error.ptr());
  static py::exception<mutwo::experiments::InfeasiblePlanError> limit_error(m, "LimitError", error.ptr());
  static py::exception<mutwo::experiments::ResultsDbError> db_error(m, "DatabaseError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const mutwo::FormatError& e) {
      format_error(e.what());
    } catch (const mutwo::UnknownNameError& e) {
      name_error(e.what());
    } catch (const mutwo::experiments::InfeasiblePlanError& e) {
      limit_error(e.what());
    } catch (const mutwo::experiments::ResultsDbError& e) {
      db_error(e.what());
    } catch (const mutwo::Error& e) {
      error(e.what());
    }
  });

  m.def(
      "models",
      [](bool mini, int64_t batch, const std::string& dtype) {
        api::ModelsRequest r{mini, batch, dtype};
        return to_python(api::models_json(api::list_models(r), r));
      },
      py::arg("mini") = false, py::arg("batch") = 0, py::arg("dtype") = "fp32");
  m.def("devices", [] { return to_python(api::devices_json()); });
  m.def("servers", [] { return to_python(api::servers_json()); });
  m.def(
      "device", [](const std::string& name) { return to_python(api::device_json(name)); }, py::arg("name"));

  py::class_<StepGraph>(m, "Graph", py::dynamic_attr())
      .def_property_readonly("name", [](const StepGraph& g) { return g.graph.name; })
      .def_property_readonly("width", [](const StepGraph& g) { return g.graph.width; })
      .def_property_readonly("batch_size", [](const StepGraph& g) { return g.graph.batch_size; })
      .def_property_readonly("parameters",
                             [](const StepGraph& g) { return mutwo::ir::parameter_count(g.graph); })
      .def_property_readonly("parameter_bytes",
                             [](const StepGraph& g) { return mutwo::ir::parameter_bytes(g.graph); })
      .def_property_readonly(
          "forward_flops",
          [](const StepGraph& g) { return mutwo::ir::flops_in_phase(g.graph, mutwo::ir::Phase::forward); })
      .def_property_readonly("activation_bytes",
                             [](const StepGraph& g) { return mutwo::ir::activation_bytes(g.graph); })
      .def_property_readonly("tensors", [](const StepGraph& g) { return g.graph.tensors.size(); })
      .def("ops", [](const StepGraph& g) { return graph_ops(g.graph); })
      .def("to_json",
           [](const StepGraph& g) {
             mutwo::ir::Trace t;
             t.graph = g.graph;
             return mutwo::io::trace_to_json(t);
           })
      .def("__len__", [](const StepGraph& g) { return g.graph.ops.size(); })
      .def("__repr__", [](const StepGraph& g) {
        return fmt::format("<mutwo.Graph '{}': {} ops, {} tensors>", g.graph.name, g.graph.ops.size(),
                           g.graph.tensors.size());
      });
  m.def("trace", &trace_step, py::arg("model"), py::arg("models") = 1, py::arg("batch") = 0,
        py::arg("seq_len") = 0, py::arg("image_size") = 0, py::arg("dtype") = "fp32",
        py::arg("precision") = "fp32", py::arg("optimizer") = "adam");

  m.def("simulate", &simulate, py::arg("model"), py::arg("models") = 1,
        py::arg("partition") = std::vector<int32_t>{}, py::arg("batch") = 0, py::arg("seq_len") = 0,
        py::arg("image_size") = 0, py::arg("dtype") = "fp32", py::arg("precision") = "fp32",
        py::arg("optimizer") = "adam", py::arg("lean_ops") = "none", py::arg("gpu") = std::nullopt,
        py::arg("memory") = py::none(), py::arg("cost_source") = "waves",
        py::arg("traces") = std::vector<std::string>{}, py::arg("policy") = "", py::arg("order") = "best",
        py::arg("state_offload") = false, py::arg("optimizer_on") = "best", py::arg("host_mode") = "eager",
        py::arg("iterations") = 3, py::arg("wrap") = false, py::arg("timeline") = false,
        py::arg("length_histogram") = "", py::arg("length_bin_tokens") = 64,
        py::arg("length_align_tokens") = 8);
  m.def("simulate_trace", &simulate_trace, py::arg("traces"), py::arg("format") = "",
        py::arg("gpu") = std::nullopt, py::arg("memory") = py::none(), py::arg("cost_source") = "measured",
        py::arg("policy") = "", py::arg("host_mode") = "", py::arg("iterations") = 0, py::arg("wrap") = false,
        py::arg("timeline") = false);
  m.def("search", &search, py::arg("models"), py::arg("batch") = 0, py::arg("seq_len") = 0,
        py::arg("image_size") = 0, py::arg("dtype") = "fp32", py::arg("precision") = "fp32",
        py::arg("lean_ops") = "none", py::arg("host_mode") = "eager", py::arg("optimizer") = "adam",
        py::arg("policies") = std::vector<std::string>{}, py::arg("top") = 10, py::arg("gpu") = std::nullopt,
        py::arg("memory") = py::none(), py::arg("cost_source") = "waves",
        py::arg("traces") = std::vector<std::string>{}, py::arg("progress") = py::none(),
        py::arg("server") = "", py::arg("schemes") = std::vector<std::string>{},
        py::arg("micro_batches") = std::vector<int32_t>{}, py::arg("packs") = std::vector<int32_t>{},
        py::arg("jobs") = 0);
  m.def("replay", &replay, py::arg("trace"), py::arg("step") = std::nullopt, py::arg("all") = false,
        py::arg("kernel_speedup") = 2.0, py::arg("what_if_gpus") = std::vector<std::string>{},
        py::arg("what_if_source") = "waves", py::arg("trace_gpu") = "");
  m.def("run", &run, py::arg("model"), py::arg("models") = 1, py::arg("partition") = std::vector<int32_t>{},
        py::arg("batch") = 0, py::arg("seq_len") = 0, py::arg("image_size") = 0, py::arg("dtype") = "fp32",
        py::arg("precision") = "fp32", py::arg("optimizer") = "adam", py::arg("lean_ops") = "none",
        py::arg("gpu") = std::nullopt, py::arg("memory") = py::none(), py::arg("cost_source") = "waves",
        py::arg("traces") = std::vector<std::string>{}, py::arg("policy") = "none", py::arg("order") = "best",
        py::arg("allow_oom") = false, py::arg("state_offload") = false, py::arg("optimizer_on") = "best",
        py::arg("device") = "cpu", py::arg("memory_cap") = "", py::arg("seed") = 0,
        py::arg("iterations") = 20, py::arg("warmup") = 3, py::arg("sync_each_step") = false,
        py::arg("wrap") = false, py::arg("cuda_graph") = false, py::arg("host_mode") = "",
        py::arg("db") = "");
  m.def("profile", &profile, py::arg("model"), py::arg("models") = 1,
        py::arg("partition") = std::vector<int32_t>{}, py::arg("batch") = 0, py::arg("seq_len") = 0,
        py::arg("image_size") = 0, py::arg("dtype") = "fp32", py::arg("precision") = "fp32",
        py::arg("optimizer") = "adam", py::arg("lean_ops") = "none", py::arg("output"),
        py::arg("device") = "cpu", py::arg("seed") = 0, py::arg("warmup") = 1, py::arg("iterations") = 3,
        py::arg("host_times") = false, py::arg("db") = "", py::arg("gpu") = "", py::arg("top") = 8);
  m.def("experiment", &experiment, py::arg("spec"), py::arg("db") = "results.db", py::arg("jobs") = 0,
        py::arg("progress") = py::none());
  m.def(
      "results",
      [](const std::string& db, const std::vector<int64_t>& run_ids) {
        return to_python(api::compare_json(api::compare_database(db, run_ids), db));
      },
      py::arg("db"), py::arg("run_ids") = std::vector<int64_t>{});
}

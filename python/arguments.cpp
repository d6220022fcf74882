#include "python/arguments.hpp"

#include <limits>

#include <fmt/format.h>

#include "api/values.hpp"
#include "costmodel/cost_setup.hpp"
#include "costmodel/device_overrides.hpp"
#include "ir/precision.hpp"

namespace mutwo::python {

// A memory limit as Python gives it: bytes (int) or a size ("16GiB"); None: the device's.
std::optional<int64_t> memory_bytes(const py::object& memory) {
  if (memory.is_none()) return std::nullopt;
  const std::string text = py::repr(memory).cast<std::string>();
  // bool is an int to Python: memory=True was a 1-byte limit.
  if (py::isinstance<py::int_>(memory) && !py::isinstance<py::bool_>(memory)) {
    int64_t bytes = 0;
    try {
      bytes = memory.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw Error(
          fmt::format("memory = {}: past 64 bits; give bytes (an int) or a size such as \"16GiB\"", text));
    }
    if (bytes <= 0)
      throw Error(fmt::format("memory = {}: a limit must be a positive number of bytes", bytes));
    return bytes;
  }
  if (py::isinstance<py::str>(memory)) return costmodel::parse_memory_size(memory.cast<std::string>());
  throw Error(fmt::format("memory = {}: give bytes (an int) or a size such as \"16GiB\"", text));
}

void check_range(std::string_view name, int64_t value, int64_t low, int64_t high) {
  if (value >= low && value <= high) return;
  if (high == std::numeric_limits<int64_t>::max())
    throw Error(fmt::format("{} = {}: must be >= {}", name, value, low));
  throw Error(fmt::format("{} = {}: must be from {} to {}", name, value, low, high));
}

void check_each(std::string_view name, const std::vector<int32_t>& values, int64_t low, int64_t high) {
  for (const int32_t v : values) check_range(name, v, low, high);
}

void check_callable(std::string_view name, const py::object& f) {
  if (!f.is_none() && !PyCallable_Check(f.ptr())) {
    throw py::type_error(
        fmt::format("{} = {}: give a callable or None", name, py::repr(f).cast<std::string>()));
  }
}

std::function<void(int64_t, int64_t)> search_progress(const py::object& progress) {
  return [progress](int64_t visited, int64_t partitions) {
    py::gil_scoped_acquire acquire;
    // The search runs in this thread without the GIL: Python's SIGINT handler gets to run only here.
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!progress.is_none()) progress(visited, partitions);
  };
}

std::function<bool()> python_interrupt() {
  return [] {
    py::gil_scoped_acquire acquire;
    return PyErr_CheckSignals() != 0;
  };
}

CostChoice cost_choice(costmodel::CostSetup setup) {
  costmodel::check_cost_setup(setup);
  CostChoice out;
  out.inputs = costmodel::read_cost_inputs(setup);
  warn_each(out.inputs.warnings);
  out.device = costmodel::resolve_device(setup, out.inputs);
  out.cost = costmodel::make_cost_model(setup, out.inputs, out.device);
  out.source = setup.cost_source;
  out.setup = std::move(setup);
  return out;
}

CostChoice cost_choice(const std::optional<std::string>& gpu, std::optional<int64_t> memory,
                       const std::string& cost_source, const std::vector<std::string>& traces) {
  costmodel::CostSetup setup;
  setup.gpu = gpu.value_or("");  // none: a measured trace's GPU for the measured source, else the default
  setup.cost_source = cost_source;
  setup.overrides.memory_bytes = memory;
  setup.trace_files = traces;
  return cost_choice(std::move(setup));
}

CostChoice cost_choice(const std::optional<std::string>& gpu, const py::object& memory,
                       const std::string& cost_source, const std::vector<std::string>& traces) {
  return cost_choice(gpu, memory_bytes(memory), cost_source, traces);
}

void warn_each(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return;
  py::gil_scoped_acquire acquire;
  const py::object warn = py::module_::import("warnings").attr("warn");
  for (const std::string& w : warnings) warn(w);
}

// The model array of a call: a zoo name or an exported model file, its copies, and their settings.
experiments::ArrayRequest array_request(const std::string& model, int32_t models,
                                        const std::vector<int32_t>& partition, int64_t batch, int64_t seq_len,
                                        int64_t image_size, const std::string& dtype,
                                        const std::string& precision, const std::string& optimizer,
                                        const std::string& lean_ops) {
  experiments::ArrayRequest a;
  a.model = model;
  a.models = models;
  a.partition = partition;
  a.batch_size = batch;
  a.seq_len = seq_len;
  a.image_size = image_size;
  a.dtype = dtype;
  a.precision = std::string(ir::precision_name(api::precision_value(precision)));
  a.optimizer = optimizer;
  a.lean_ops = lean_ops;
  return a;
}

}  // namespace mutwo::python

#pragma once
// What a Python call's arguments become in mutwo (a memory limit, the device and cost model a call
// names, the model array), and mutwo's JSON back as Python values: the conversions every function
// of the module (python/module.cpp) shares.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/cost_setup.hpp"
#include "costmodel/device_spec.hpp"
#include "costmodel/op_cost_model.hpp"
#include "experiments/run_pipeline.hpp"
#include "support/error.hpp"

namespace mutwo::python {

namespace py = pybind11;

// nlohmann JSON to Python values (objects keep their key order).
template <typename Json>
py::object to_python(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.template get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.template get<double>());
    case nlohmann::json::value_t::string:
      return py::str(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(to_python(v));
      return out;
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (auto it = j.begin(); it != j.end(); ++it) out[py::str(it.key())] = to_python(it.value());
      return out;
    }
    default:
      throw Error("a JSON value of a kind Python has no type for");
  }
}

// A memory limit as Python gives it: bytes (int) or a size ("16GiB"); None: the device's.
std::optional<int64_t> memory_bytes(const py::object& memory);

// The device and cost model a call names, assembled as the command line assembles them.
struct CostChoice {
  costmodel::CostSetup setup;
  costmodel::CostInputs inputs;  // the measured traces read, once
  costmodel::DeviceSpec device;
  std::unique_ptr<costmodel::OpCostModel> cost;
  std::string source;
};
// A setup checked, its traces read (their importers' warnings as Python warnings), its device and
// cost model made.
CostChoice cost_choice(costmodel::CostSetup setup);
// `gpu` none: the GPU a measured trace ran on (for the measured source), else the A100-40GB, as the
// command's --gpu default; `traces`: the measured traces a source reads (--trace), whose importers'
// warnings become Python warnings.
CostChoice cost_choice(const std::optional<std::string>& gpu, std::optional<int64_t> memory,
                       const std::string& cost_source, const std::vector<std::string>& traces = {});
CostChoice cost_choice(const std::optional<std::string>& gpu, const py::object& memory,
                       const std::string& cost_source, const std::vector<std::string>& traces = {});

// What an importer assumed, each as a Python warning (the command prints them to stderr); takes the GIL.
void warn_each(const std::vector<std::string>& warnings);

// Checks of the numbers the command's flags check in cli/ (its CLI11 ranges), for a Python call:
// Error naming the argument and the value. `high` at int64's maximum: no upper bound.
void check_range(std::string_view name, int64_t value, int64_t low, int64_t high);
void check_each(std::string_view name, const std::vector<int32_t>& values, int64_t low, int64_t high);
// TypeError for a progress callback that is neither None nor callable: caught before the run,
// not at its first report.
void check_callable(std::string_view name, const py::object& f);
// A search's progress hook: `progress(visited, partitions)` unless None, and Ctrl-C (SIGINT) raised
// as KeyboardInterrupt; each takes the GIL, which the search runs without.
std::function<void(int64_t, int64_t)> search_progress(const py::object& progress);
// An executor's stop poll (ir::RunOptions::stop_requested): takes the GIL and runs Python's signal
// handlers; true when one raised (Ctrl-C), its exception left pending for the caller to rethrow when
// the run ends in mutwo::InterruptedError.
std::function<bool()> python_interrupt();
// Runs `work` with the GIL released; a run it starts with python_interrupt() as its stop poll ends,
// on Ctrl-C, in the KeyboardInterrupt the poll left pending.
template <class Work>
void without_gil_interruptible(Work&& work) {
  try {
    py::gil_scoped_release release;
    work();
  } catch (const InterruptedError&) {
    throw py::error_already_set();
  }
}

// The model array of a call: a zoo name or an exported model file, its copies, and their settings.
experiments::ArrayRequest array_request(const std::string& model, int32_t models,
                                        const std::vector<int32_t>& partition, int64_t batch, int64_t seq_len,
                                        int64_t image_size, const std::string& dtype,
                                        const std::string& precision, const std::string& optimizer,
                                        const std::string& lean_ops);

}  // namespace mutwo::python

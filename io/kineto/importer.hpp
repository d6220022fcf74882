#pragma once
// The Kineto importer's state while it turns events into a Trace, step by step (run()): nesting and
// step choice, the ops and their phases (op_selection.cpp), their durations (durations.cpp), and
// the Graph with its memory tensors (graph_building.cpp). Internal to the Kineto importer.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "io/kineto/events.hpp"
#include "io/trace_import_result.hpp"
#include "ir/graph.hpp"

namespace mutwo::io::kineto {

// How far a host synchronisation inside an op waits: nothing, the op's own stream, or the device.
enum class SyncScope : uint8_t { none, stream, device };

// The GPU work of one op on one stream of the traced device (host_timeline.cpp).
struct Part {
  int64_t stream = 0;
  int64_t duration_ns = 0;
  int64_t last_launch_end_ns = 0;  // end of the runtime call that launched the last of it
  int64_t host_ns = 0;             // host time of the interval that ends at its issue point
};

// One Graph op under construction.
struct Node {
  size_t event = 0;  // index into events
  ir::Phase phase = ir::Phase::forward;
  ir::OpKind kind = ir::OpKind::opaque;
  int64_t duration_ns = 0;
  ir::OpId forward_of = ir::kNoId;
  int64_t bytes_read = 0;
  std::string input_shapes;
  std::vector<std::pair<int64_t, int64_t>> scratch;  // (time, +/- bytes) of blocks freed where allocated
  std::vector<Part> parts;                           // per stream, in the order first met
  int64_t host_ns = 0;
  SyncScope sync = SyncScope::none;
};

// Turns the events of one trace into a Trace: nest the CPU ops, choose the step, make its top-level
// ops the graph's ops, give them durations and forward_of, then build the Graph and its tensors.
class Importer {
 public:
  Importer(const Json& events, std::string source);

  TraceImport run(const Json& doc);

 private:
  const Event& ev(size_t i) const { return (*ev_)[i]; }
  void warn(const std::string& text) { warnings_.push_back(fmt::format("{}: {}", source_, text)); }
  [[noreturn]] void fail(const std::string& text) const;

  std::optional<int64_t> arg(const Event& e, const char* key) const;

  bool is_backward_event(const Event& e) const;

  // Parent links of CPU ops within each thread; roots_ per thread sorted by start.
  void nest();

  // The top-level CPU op of `thread` whose span holds time t, if any.
  std::optional<size_t> root_at(size_t thread, int64_t t) const;

  bool in_window(int64_t t) const { return t >= window_start_ - tol_ns_ && t <= window_end_ + tol_ns_; }

  void choose_step();

  void build_nodes();

  // bytes_read and the shapes string from "Input Dims" / "Input type"; false without them.
  bool read_input_dims(const Event& e, Node& n, int64_t& list_inputs,
                       std::map<std::string, int>& unknown) const;

  void measure_durations(const Json& doc);

  std::string device_name(const Json& doc);

  // A GPU event's stream: its "args.stream" (Kineto writes one for every kernel, memcpy and memset),
  // else its track's thread index. FormatError when "stream" is not an integer.
  int64_t stream_of(const Event& g) const;

  // Host time per op and per part, host synchronisations (host_timeline.cpp; rules in
  // kineto_trace.hpp). After measure_durations.
  void measure_host_timeline();

  void pair_backward();

  // Graph op for a memory event: the op enclosing it on its thread, else the next op (allocation)
  // or the previous op (free).
  ir::OpId op_for_memory(const MemoryEvent& m, bool allocation) const;

  ir::Graph build_graph();

  template <typename AddTensor>
  void add_memory(ir::Graph& g, AddTensor& add_tensor);

  std::string source_;
  EventReader reader_;
  const std::vector<Event>* ev_ = nullptr;
  int64_t tol_ns_ = 1;
  std::vector<size_t> root_;                               // per event: its top-level CPU op (cpu ops only)
  std::map<size_t, std::vector<size_t>> roots_by_thread_;  // top-level CPU ops by start
  std::map<size_t, ir::OpId> op_of_root_;                  // top-level event -> graph op
  int64_t window_start_ = 0;
  int64_t window_end_ = 0;
  std::string step_name_;
  bool whole_trace_ = false;  // no ProfilerStep chosen: the window is the whole trace
  // Every GPU event with a launch: (launch start, GPU start), for "was work queued?" questions.
  std::vector<std::pair<int64_t, int64_t>> launches_;
  std::vector<int64_t> pageable_d2h_;  // correlation ids of device-to-pageable memcpys (host-synchronous)
  std::vector<Node> nodes_;
  std::string device_;
  int64_t gpu_device_ = -1;
  std::vector<std::string> warnings_;
};

}  // namespace mutwo::io::kineto

#pragma once
// Reading a PyTorch profiler trace's events (io/kineto_trace.hpp has the rules): the "X"
// events the importer uses and the [memory] events, checked field by field as they are read.
// Internal to the Kineto importer.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace mutwo::io::kineto {

using Json = nlohmann::json;

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr std::string_view kOptimizerStepPrefix = "Optimizer.step#";
constexpr std::string_view kOptimizerZeroGradPrefix = "Optimizer.zero_grad#";
constexpr std::string_view kBackwardPrefix = "autograd::engine::evaluate_function:";

enum class Kind : uint8_t { cpu_op, step, launch, gpu, other };

// One "X" event the importer may use.
struct Event {
  size_t index = 0;  // position in traceEvents
  std::string name;
  Kind kind = Kind::other;
  size_t thread = 0;  // index into the distinct (pid, tid) pairs, in order of first appearance
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  const Json* args = nullptr;  // null when the event has none
};

struct MemoryEvent {
  size_t index = 0;
  size_t thread = 0;
  int64_t time_ns = 0;
  int64_t bytes = 0;  // > 0 allocation, < 0 free
  std::string addr;
  int64_t device_type = 0;
  int64_t device_id = -1;
  std::optional<int64_t> total_allocated;
};

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// An integer argument of an event already read (EventReader checked its type); nullopt when absent,
// -1 for an unsigned value past INT64_MAX.
std::optional<int64_t> event_int_arg(const Event& e, const char* key);

// The deviceProperties entry of a device id (an object), nullptr when the trace has none.
const Json* device_properties(const Json& doc, int64_t device);
// The "name" of deviceProperties' entry with this "id"; nullopt when the trace has none.
std::optional<std::string> device_property_name(const Json& doc, int64_t device);

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses and validates the events; every error names the source, event index, name and field.
class EventReader {
 public:
  explicit EventReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(size_t i, const Json& e, const std::string& what) const;

  double number(size_t i, const Json& e, const char* field) const;

  // An integer argument in "args"; nullopt when absent. Kineto writes them as JSON numbers.
  std::optional<int64_t> int_arg(size_t i, const Json& e, const Json* args, const char* key) const;

  size_t thread_of(size_t i, const Json& e);

  const Json* args_of(size_t i, const Json& e) const;

  void read(const Json& list);

  std::vector<Event> events;
  std::vector<MemoryEvent> memory;
  double max_abs_ts_us = 0;
  bool whole_us = true;  // every "X" event's ts and dur are whole microseconds

 private:
  void read_complete(size_t i, const Json& e);

  void read_memory(size_t i, const Json& e);

  std::string source_;
  std::map<std::string, size_t> threads_;
};

}  // namespace mutwo::io::kineto

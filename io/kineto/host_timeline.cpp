#include <algorithm>
#include <array>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "io/kineto/importer.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

// The host side of a GPU trace: how long the host took to issue each op once what the device made
// it wait is taken out, and where it waited on purpose (synchronisations). The rules are in
// io/kineto_trace.hpp ("Host timeline").
namespace mutwo::io::kineto {

namespace {

// Runtime calls that return only when the device has finished earlier work. cudaMemcpy and
// hipMemcpy (and HIP's hipMemcpyWithStream, which PyTorch's blocking copy_ calls) are the
// synchronous copies; device-wide ones wait for every stream.
constexpr std::array<std::pair<std::string_view, SyncScope>, 12> kSyncCalls{{
    {"cudaDeviceSynchronize", SyncScope::device},
    {"hipDeviceSynchronize", SyncScope::device},
    {"cudaStreamSynchronize", SyncScope::stream},
    {"hipStreamSynchronize", SyncScope::stream},
    {"cudaEventSynchronize", SyncScope::stream},
    {"hipEventSynchronize", SyncScope::stream},
    {"cudaMemcpy", SyncScope::stream},
    {"hipMemcpy", SyncScope::stream},
    {"hipMemcpyWithStream", SyncScope::stream},
    {"cudaMemcpy2D", SyncScope::stream},
    {"hipMemcpy2D", SyncScope::stream},
    {"cuCtxSynchronize", SyncScope::device},
}};

SyncScope sync_scope_of(std::string_view name) {
  for (const auto& [call, scope] : kSyncCalls) {
    if (name == call) return scope;
  }
  return SyncScope::none;
}

}  // namespace

int64_t Importer::stream_of(const Event& g) const {
  if (g.args == nullptr || !g.args->contains("stream")) return static_cast<int64_t>(g.thread);
  const Json& v = (*g.args)["stream"];
  if (!v.is_number_integer()) {
    throw FormatError(fmt::format("{}: event {} ('{}'): field 'args.stream' = {}, expected an integer",
                                  source_, g.index, g.name, v.dump()));
  }
  return v.get<int64_t>();
}

void Importer::measure_host_timeline() {
  if (device_ == "cpu" || nodes_.empty()) return;  // a CPU trace: an op's duration is its host time

  // Issue points: per op, each part's last launch (parts in that order), or the op's end when it
  // launched nothing; never earlier than the point before (ops of two threads interleave).
  struct Point {
    int64_t time_ns;
    size_t node;
    int64_t part;  // index into the node's parts, -1 for an op without GPU work
    int64_t host_ns;
  };
  std::vector<Point> points;
  int64_t previous = whole_trace_ ? ev(nodes_.front().event).start_ns : window_start_;
  const int64_t first = previous;
  for (size_t k = 0; k < nodes_.size(); ++k) {
    Node& n = nodes_[k];
    std::stable_sort(n.parts.begin(), n.parts.end(), [](const Part& a, const Part& b) {
      return a.last_launch_end_ns < b.last_launch_end_ns;
    });
    if (n.parts.empty()) {
      previous = std::max(previous, ev(n.event).end_ns);
      points.push_back({previous, k, -1, 0});
    }
    for (size_t p = 0; p < n.parts.size(); ++p) {
      previous = std::max(previous, n.parts[p].last_launch_end_ns);
      points.push_back({previous, k, static_cast<int64_t>(p), 0});
    }
  }
  int64_t before = first;
  for (Point& p : points) {
    p.host_ns = p.time_ns - before;
    before = p.time_ns;
  }
  if (!whole_trace_) points.back().host_ns += std::max<int64_t>(0, window_end_ - points.back().time_ns);
  int64_t host_total = 0;
  for (const Point& p : points) host_total += p.host_ns;

  // Work queued on the device: was any GPU event launched before `t0` still waiting to start at `t1`?
  std::sort(launches_.begin(), launches_.end());
  std::vector<int64_t> latest_start(launches_.size());
  int64_t latest = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < launches_.size(); ++i)
    latest_start[i] = latest = std::max(latest, launches_[i].second);
  auto queued = [&](int64_t t0, int64_t t1) {
    auto it = std::lower_bound(launches_.begin(), launches_.end(),
                               std::pair(t0, std::numeric_limits<int64_t>::min()));
    const auto count = it - launches_.begin();
    return count > 0 && latest_start[static_cast<size_t>(count - 1)] > t1;
  };
  std::sort(pageable_d2h_.begin(), pageable_d2h_.end());

  // Runtime calls of the step, and the median duration of each call name there.
  std::vector<size_t> calls;
  std::map<std::string, std::vector<int64_t>> by_name;
  for (size_t i = 0; i < ev_->size(); ++i) {
    const Event& e = ev(i);
    if (e.kind != Kind::launch || !in_window(e.start_ns)) continue;
    calls.push_back(i);
    by_name[e.name].push_back(e.end_ns - e.start_ns);
  }
  std::map<std::string, int64_t> typical;
  for (auto& [name, durations] : by_name)
    typical[name] = support::median(std::move(durations), support::EvenMedian::lower_middle);

  int64_t removed_sync = 0, removed_queue = 0, syncs = 0, queue_calls = 0;
  for (size_t i : calls) {
    const Event& e = ev(i);
    const int64_t duration = e.end_ns - e.start_ns;
    SyncScope scope = sync_scope_of(e.name);
    if (scope == SyncScope::none &&
        std::binary_search(pageable_d2h_.begin(), pageable_d2h_.end(), *arg(e, "correlation"))) {
      scope = SyncScope::stream;
    }
    int64_t cut = 0;
    if (scope != SyncScope::none) {
      // The host waited for work issued before the call returned: the op of the last issue point
      // at or before the call's end synchronises (the engine makes the host wait after issuing it).
      // A synchronous copy is itself a launch, so its own op is that op.
      auto after = std::upper_bound(points.begin(), points.end(), e.end_ns,
                                    [](int64_t t, const Point& p) { return t < p.time_ns; });
      Node& synced = nodes_[after == points.begin() ? points.front().node : std::prev(after)->node];
      synced.sync = std::max(synced.sync, scope);
      cut = duration;
      ++syncs;
    } else if (duration > typical[e.name] && queued(e.start_ns, e.end_ns)) {
      cut = duration - typical[e.name];  // a full launch queue held the call: the engine's queue does that
      ++queue_calls;
    }
    if (cut == 0) continue;
    // Out of the interval the call ends in (the first issue point at or after its end).
    auto in = std::lower_bound(points.begin(), points.end(), e.end_ns,
                               [](const Point& p, int64_t t) { return p.time_ns < t; });
    if (in == points.end()) in = std::prev(points.end());
    const int64_t taken = std::min(cut, in->host_ns);
    in->host_ns -= taken;
    (scope != SyncScope::none ? removed_sync : removed_queue) += taken;
  }

  for (const Point& p : points) {
    Node& n = nodes_[p.node];
    n.host_ns += p.host_ns;
    if (p.part >= 0) n.parts[static_cast<size_t>(p.part)].host_ns = p.host_ns;
  }
  int64_t sync_ops = 0;
  for (const Node& n : nodes_) sync_ops += n.sync != SyncScope::none ? 1 : 0;
  warn(fmt::format(
      "host time per op: from the previous op's issue point to its own (the end of the launch of its last "
      "kernel; an op launching nothing: its end), Python time between ops included: {:.3f} ms over {} ops; "
      "taken out of it, {:.3f} ms of {} synchronising calls ({} ops make the host wait for the GPU: "
      "host_sync) "
      "and {:.3f} ms of {} runtime calls held by a full launch queue (past their median duration)",
      static_cast<double>(host_total - removed_sync - removed_queue) / 1e6, nodes_.size(),
      static_cast<double>(removed_sync) / 1e6, syncs, sync_ops, static_cast<double>(removed_queue) / 1e6,
      queue_calls));
}

}  // namespace mutwo::io::kineto

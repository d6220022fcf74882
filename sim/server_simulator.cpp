#include "sim/server_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/server_routes.hpp"
#include "sim/event_core.hpp"
#include "sim/host_issuer.hpp"
#include "sim/link_sharing.hpp"

namespace mutwo::sim {

using ir::kHostSide;
using ir::ServerSchedule;
using ir::ServerTask;
using ir::ServerTaskKind;

namespace {

constexpr int64_t kNever = kNoEventNs;

struct Flow {
  int32_t task = 0;
  double left_bytes = 0;
  double rate = 0;  // bytes per ns
  int64_t done_ns = kNever;
  const std::vector<int32_t>* route = nullptr;
};

// A compute finishing, a copy whose latency has passed (its bytes start moving), or (host) a GPU's
// host finishing the issue of a task. At one time: tasks' events first, then hosts', each by task id.
struct Event {
  bool host = false;
  int32_t task = 0;
};
int64_t event_key(const Event& e) {
  return (static_cast<int64_t>(e.host) << 32) | e.task;
}

class ServerReplay {
 public:
  ServerReplay(const ServerSchedule& s, const costmodel::ServerSpec& server, const ServerSimOptions& options)
      : s_(s), server_(server), routes_(server), n_(s.tasks.size()) {
    const auto gpus = static_cast<size_t>(s.gpu_count);
    queues_.assign(gpus * ir::kServerStreams, {});
    for (const ServerTask& t : s.tasks) queues_[queue_of(t)].push_back(t.id);
    head_.assign(queues_.size(), 0);
    busy_.assign(queues_.size(), 0);
    last_end_.assign(queues_.size(), 0);
    pending_.assign(n_, 0);
    dependents_.assign(n_, {});
    std::vector<std::vector<int32_t>> issued(gpus);  // per GPU: its tasks with an issue time, in list order
    for (const ServerTask& t : s.tasks) {
      pending_[static_cast<size_t>(t.id)] = static_cast<int32_t>(t.waits.size());
      for (const int32_t w : t.waits) dependents_[static_cast<size_t>(w)].push_back(t.id);
      if (t.issue_ns >= 0) {
        ++pending_[static_cast<size_t>(t.id)];  // waits for its issue as for a dependency
        issued[static_cast<size_t>(t.gpu)].push_back(t.id);
      }
    }
    // One host per GPU, each with the single-GPU engine's issue rule (sim/host_issuer.hpp).
    for (std::vector<int32_t>& order : issued) hosts_.emplace_back(std::move(order), s.launch_queue_depth);
    start_.assign(n_, -1);
    end_.assign(n_, -1);
    p_.gpus.assign(gpus, {});
    in_use_ = s.initial_bytes;
    for (size_t g = 0; g < gpus; ++g) p_.gpus[g].peak_bytes = in_use_[g];
    limit_ = options.memory_limit_bytes == 0 ? costmodel::find_device(server.gpu).memory_bytes
                                             : std::max<int64_t>(options.memory_limit_bytes, 0);
    p_.memory_limit_bytes = limit_;
    for (size_t g = 0; g < gpus; ++g) check_limit(static_cast<int32_t>(g), -1);
    p_.resource_bytes.assign(static_cast<size_t>(routes_.resource_count()), 0);
    p_.resource_busy_ns.assign(static_cast<size_t>(routes_.resource_count()), 0);
    capacity_.resize(static_cast<size_t>(routes_.resource_count()));
    for (int32_t r = 0; r < routes_.resource_count(); ++r) {
      // A half-duplex link's unused second slot has capacity 0 and no route crosses it.
      capacity_[static_cast<size_t>(r)] = std::max(routes_.capacity_bytes_per_ns(r), 1e-300);
    }
  }

  ServerPrediction run(bool record_spans) {
    for (size_t g = 0; g < hosts_.size(); ++g) host_advance(static_cast<int32_t>(g), 0);
    start_ready(0);
    while (!events_.empty() || !flows_.empty()) {
      const int64_t last = events_.now_ns();
      if (rates_dirty_) share_links(last);
      int64_t next = events_.next_ns();
      for (const Flow& f : flows_) next = std::min(next, f.done_ns);
      // Bytes move and resources are busy over [last, next).
      const auto dt = static_cast<double>(next - last);
      std::vector<uint8_t> crossed(capacity_.size(), 0);
      for (Flow& f : flows_) {
        f.left_bytes -= f.rate * dt;
        for (const int32_t r : *f.route) crossed[static_cast<size_t>(r)] = 1;
      }
      for (size_t r = 0; r < crossed.size(); ++r) {
        if (crossed[r] != 0) p_.resource_busy_ns[r] += next - last;
      }
      events_.advance_to(next);
      const int64_t now = next;
      // Copies whose bytes have all moved, in task order.
      std::vector<int32_t> done;
      for (const Flow& f : flows_) {
        if (f.done_ns == now) done.push_back(f.task);
      }
      if (!done.empty()) {
        std::erase_if(flows_, [now](const Flow& f) { return f.done_ns == now; });
        std::sort(done.begin(), done.end());
        for (const int32_t t : done) finish(t, now);
        rates_dirty_ = true;
      }
      while (events_.due()) {
        const Event e = events_.pop_due();
        const int32_t t = e.task;
        if (e.host) {
          host_issued(t, now);
        } else if (s_.tasks[static_cast<size_t>(t)].kind == ServerTaskKind::transfer && !moving_[t]) {
          begin_flow(t);
        } else {
          finish(t, now);
        }
      }
      start_ready(now);
    }
    for (size_t i = 0; i < n_; ++i) {
      if (end_[i] < 0) {
        throw ir::ServerScheduleError(fmt::format(
            "task {} ('{}') never ran: it waits on a task that cannot start", i, s_.tasks[i].label));
      }
    }
    for (size_t g = 0; g < p_.gpus.size(); ++g) p_.compute_stall_ns = std::max(p_.compute_stall_ns, p_.gpus[g].compute_stall_ns);
    p_.resource_utilisation.assign(p_.resource_bytes.size(), 0.0);
    for (int32_t r = 0; r < routes_.resource_count(); ++r) {
      const double capacity = routes_.capacity_bytes_per_ns(r);
      if (capacity <= 0 || p_.step_time_ns <= 0) continue;
      p_.resource_utilisation[static_cast<size_t>(r)] =
          static_cast<double>(p_.resource_bytes[static_cast<size_t>(r)]) / (capacity * static_cast<double>(p_.step_time_ns));
    }
    if (record_spans) {
      p_.spans.reserve(n_);
      for (size_t i = 0; i < n_; ++i) p_.spans.push_back(ServerTaskSpan{static_cast<int32_t>(i), start_[i], end_[i]});
    }
    return std::move(p_);
  }

 private:
  size_t queue_of(const ServerTask& t) const {
    return static_cast<size_t>(t.gpu) * ir::kServerStreams + static_cast<size_t>(t.stream);
  }

  void check_limit(int32_t gpu, int32_t task) {
    const auto g = static_cast<size_t>(gpu);
    p_.gpus[g].peak_bytes = std::max(p_.gpus[g].peak_bytes, in_use_[g]);
    if (limit_ <= 0 || in_use_[g] <= limit_ || p_.gpus[g].oom) return;
    p_.gpus[g].oom = true;
    if (!p_.oom) {
      p_.oom = true;
      p_.oom_message = task < 0 ? fmt::format("GPU {}: resident state {} bytes over the limit {}", gpu, in_use_[g], limit_)
                                : fmt::format("GPU {}: task {} ('{}') takes it to {} bytes, over the limit {}", gpu,
                                              task, s_.tasks[static_cast<size_t>(task)].label, in_use_[g], limit_);
    }
  }

  void start_ready(int64_t now) {
    bool started = true;
    while (started) {  // a 0 ns task ends at once and may free its stream's next
      started = false;
      for (size_t q = 0; q < queues_.size(); ++q) {
        if (busy_[q] != 0 || head_[q] >= queues_[q].size()) continue;
        const int32_t t = queues_[q][head_[q]];
        if (pending_[static_cast<size_t>(t)] != 0) continue;
        ++head_[q];
        start(t, q, now);
        started = true;
      }
    }
  }

  // Issues the GPU's next task in list order unless its host must wait (sim/host_issuer.hpp).
  void host_advance(int32_t gpu, int64_t now) {
    HostIssuer& h = hosts_[static_cast<size_t>(gpu)];
    const std::optional<HostIssuer::Issue> issue = h.next(now);
    if (!issue) return;
    const int64_t issue_ns = s_.tasks[static_cast<size_t>(issue->item)].issue_ns;
    h.issuing_until(later_ns(issue->start_ns, issue_ns));
    ServerGpuFigures& g = p_.gpus[static_cast<size_t>(gpu)];
    g.host_busy_ns += issue_ns;
    schedule_event(later_ns(issue->start_ns, issue_ns), Event{true, issue->item});
  }

  // The host finished issuing `id`: it may start; the host goes on unless it syncs on it.
  void host_issued(int32_t id, int64_t now) {
    const ServerTask& t = s_.tasks[static_cast<size_t>(id)];
    hosts_[static_cast<size_t>(t.gpu)].issued(id, t.host_sync);
    ServerGpuFigures& g = p_.gpus[static_cast<size_t>(t.gpu)];
    g.host_end_ns = std::max(g.host_end_ns, now);
    p_.step_time_ns = std::max(p_.step_time_ns, now);  // the step ends when the hosts are done too
    --pending_[static_cast<size_t>(id)];
    host_advance(t.gpu, now);
  }

  void start(int32_t id, size_t queue, int64_t now) {
    const ServerTask& t = s_.tasks[static_cast<size_t>(id)];
    start_[static_cast<size_t>(id)] = now;
    busy_[queue] = 1;
    if (t.issue_ns >= 0) {
      hosts_[static_cast<size_t>(t.gpu)].started();
      host_advance(t.gpu, now);  // a host blocked on a full launch queue goes on
    }
    const int32_t owner = t.kind == ServerTaskKind::compute ? t.gpu : t.to;
    if (owner != kHostSide && t.alloc_bytes > 0) {
      in_use_[static_cast<size_t>(owner)] += t.alloc_bytes;
      check_limit(owner, id);
    }
    if (t.kind == ServerTaskKind::compute) {
      if (t.stream == ir::kServerComputeStream) {
        ServerGpuFigures& g = p_.gpus[static_cast<size_t>(t.gpu)];
        g.compute_stall_ns += now - last_end_[queue];
        g.compute_busy_ns += t.duration_ns;
      }
      if (t.duration_ns == 0) {
        finish(id, now);
      } else {
        schedule_event(later_ns(now, t.duration_ns), Event{false, id});
      }
      return;
    }
    if (t.bytes == 0) {
      finish(id, now);
    } else if (server_.copy_latency_ns > 0) {
      schedule_event(later_ns(now, server_.copy_latency_ns), Event{false, id});
    } else {
      begin_flow(id);
    }
  }

  void schedule_event(int64_t at_ns, Event e) { events_.push_keyed(at_ns, event_key(e), e); }

  void begin_flow(int32_t id) {
    const ServerTask& t = s_.tasks[static_cast<size_t>(id)];
    moving_[id] = 1;
    flows_.push_back(Flow{id, static_cast<double>(t.bytes), 0, kNever, &routes_.route(t.from, t.to)});
    rates_dirty_ = true;
  }

  void share_links(int64_t now) {
    std::vector<const std::vector<int32_t>*> routes;
    routes.reserve(flows_.size());
    for (const Flow& f : flows_) routes.push_back(f.route);
    const std::vector<double> rates = max_min_rates(capacity_, routes);
    for (size_t i = 0; i < flows_.size(); ++i) {
      Flow& f = flows_[i];
      f.rate = rates[i];
      // The first whole ns by which the bytes left have moved (a hair of slack for the rounding
      // of earlier shares, so an exact quotient stays exact).
      const double ns = std::ceil(std::max(f.left_bytes, 0.0) / f.rate - 1e-6);
      const int64_t left_ns = ns >= 9.2e18 ? kNoEventNs : std::max<int64_t>(static_cast<int64_t>(ns), 0);
      f.done_ns = later_ns(now, left_ns);
    }
    rates_dirty_ = false;
  }

  void finish(int32_t id, int64_t now) {
    const auto idx = static_cast<size_t>(id);
    const ServerTask& t = s_.tasks[idx];
    end_[idx] = now;
    const size_t q = queue_of(t);
    busy_[q] = 0;
    last_end_[q] = now;
    ServerGpuFigures& g = p_.gpus[static_cast<size_t>(t.gpu)];
    g.end_ns = std::max(g.end_ns, now);
    p_.step_time_ns = std::max(p_.step_time_ns, now);
    const int32_t releaser = t.kind == ServerTaskKind::compute ? t.gpu : t.from;
    if (releaser != kHostSide && t.free_bytes > 0) in_use_[static_cast<size_t>(releaser)] -= t.free_bytes;
    if (t.kind == ServerTaskKind::transfer) account_copy(t);
    for (const int32_t d : dependents_[idx]) --pending_[static_cast<size_t>(d)];
    if (hosts_[static_cast<size_t>(t.gpu)].finished(id)) {  // the host waited for this one
      p_.gpus[static_cast<size_t>(t.gpu)].host_end_ns = std::max(p_.gpus[static_cast<size_t>(t.gpu)].host_end_ns, now);
      host_advance(t.gpu, now);
    }
  }

  void account_copy(const ServerTask& t) {
    const auto payload = static_cast<size_t>(t.payload);
    if (costmodel::ServerRoutes::is_host_transfer(t.from, t.to)) {
      p_.swap_bytes[payload] += t.bytes;
    } else {
      p_.peer_bytes[payload] += t.bytes;
    }
    if (t.from == kHostSide) {
      p_.gpus[static_cast<size_t>(t.to)].bytes_from_host += t.bytes;
    } else if (t.to == kHostSide) {
      p_.gpus[static_cast<size_t>(t.from)].bytes_to_host += t.bytes;
    } else {
      p_.gpus[static_cast<size_t>(t.from)].bytes_to_peers += t.bytes;
      p_.gpus[static_cast<size_t>(t.to)].bytes_from_peers += t.bytes;
    }
    if (t.bytes > 0) {
      for (const int32_t r : routes_.route(t.from, t.to)) p_.resource_bytes[static_cast<size_t>(r)] += t.bytes;
    }
  }

  const ServerSchedule& s_;
  const costmodel::ServerSpec& server_;
  costmodel::ServerRoutes routes_;
  size_t n_;
  std::vector<std::vector<int32_t>> queues_;  // per (GPU, stream): task ids in list order
  std::vector<size_t> head_;
  std::vector<uint8_t> busy_;
  std::vector<int64_t> last_end_;
  std::vector<int32_t> pending_;
  std::vector<std::vector<int32_t>> dependents_;
  std::vector<int64_t> start_;
  std::vector<int64_t> end_;
  std::vector<int64_t> in_use_;
  int64_t limit_ = 0;
  std::vector<double> capacity_;
  EventQueue<Event> events_;
  std::vector<Flow> flows_;
  std::vector<HostIssuer> hosts_;  // per GPU
  std::vector<uint8_t> moving_ = std::vector<uint8_t>(n_, 0);
  bool rates_dirty_ = false;
  ServerPrediction p_;
};

}  // namespace

ServerPrediction simulate_server(const ServerSchedule& schedule, const costmodel::ServerSpec& server,
                                 const ServerSimOptions& options) {
  ir::validate_server_schedule(schedule);
  if (schedule.gpu_count > server.gpu_count) {
    throw ir::ServerScheduleError(fmt::format("server schedule uses {} GPUs; server '{}' has {}",
                                              schedule.gpu_count, server.name, server.gpu_count));
  }
  ServerReplay replay(schedule, server, options);
  return replay.run(options.record_spans);
}

}  // namespace mutwo::sim

#include "policies/state_offload.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "ir/memory_rule.hpp"
#include "ir/schedule_check.hpp"
#include "policies/policy_result.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

using ir::InstrId;
using ir::InstrKind;
using ir::Instruction;
using ir::Schedule;
using ir::TensorId;
using ir::TensorRole;

namespace {

// Op ranges [first, end) the pass covers.
std::vector<std::pair<ir::OpId, ir::OpId>> chosen_ranges(const Schedule& s,
                                                         const std::vector<int32_t>& sub_arrays) {
  std::vector<std::pair<ir::OpId, ir::OpId>> ranges;
  if (s.sub_arrays.empty()) {
    if (!sub_arrays.empty()) {
      throw Error(fmt::format("state offload: sub-array {} given, but the schedule lists no sub-arrays",
                              sub_arrays.front()));
    }
    ranges.emplace_back(0, static_cast<ir::OpId>(s.graph.ops.size()));
    return ranges;
  }
  if (sub_arrays.empty()) {
    for (const ir::SubArray& sa : s.sub_arrays) ranges.emplace_back(sa.first_op, sa.end_op);
    return ranges;
  }
  for (int32_t i : sub_arrays) {
    if (i < 0 || static_cast<size_t>(i) >= s.sub_arrays.size()) {
      throw Error(fmt::format("state offload: sub-array {} is not in the schedule ({} sub-arrays)", i,
                              s.sub_arrays.size()));
    }
    ranges.emplace_back(s.sub_arrays[static_cast<size_t>(i)].first_op, s.sub_arrays[static_cast<size_t>(i)].end_op);
  }
  return ranges;
}

struct Access {
  InstrId first = ir::kNoId;        // first instruction reading or writing the tensor
  InstrId last = ir::kNoId;         // last one
  std::vector<InstrId> readers;     // every instruction reading it
  bool updated = false;             // an optimizer op updates it in place
};

// FIFO copy engine on the estimated timeline.
struct Queue {
  int64_t free_at_ns = 0;
  int64_t push(int64_t ready_ns, int64_t duration_ns) {
    free_at_ns = std::max(free_at_ns, ready_ns) + duration_ns;
    return free_at_ns;
  }
};

}  // namespace

std::string_view optimizer_place_name(OptimizerPlace place) {
  switch (place) {
    case OptimizerPlace::device:
      return "device";
    case OptimizerPlace::host:
      return "host";
    case OptimizerPlace::best:
      return "best";
  }
  return "?";
}

OptimizerPlace parse_optimizer_place(std::string_view name) {
  for (OptimizerPlace p : {OptimizerPlace::device, OptimizerPlace::host, OptimizerPlace::best}) {
    if (name == optimizer_place_name(p)) return p;
  }
  throw UnknownNameError(fmt::format("unknown optimizer place '{}'; valid: device, host, best", name));
}

std::vector<TensorId> offloadable_state(const Schedule& planned, const std::vector<int32_t>& sub_arrays) {
  const auto ranges = chosen_ranges(planned, sub_arrays);
  auto in_range = [&](ir::OpId op) {
    for (const auto& [first, end] : ranges) {
      if (op >= first && op < end) return true;
    }
    return false;
  };
  std::vector<TensorId> out;
  for (const ir::Tensor& t : planned.graph.tensors) {
    if (!ir::is_persistent(t.role)) continue;
    const ir::OpId op = t.producer != ir::kNoId ? t.producer
                        : t.consumers.empty()   ? ir::kNoId
                                                : t.consumers.front();
    if (op != ir::kNoId && in_range(op)) out.push_back(t.id);
  }
  return out;
}

Schedule offload_model_state(const Schedule& planned, const costmodel::OpCostModel& cost,
                             const std::vector<int32_t>& sub_arrays, OptimizerPlace place) {
  if (place == OptimizerPlace::best) {
    throw Error("state offload: the optimizer's place must be device or host (best is plan_with_state_offload's)");
  }
  const bool on_host = place == OptimizerPlace::host;
  const ir::Graph& g = planned.graph;
  std::vector<TensorId> state = offloadable_state(planned, sub_arrays);
  std::vector<uint8_t> moved(g.tensors.size(), 0);
  for (TensorId t : state) moved[static_cast<size_t>(t)] = 1;
  for (TensorId t : planned.host_state) {
    if (moved[static_cast<size_t>(t)] != 0) {
      throw Error(fmt::format("state offload: tensor {} '{}' is already kept on the host", t, g.tensor(t).name));
    }
  }

  // With the optimizer on the host: which instructions are its updates (all of whose inputs move).
  const size_t n = planned.instructions.size();
  std::vector<uint8_t> host_op(n, 0);
  int32_t host_stream = ir::kFirstExtraComputeStream;
  for (const Instruction& in : planned.instructions) host_stream = std::max(host_stream, in.stream + 1);
  if (on_host) {
    for (size_t k = 0; k < n; ++k) {
      const Instruction& in = planned.instructions[k];
      if (in.kind != InstrKind::compute) continue;
      const ir::Op& op = g.op(in.op);
      if (op.phase != ir::Phase::optimizer) continue;
      bool mine = !op.inputs.empty();
      for (TensorId t : op.inputs) mine = mine && moved[static_cast<size_t>(t)] != 0;
      if (!mine) continue;
      if (!ir::is_optimizer_update(op.kind)) {
        throw Error(
            fmt::format("state offload: op {} '{}' of kind {} cannot run on the host (only sgd_step, "
                        "adam_step and adamw_step do); keep the optimizer on the device",
                        op.id, op.name, ir::kind_name(op.kind)));
      }
      host_op[k] = 1;
    }
  }

  // Accesses and the estimated compute timeline (compute instructions back to back).
  std::vector<Access> access(g.tensors.size());
  std::vector<int64_t> start_ns(n, 0);
  std::vector<int64_t> end_ns(n, 0);
  std::vector<InstrId> compute_list;  // compute-stream instructions in list order
  const std::vector<int64_t> op_ns = costmodel::op_durations_ns(cost, g);
  int64_t now = 0;
  auto touch = [&](TensorId t, InstrId i, bool reads) {
    Access& a = access[static_cast<size_t>(t)];
    if (a.first == ir::kNoId) a.first = i;
    a.last = i;
    if (reads) a.readers.push_back(i);
  };
  for (size_t k = 0; k < n; ++k) {
    const Instruction& in = planned.instructions[k];
    const auto i = static_cast<InstrId>(k);
    if (host_op[k] != 0) {  // on the host: no device access, off the device's timeline
      start_ns[k] = end_ns[k] = now;
    } else if (ir::runs_op(in.kind)) {
      const ir::Op& op = g.op(in.op);
      start_ns[k] = now;
      now += op_ns[static_cast<size_t>(in.op)];
      end_ns[k] = now;
      compute_list.push_back(i);
      for (TensorId t : op.inputs) {
        if (moved[static_cast<size_t>(t)] == 0) continue;
        touch(t, i, true);
        if (op.phase == ir::Phase::optimizer && in.kind == InstrKind::compute) {
          access[static_cast<size_t>(t)].updated = true;
        }
      }
      for (TensorId t : op.outputs) {
        if (moved[static_cast<size_t>(t)] != 0) touch(t, i, false);
      }
    } else {
      start_ns[k] = end_ns[k] = now;
      if (moved[static_cast<size_t>(in.tensor)] != 0) {
        throw Error(fmt::format("state offload: the plan already moves or frees tensor {} '{}' (instruction {})",
                                in.tensor, g.tensor(in.tensor).name, k));
      }
    }
  }

  // What goes where: new instructions before everything, or right after an instruction.
  struct NewInstr {
    InstrKind kind;
    TensorId tensor;
    std::vector<InstrId> waits_old;  // old ids
    int32_t wait_new = -1;           // index into news (a swap_out a free waits on)
    int32_t stream;
  };
  std::vector<NewInstr> news;
  std::vector<std::vector<int32_t>> after(n);  // old instruction -> new ones right after it, in order
  std::vector<int32_t> at_start;
  std::vector<std::vector<int32_t>> waited_by(n);  // old instruction -> new ones it must wait on

  const costmodel::DeviceSpec& device = cost.device();
  auto bytes_of = [&](TensorId t) { return g.tensor(t).bytes; };  // what a copy moves

  // Gradients: freed after their last reader (waiting on readers on other streams); with the
  // optimizer on the host, copied out after their last device access and freed as state is.
  std::vector<TensorId> loaded;    // weights and optimizer state with accesses
  std::vector<TensorId> streamed;  // gradients copied to the host for the host optimizer
  for (TensorId t : state) {
    const Access& a = access[static_cast<size_t>(t)];
    if (a.first == ir::kNoId) continue;  // not touched: stays on the host, nothing to do
    if (g.tensor(t).role != TensorRole::gradient) {
      loaded.push_back(t);
      continue;
    }
    if (on_host) {
      streamed.push_back(t);
      continue;
    }
    const int32_t stream = planned.instructions[static_cast<size_t>(a.last)].stream;
    NewInstr f{InstrKind::free, t, {}, -1, ir::is_compute_stream(stream) ? stream : ir::kComputeStream};
    for (InstrId r : a.readers) {
      if (planned.instructions[static_cast<size_t>(r)].stream != f.stream) f.waits_old.push_back(r);
    }
    news.push_back(std::move(f));
    after[static_cast<size_t>(a.last)].push_back(static_cast<int32_t>(news.size() - 1));
  }

  // Swap-ins: FIFO by first use; the latest start that lets every later copy finish on time.
  std::vector<TensorId> by_first = loaded;
  std::stable_sort(by_first.begin(), by_first.end(), [&](TensorId x, TensorId y) {
    return access[static_cast<size_t>(x)].first < access[static_cast<size_t>(y)].first;
  });
  std::vector<int64_t> latest(by_first.size(), 0);
  int64_t next_start = std::numeric_limits<int64_t>::max();
  for (size_t j = by_first.size(); j-- > 0;) {
    const TensorId t = by_first[j];
    const int64_t deadline = std::min(start_ns[static_cast<size_t>(access[static_cast<size_t>(t)].first)], next_start);
    latest[j] = deadline - costmodel::transfer_duration_ns(device, bytes_of(t), costmodel::CopyDirection::host_to_device);
    next_start = latest[j];
  }
  size_t cursor = 0;  // compute_list index: the trigger only moves forward with j
  InstrId trigger = ir::kNoId;
  for (size_t j = 0; j < by_first.size(); ++j) {
    const TensorId t = by_first[j];
    const InstrId first = access[static_cast<size_t>(t)].first;
    while (cursor < compute_list.size() && compute_list[cursor] < first &&
           end_ns[static_cast<size_t>(compute_list[cursor])] <= latest[j]) {
      trigger = compute_list[cursor++];
    }
    NewInstr in{InstrKind::swap_in, t, {}, -1, ir::kHostToDeviceStream};
    if (trigger != ir::kNoId) in.waits_old.push_back(trigger);
    news.push_back(std::move(in));
    const auto idx = static_cast<int32_t>(news.size() - 1);
    (trigger == ir::kNoId ? at_start : after[static_cast<size_t>(trigger)]).push_back(idx);
    waited_by[static_cast<size_t>(first)].push_back(idx);
  }

  // Swap-outs after the last update (FIFO by last access), frees once the copy is estimated done.
  std::vector<TensorId> by_last = loaded;
  by_last.insert(by_last.end(), streamed.begin(), streamed.end());
  std::vector<int32_t> swap_out_of(g.tensors.size(), -1);  // news index of a tensor's swap_out
  std::stable_sort(by_last.begin(), by_last.end(), [&](TensorId x, TensorId y) {
    return access[static_cast<size_t>(x)].last < access[static_cast<size_t>(y)].last;
  });
  Queue out_queue;
  for (TensorId t : by_last) {
    const Access& a = access[static_cast<size_t>(t)];
    int32_t out_index = -1;
    int64_t done_ns = end_ns[static_cast<size_t>(a.last)];
    if (a.updated || g.tensor(t).role == TensorRole::gradient) {
      news.push_back(NewInstr{InstrKind::swap_out, t, {a.last}, -1, ir::kDeviceToHostStream});
      out_index = static_cast<int32_t>(news.size() - 1);
      swap_out_of[static_cast<size_t>(t)] = out_index;
      after[static_cast<size_t>(a.last)].push_back(out_index);
      done_ns = out_queue.push(done_ns, costmodel::transfer_duration_ns(device, bytes_of(t),
                                                                        costmodel::CopyDirection::device_to_host));
    }
    // The first compute instruction at or after the last access that ends once the copy is done.
    auto pos = std::lower_bound(compute_list.begin(), compute_list.end(), a.last);
    InstrId free_at = a.last;
    while (pos != compute_list.end() && end_ns[static_cast<size_t>(*pos)] < done_ns) free_at = *pos++;
    if (pos != compute_list.end()) free_at = *pos;
    NewInstr f{InstrKind::free, t, {}, out_index, ir::kComputeStream};
    const int32_t stream = planned.instructions[static_cast<size_t>(free_at)].stream;
    if (ir::is_compute_stream(stream)) f.stream = stream;
    for (InstrId r : a.readers) {
      if (planned.instructions[static_cast<size_t>(r)].stream != f.stream) f.waits_old.push_back(r);
    }
    news.push_back(std::move(f));
    after[static_cast<size_t>(free_at)].push_back(static_cast<int32_t>(news.size() - 1));
  }

  // A host update waits on the copies of its gradients (made right after they were written, so
  // earlier in the list).
  for (size_t k = 0; k < n; ++k) {
    if (host_op[k] == 0) continue;
    for (TensorId t : g.op(planned.instructions[k].op).inputs) {
      if (swap_out_of[static_cast<size_t>(t)] >= 0) waited_by[k].push_back(swap_out_of[static_cast<size_t>(t)]);
    }
  }

  // Emit: old ids renumbered, new instructions in place; within one point swap_outs, frees, then
  // swap_ins (the order they were added per kind, which is by tensor order of their queues).
  auto kind_rank = [&](int32_t idx) {
    const InstrKind k = news[static_cast<size_t>(idx)].kind;
    return k == InstrKind::swap_out ? 0 : k == InstrKind::free ? 1 : 2;
  };
  for (auto& list : after) {
    std::stable_sort(list.begin(), list.end(), [&](int32_t x, int32_t y) { return kind_rank(x) < kind_rank(y); });
  }
  Schedule out;
  out.graph = g;
  out.sub_arrays = planned.sub_arrays;
  out.policy = planned.policy;
  out.host_state = planned.host_state;
  out.host_state.insert(out.host_state.end(), state.begin(), state.end());
  std::sort(out.host_state.begin(), out.host_state.end());
  out.host_stream = planned.host_stream;
  if (on_host) {
    if (planned.host_stream != ir::kNoStream) host_stream = planned.host_stream;
    out.host_stream = host_stream;
  }
  out.instructions.reserve(n + news.size());
  std::vector<InstrId> new_id_of_old(n, ir::kNoId);
  std::vector<InstrId> new_id_of_new(news.size(), ir::kNoId);
  auto emit_new = [&](int32_t idx) {
    const NewInstr& x = news[static_cast<size_t>(idx)];
    Instruction in;
    in.id = static_cast<InstrId>(out.instructions.size());
    in.kind = x.kind;
    in.stream = x.stream;
    in.tensor = x.tensor;
    for (InstrId w : x.waits_old) in.waits.push_back(new_id_of_old[static_cast<size_t>(w)]);
    if (x.wait_new >= 0) in.waits.push_back(new_id_of_new[static_cast<size_t>(x.wait_new)]);
    std::sort(in.waits.begin(), in.waits.end());
    in.waits.erase(std::unique(in.waits.begin(), in.waits.end()), in.waits.end());
    new_id_of_new[static_cast<size_t>(idx)] = in.id;
    out.instructions.push_back(std::move(in));
  };
  for (int32_t idx : at_start) emit_new(idx);
  for (size_t k = 0; k < n; ++k) {
    Instruction in = planned.instructions[k];
    in.id = static_cast<InstrId>(out.instructions.size());
    if (host_op[k] != 0) in.stream = host_stream;
    for (InstrId& w : in.waits) w = new_id_of_old[static_cast<size_t>(w)];
    for (int32_t idx : waited_by[k]) in.waits.push_back(new_id_of_new[static_cast<size_t>(idx)]);
    std::sort(in.waits.begin(), in.waits.end());
    in.waits.erase(std::unique(in.waits.begin(), in.waits.end()), in.waits.end());
    new_id_of_old[k] = in.id;
    out.instructions.push_back(std::move(in));
    for (int32_t idx : after[k]) emit_new(idx);
  }
  ir::validate_schedule(out);
  return out;
}

PolicyResult plan_with_state_offload(const MemoryPolicy& policy, const PolicyInput& input, OptimizerPlace place) {
  check_policy_input(input, policy.name());
  const Schedule& base = *input.base;
  const std::vector<TensorId> state = offloadable_state(base);
  int64_t state_bytes = 0;
  for (TensorId t : state) state_bytes += ir::allocation_bytes(base.graph.tensor(t).bytes);
  // First guess at what stays on the device at once: the two largest neighbouring sub-arrays'
  // state (multiplexing overlaps one sub-array's backward with the next one's forward).
  int64_t window_bytes = state_bytes;
  if (base.sub_arrays.size() > 1) {
    std::vector<int64_t> per(base.sub_arrays.size(), 0);
    for (size_t i = 0; i < base.sub_arrays.size(); ++i) {
      for (TensorId t : offloadable_state(base, {static_cast<int32_t>(i)})) {
        per[i] += ir::allocation_bytes(base.graph.tensor(t).bytes);
      }
    }
    window_bytes = 0;
    for (size_t i = 0; i + 1 < per.size(); ++i) window_bytes = std::max(window_bytes, per[i] + per[i + 1]);
  }
  // With `best`, the host is tried only where it runs every optimizer op (not amp_unscale).
  bool host_runs_all = true;
  for (const ir::Op& op : base.graph.ops) {
    if (op.phase == ir::Phase::optimizer && !ir::is_optimizer_update(op.kind)) host_runs_all = false;
  }
  // The activation plan offloaded with the optimizer at `at`.
  auto offload = [&](const PolicyResult& planned, OptimizerPlace at) {
    Schedule offloaded = offload_model_state(planned.schedule, *input.cost, {}, at);
    offloaded.policy = std::string(policy.name()) + "+offload";
    PolicyResult r = evaluate_schedule(std::move(offloaded), input, "");
    r.note = fmt::format("{}; model state on the host ({:.2f} GB in, {:.2f} GB out), optimizer on the {}",
                         planned.note, static_cast<double>(r.prediction.state_bytes_swapped_in) / 1e9,
                         static_cast<double>(r.prediction.state_bytes_swapped_out) / 1e9,
                         optimizer_place_name(at));
    return r;
  };
  PolicyInput inner = input;
  int64_t raise_bytes = state_bytes - window_bytes;
  std::optional<PolicyResult> best;
  int64_t previous_peak = -1;
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    inner.memory_limit_bytes = input.memory_limit_bytes + std::max<int64_t>(raise_bytes, 0);
    const PolicyResult planned = policy.plan(inner);
    std::optional<PolicyResult> round_best;
    for (OptimizerPlace at : {OptimizerPlace::device, OptimizerPlace::host}) {
      if (place == OptimizerPlace::best ? at == OptimizerPlace::host && !host_runs_all : at != place) continue;
      PolicyResult r = offload(planned, at);
      if (!round_best || better_result(r, *round_best)) round_best = std::move(r);
    }
    PolicyResult r = std::move(*round_best);
    const bool improves = !best || better_result(r, *best);
    const int64_t peak = r.peak_bytes;
    const bool fits = r.feasible;
    if (improves) best = std::move(r);
    // Stop once it fits, or when the plan does not change with the limit (e.g. 'none').
    if (fits || raise_bytes <= 0 || peak == previous_peak) break;
    previous_peak = peak;
    raise_bytes -= peak - input.memory_limit_bytes;
  }
  return std::move(*best);
}

}  // namespace mutwo::policies

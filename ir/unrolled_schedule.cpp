#include "ir/unrolled_schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ir/merge_by_progress.hpp"
#include "support/error.hpp"

namespace mutwo::ir {
namespace {

// The tensors an instruction touches.
template <typename Visit>
void touched(const Graph& g, const Instruction& in, Visit&& visit) {
  if (runs_op(in.kind)) {
    const Op& op = g.op(in.op);
    for (TensorId t : op.inputs) visit(t);
    for (TensorId t : op.outputs) visit(t);
  } else {
    visit(in.tensor);
  }
}

bool is_batch(const Tensor& t) {
  return t.role == TensorRole::input || t.role == TensorRole::label;
}

// Instructions [begin, end) cut after each op the device computes: chunk c is (last[c - 1],
// last[c]] and takes ns[c]; instructions after the last such op form a chunk of 0 ns.
struct Chunks {
  std::vector<InstrId> last;
  std::vector<int64_t> ns;
};

Chunks chunk(const Schedule& s, InstrId begin, InstrId end, const std::vector<int64_t>& op_ns) {
  Chunks c;
  for (InstrId i = begin; i < end; ++i) {
    const Instruction& in = s.instructions[static_cast<size_t>(i)];
    if (runs_op(in.kind) && !runs_on_host(s, in)) {
      c.last.push_back(i);
      c.ns.push_back(op_ns[static_cast<size_t>(in.op)]);
    }
  }
  if (c.last.empty() ? begin < end : c.last.back() + 1 < end) {
    c.last.push_back(end - 1);
    c.ns.push_back(0);
  }
  return c;
}

// Emits instructions of several iterations, each with its waits mapped to unrolled ids and the
// cross-iteration waits on each tensor's previous toucher.
class Emitter {
 public:
  Emitter(const Schedule& schedule, UnrolledSchedule& out, bool lazy_uploads)
      : s_(schedule), g_(schedule.graph), out_(out), lazy_uploads_(lazy_uploads) {
    const size_t tensors = g_.tensors.size();
    last_touch_.assign(tensors, kNoId);
    touched_iteration_.assign(tensors, -1);
    uploaded_iteration_.assign(tensors, 0);  // iteration 0's batch is resident at the start
    pending_upload_.assign(tensors, kNoId);
    for (auto& ids : new_id_) ids.assign(schedule.instructions.size(), kNoId);
  }

  void begin_iteration(int32_t k) {
    std::fill(new_id_[static_cast<size_t>(k % 2)].begin(), new_id_[static_cast<size_t>(k % 2)].end(), kNoId);
  }

  // Every batch tensor's upload for iteration k, now (unwrapped: the top of the iteration).
  void upload_batch(int32_t k) {
    for (const Tensor& t : g_.tensors) {
      if (is_batch(t)) upload(k, t.id);
    }
  }

  void emit(int32_t k, InstrId i) {
    const Instruction& in = s_.instructions[static_cast<size_t>(i)];
    if (lazy_uploads_ && k > 0) {
      touched(g_, in, [&](TensorId t) {
        if (is_batch(g_.tensor(t)) && uploaded_iteration_[static_cast<size_t>(t)] < k) upload(k, t);
      });
    }
    Instruction copy = in;
    copy.id = next_id();
    copy.waits.clear();
    std::vector<InstrId>& ids = new_id_[static_cast<size_t>(k % 2)];
    for (InstrId w : in.waits) copy.waits.push_back(ids[static_cast<size_t>(w)]);
    touched(g_, in, [&](TensorId t) { touch(k, copy, t); });
    // The first reader of an uploaded batch tensor waits on its upload.
    touched(g_, in, [&](TensorId t) {
      InstrId& up = pending_upload_[static_cast<size_t>(t)];
      if (up != kNoId) {
        if (copy.stream != kComputeStream) copy.waits.push_back(up);
        up = kNoId;
      }
    });
    std::sort(copy.waits.begin(), copy.waits.end());
    copy.waits.erase(std::unique(copy.waits.begin(), copy.waits.end()), copy.waits.end());
    ids[static_cast<size_t>(i)] = copy.id;
    push(std::move(copy), k, i);
  }

 private:
  InstrId next_id() const { return static_cast<InstrId>(out_.schedule.instructions.size()); }

  // The first toucher of a tensor in iteration k waits on its last toucher before, on another stream.
  void touch(int32_t k, Instruction& copy, TensorId t) {
    const auto ti = static_cast<size_t>(t);
    if (touched_iteration_[ti] < k && last_touch_[ti] != kNoId &&
        out_.schedule.instructions[static_cast<size_t>(last_touch_[ti])].stream != copy.stream) {
      copy.waits.push_back(last_touch_[ti]);
    }
    touched_iteration_[ti] = k;
    last_touch_[ti] = copy.id;
  }

  void upload(int32_t k, TensorId t) {
    Instruction up;
    up.id = next_id();
    up.kind = InstrKind::swap_in;
    up.stream = kComputeStream;
    up.tensor = t;
    touch(k, up, t);
    pending_upload_[static_cast<size_t>(t)] = up.id;
    uploaded_iteration_[static_cast<size_t>(t)] = k;
    push(std::move(up), k, kNoId);
  }

  void push(Instruction in, int32_t k, InstrId original) {
    out_.schedule.instructions.push_back(std::move(in));
    out_.iteration_of.push_back(k);
    out_.original_of.push_back(original);
  }

  const Schedule& s_;
  const Graph& g_;
  UnrolledSchedule& out_;
  bool lazy_uploads_;
  std::vector<InstrId> last_touch_;          // per tensor: its last toucher emitted so far
  std::vector<int32_t> touched_iteration_;   // per tensor: the iteration of that toucher
  std::vector<int32_t> uploaded_iteration_;  // per batch tensor: the last iteration it was uploaded for
  std::vector<InstrId> pending_upload_;      // per batch tensor: its upload, until its first reader
  std::vector<InstrId> new_id_[2];           // per step instruction: its unrolled id, iterations k % 2
};

}  // namespace

BoundaryMerge boundary_merge(const Schedule& schedule, const std::vector<int64_t>& op_ns) {
  const Graph& g = schedule.graph;
  if (schedule.sub_arrays.size() < 2) {
    throw Error(
        fmt::format("wrap: the schedule has {} sub-array(s); merging the last one's backward with the "
                    "first one's next forward needs two or more",
                    schedule.sub_arrays.size()));
  }
  if (op_ns.size() != g.ops.size()) {
    throw Error(fmt::format("wrap: {} op durations for a graph of {} ops", op_ns.size(), g.ops.size()));
  }
  const SubArray& first = schedule.sub_arrays.front();
  const SubArray& last = schedule.sub_arrays.back();
  auto in = [](const SubArray& s, OpId id) { return id >= s.first_op && id < s.end_op; };
  const auto n = static_cast<InstrId>(schedule.instructions.size());
  BoundaryMerge m;
  m.head_end = n;
  m.tail_begin = n;
  for (InstrId i = 0; i < n; ++i) {
    const Instruction& x = schedule.instructions[static_cast<size_t>(i)];
    if (x.kind != InstrKind::compute) continue;
    const Op& op = g.op(x.op);
    if (m.head_end == n && !(in(first, op.id) && op.phase == Phase::forward)) m.head_end = i;
    if (in(last, op.id) && op.phase != Phase::forward) {
      m.tail_begin = i;
      break;
    }
  }
  if (m.tail_begin == n) {
    throw Error(fmt::format("wrap: the last sub-array '{}' computes no backward or optimizer op", last.name));
  }

  // A head instruction comes after the tail's last toucher of each tensor it touches.
  std::vector<InstrId> last_in_step(g.tensors.size(), kNoId);
  for (InstrId i = 0; i < n; ++i) {
    touched(g, schedule.instructions[static_cast<size_t>(i)],
            [&](TensorId t) { last_in_step[static_cast<size_t>(t)] = i; });
  }
  std::vector<InstrId> need(static_cast<size_t>(m.head_end), kNoId);
  for (InstrId i = 0; i < m.head_end; ++i) {
    touched(g, schedule.instructions[static_cast<size_t>(i)], [&](TensorId t) {
      const InstrId l = last_in_step[static_cast<size_t>(t)];
      if (l >= m.tail_begin) need[static_cast<size_t>(i)] = std::max(need[static_cast<size_t>(i)], l);
    });
  }

  const Chunks tail = chunk(schedule, m.tail_begin, n, op_ns);
  const Chunks head = chunk(schedule, 0, m.head_end, op_ns);
  std::vector<int32_t> tail_ids(tail.last.size());
  std::vector<int32_t> head_ids(head.last.size());
  for (size_t c = 0; c < tail_ids.size(); ++c) tail_ids[c] = static_cast<int32_t>(c);
  const auto head_base = static_cast<int32_t>(tail_ids.size());
  for (size_t c = 0; c < head_ids.size(); ++c) head_ids[c] = head_base + static_cast<int32_t>(c);
  const std::vector<int32_t> merged = merge_by_progress(tail_ids, tail.ns, head_ids, head.ns);

  // Emission: the tail in order; a head instruction as its chunk comes, unless it must wait for a
  // tail instruction not yet emitted (a tensor it touches), or for a deferred head instruction (on
  // its stream, or one it waits on): then it is deferred, and emitted as soon as that is resolved.
  // Per stream and through waits, each list keeps its order, which is all the schedule relies on.
  std::vector<uint8_t> deferred(static_cast<size_t>(m.head_end), 0);
  std::vector<InstrId> queue;  // deferred head instructions, in head order
  InstrId tail_next = m.tail_begin;
  InstrId head_next = 0;
  auto ready = [&](InstrId h, const std::vector<int32_t>& blocked_streams) {
    const Instruction& x = schedule.instructions[static_cast<size_t>(h)];
    if (need[static_cast<size_t>(h)] >= tail_next) return false;
    if (std::find(blocked_streams.begin(), blocked_streams.end(), x.stream) != blocked_streams.end())
      return false;
    return std::none_of(x.waits.begin(), x.waits.end(),
                        [&](InstrId w) { return w < m.head_end && deferred[static_cast<size_t>(w)] != 0; });
  };
  auto retry = [&] {
    std::vector<int32_t> blocked;
    std::vector<InstrId> still;
    for (InstrId h : queue) {
      if (ready(h, blocked)) {
        deferred[static_cast<size_t>(h)] = 0;
        m.order.emplace_back(true, h);
      } else {
        blocked.push_back(schedule.instructions[static_cast<size_t>(h)].stream);
        still.push_back(h);
      }
    }
    queue = std::move(still);
  };
  auto emit_tail_through = [&](InstrId last_id) {
    while (tail_next <= last_id) {
      m.order.emplace_back(false, tail_next++);
      if (!queue.empty()) retry();
    }
  };
  for (int32_t c : merged) {
    if (c < head_base) {
      emit_tail_through(tail.last[static_cast<size_t>(c)]);
      continue;
    }
    const InstrId last_id = head.last[static_cast<size_t>(c - head_base)];
    for (; head_next <= last_id; ++head_next) {
      std::vector<int32_t> blocked;
      for (InstrId h : queue) blocked.push_back(schedule.instructions[static_cast<size_t>(h)].stream);
      if (ready(head_next, blocked)) {
        m.order.emplace_back(true, head_next);
      } else {
        deferred[static_cast<size_t>(head_next)] = 1;
        queue.push_back(head_next);
      }
    }
  }
  emit_tail_through(n - 1);
  if (!queue.empty()) throw Error(fmt::format("wrap: head instruction {} left unmerged", queue.front()));
  return m;
}

UnrolledSchedule unroll_iterations(const Schedule& schedule, int32_t iterations, const BoundaryMerge* wrap) {
  if (iterations < 1 || iterations > 1000) {
    throw Error(fmt::format("iterations = {}: must be from 1 to 1000", iterations));
  }
  const auto n = static_cast<InstrId>(schedule.instructions.size());
  if (wrap != nullptr &&
      (wrap->head_end < 0 || wrap->head_end > wrap->tail_begin || wrap->tail_begin > n ||
       wrap->order.size() != static_cast<size_t>(wrap->head_end + (n - wrap->tail_begin)))) {
    throw Error(
        fmt::format("wrap: a boundary merge of head [0, {}) and tail [{}, ...) with {} entries does not "
                    "fit a schedule of {} instructions",
                    wrap->head_end, wrap->tail_begin, wrap->order.size(), n));
  }
  UnrolledSchedule out;
  out.schedule.graph = schedule.graph;
  out.schedule.sub_arrays = schedule.sub_arrays;
  out.schedule.policy = schedule.policy;
  out.schedule.host_state = schedule.host_state;
  out.schedule.host_stream = schedule.host_stream;
  out.iterations = iterations;
  out.wrapped = wrap != nullptr && iterations > 1;
  const size_t total = static_cast<size_t>(n) * static_cast<size_t>(iterations);
  out.schedule.instructions.reserve(total);
  out.iteration_of.reserve(total);
  out.original_of.reserve(total);

  Emitter e(schedule, out, out.wrapped);
  if (!out.wrapped) {
    for (int32_t k = 0; k < iterations; ++k) {
      e.begin_iteration(k);
      if (k > 0) e.upload_batch(k);
      for (InstrId i = 0; i < n; ++i) e.emit(k, i);
    }
    return out;
  }
  e.begin_iteration(0);
  for (InstrId i = 0; i < wrap->tail_begin; ++i) e.emit(0, i);
  for (int32_t k = 1; k < iterations; ++k) {
    e.begin_iteration(k);
    for (const auto& [next, i] : wrap->order) e.emit(next ? k : k - 1, i);
    for (InstrId i = wrap->head_end; i < wrap->tail_begin; ++i) e.emit(k, i);
  }
  // The last iteration's tail has its partner too: the next iteration's head (numbered `iterations`).
  e.begin_iteration(iterations);
  for (const auto& [next, i] : wrap->order) e.emit(next ? iterations : iterations - 1, i);
  return out;
}

}  // namespace mutwo::ir

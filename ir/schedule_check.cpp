#include "ir/schedule_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/memory_rule.hpp"
#include "ir/model_numbering.hpp"

namespace mutwo::ir {

namespace {

// Walks the instructions in list order (one valid execution, since waits point backwards) keeping
// each tensor's residency, and checks cross-stream ordering with one vector clock per instruction.
class ScheduleChecker {
 public:
  explicit ScheduleChecker(const Schedule& s) : s_(s), g_(s.graph) {
    std::vector<int32_t> ids;
    for (const Instruction& in : s.instructions) ids.push_back(in.stream);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (size_t i = 0; i < ids.size(); ++i) stream_index_[ids[i]] = i;
    streams_ = ids.size();
    clock_.assign(s.instructions.size() * streams_, 0);
    seq_.assign(s.instructions.size(), 0);
    last_on_stream_.assign(streams_, kNoId);
    state_.resize(g_.tensors.size());
    for (const Tensor& t : g_.tensors) state_[static_cast<size_t>(t.id)].resident = resident_at_start(t.role);
    computed_.assign(g_.ops.size(), kNoId);
  }

  void run() {
    check_sub_arrays();
    check_host_state();
    if (s_.host_stream != kNoStream &&
        (s_.host_stream < kFirstExtraComputeStream || s_.host_stream > kMaxStreamId)) {
      throw ScheduleError(
          fmt::format("schedule: field 'host_stream' = {} must be {} (no host stream) or {} to {}",
                      s_.host_stream, kNoStream, kFirstExtraComputeStream, kMaxStreamId));
    }
    for (size_t i = 0; i < s_.instructions.size(); ++i) check(s_.instructions[i], static_cast<InstrId>(i));
    for (const Op& op : g_.ops) {
      if (computed_[static_cast<size_t>(op.id)] == kNoId) {
        throw ScheduleError(fmt::format("schedule: op {} '{}' is never computed", op.id, op.name));
      }
    }
    check_host_state_at_end();
  }

 private:
  struct TensorState {
    bool resident = false;
    bool host_copy = false;
    InstrId maker = kNoId;              // made the device copy resident (kNoId: resident from the start)
    InstrId host_maker = kNoId;         // swap_out that made the host copy
    InstrId freed_by = kNoId;           // free that released the last device copy
    std::vector<InstrId> readers;       // read the device copy since `maker`
    std::vector<InstrId> host_readers;  // swap_ins that read the host copy since `host_maker`
  };

  std::string tensor_label(TensorId id) const {
    return fmt::format("tensor {} '{}'", id, g_.tensor(id).name);
  }

  std::string label(const Instruction& in, InstrId index) const {
    const std::string_view kind = instr_kind_name(in.kind);
    if (runs_op(in.kind)) {
      if (in.op >= 0 && static_cast<size_t>(in.op) < g_.ops.size()) {
        return fmt::format("instruction {} ({} op {} '{}')", index, kind, in.op, g_.op(in.op).name);
      }
      return fmt::format("instruction {} ({} op {})", index, kind, in.op);
    }
    if (in.tensor >= 0 && static_cast<size_t>(in.tensor) < g_.tensors.size()) {
      return fmt::format("instruction {} ({} {})", index, kind, tensor_label(in.tensor));
    }
    return fmt::format("instruction {} ({} tensor {})", index, kind, in.tensor);
  }

  [[noreturn]] void fail(const Instruction& in, InstrId index, const std::string& what) const {
    throw ScheduleError(fmt::format("{}: {}", label(in, index), what));
  }

  // True when instruction a happens before instruction b (a != b); kNoId is the step's start.
  bool happens_before(InstrId a, InstrId b) const {
    if (a == kNoId) return true;
    const size_t sa = stream_index_.at(s_.instructions[static_cast<size_t>(a)].stream);
    return seq_[static_cast<size_t>(a)] <= clock_[static_cast<size_t>(b) * streams_ + sa];
  }

  // `what` is a literal or a callable returning the message: formatted only on failure, since this
  // runs for every read of every instruction of every schedule a search evaluates.
  template <typename What>
  void require_ordered(const Instruction& in, InstrId index, InstrId before, const What& what) const {
    if (happens_before(before, index)) return;
    const Instruction& b = s_.instructions[static_cast<size_t>(before)];
    std::string text;
    if constexpr (std::is_invocable_v<const What&>) {
      text = what();
    } else {
      text = what;
    }
    fail(in, index,
         fmt::format(
             "{} {} on stream {}, which is not ordered before it (same stream earlier or reached through "
             "waits)",
             text, label(b, before), b.stream));
  }

  void check_sub_arrays() const {
    OpId end = 0;
    for (size_t i = 0; i < s_.sub_arrays.size(); ++i) {
      const SubArray& sa = s_.sub_arrays[i];
      if (sa.first_op < end || sa.end_op < sa.first_op || static_cast<size_t>(sa.end_op) > g_.ops.size()) {
        throw ScheduleError(
            fmt::format("sub_array {} '{}': op range [{}, {}) is not in order within the graph's {} "
                        "ops (previous range ends at {})",
                        i, sa.name, sa.first_op, sa.end_op, g_.ops.size(), end));
      }
      if (sa.width < 1)
        throw ScheduleError(
            fmt::format("sub_array {} '{}': field 'width' = {} must be >= 1", i, sa.name, sa.width));
      if (sa.end_op == sa.first_op) {
        throw ScheduleError(fmt::format("sub_array {} '{}': op range [{}, {}) holds no ops", i, sa.name,
                                        sa.first_op, sa.end_op));
      }
      check_sub_array_ops(i, sa);
      if (sa.batch_size < 0) {
        throw ScheduleError(
            fmt::format("sub_array {} '{}': field 'batch_size' = {} is negative", i, sa.name, sa.batch_size));
      }
      check_batch(fmt::format("sub_array {} '{}'", i, sa.name), sa.batch_size, sa.first_op, sa.end_op);
      end = sa.end_op;
    }
    check_model_numbering(s_.sub_arrays);
    if (s_.sub_arrays.empty()) {
      check_graph_width();
      check_batch("graph", g_.batch_size, 0, static_cast<OpId>(g_.ops.size()));
    }
  }

  // Without sub-arrays the graph's width is the step's model count (samples per step, the executor's
  // losses): a file whose width its ops do not train reported a model that never trained (loss 0)
  // or ran out of range, and a width of 10^9 held a loss per model.
  void check_graph_width() const {
    int32_t widest = 1;
    for (const Op& op : g_.ops) widest = std::max(widest, op.width);
    if (g_.width != widest) {
      throw ScheduleError(fmt::format("graph '{}': field 'width' = {}, but its ops train {} model{}", g_.name,
                                      g_.width, widest, widest == 1 ? "" : "s"));
    }
  }

  // The models a sub-array trains are its ops' (samples per step count them), and it trains them
  // alone: no op of it reads what another sub-array's op made (a range cut through one model, its
  // backward apart from its forward, would count that model's samples twice).
  void check_sub_array_ops(size_t index, const SubArray& sa) const {
    int32_t widest = 1;
    for (OpId o = sa.first_op; o < sa.end_op; ++o) {
      const Op& op = g_.op(o);
      widest = std::max(widest, op.width);
      for (TensorId id : op.inputs) {
        const OpId producer = g_.tensor(id).producer;
        if (producer != kNoId && (producer < sa.first_op || producer >= sa.end_op)) {
          throw ScheduleError(fmt::format(
              "sub_array {} '{}': op {} '{}' reads tensor {} '{}', made by op {} outside its range [{}, {}): "
              "sub-arrays are independent models",
              index, sa.name, o, op.name, id, g_.tensor(id).name, producer, sa.first_op, sa.end_op));
        }
      }
    }
    if (widest != sa.width) {
      throw ScheduleError(fmt::format("sub_array {} '{}': field 'width' = {}, but its ops train {} model{}",
                                      index, sa.name, sa.width, widest, widest == 1 ? "" : "s"));
    }
  }

  // Samples per model, what samples per second counts: every input and label the ops [first, end) read
  // holds `batch` in its leading dimension or, holding several models stacked on a leading axis, in
  // its second. A file whose batch_size disagrees would report the throughput of a batch it does not run.
  void check_batch(const std::string& where, int64_t batch, OpId first, OpId end) const {
    if (batch == 0) return;  // unknown (imported traces)
    for (OpId o = first; o < end; ++o) {
      for (TensorId id : g_.op(o).inputs) {
        const Tensor& t = g_.tensor(id);
        if (t.role != TensorRole::input && t.role != TensorRole::label) continue;
        const std::vector<int64_t>& d = t.shape;
        const bool holds = (!d.empty() && d[0] == batch) ||
                           (t.width > 1 && d.size() > 1 && d[0] == t.width && d[1] == batch);
        if (!holds) {
          throw ScheduleError(fmt::format(
              "{}: field 'batch_size' = {}, but {} tensor {} '{}' has shape {} (width {}): the batch is "
              "neither its leading dimension nor the one after the models' axis",
              where, batch, role_name(t.role), t.id, t.name, shape_string(d), t.width));
        }
      }
    }
  }

  // Model state kept on the host starts off the device; weights and optimizer state with a host
  // copy made before the step (host_maker kNoId: the step's start).
  void check_host_state() {
    for (size_t i = 0; i < s_.host_state.size(); ++i) {
      const TensorId id = s_.host_state[i];
      if (id < 0 || static_cast<size_t>(id) >= g_.tensors.size()) {
        throw ScheduleError(
            fmt::format("schedule: field 'host_state' lists tensor {}, which is not in the graph "
                        "({} tensors)",
                        id, g_.tensors.size()));
      }
      if (i > 0 && id <= s_.host_state[i - 1]) {
        throw ScheduleError(
            fmt::format("schedule: field 'host_state' lists tensor {} after tensor {}; ids must be ascending "
                        "without repeats",
                        id, s_.host_state[i - 1]));
      }
      const TensorRole role = g_.tensor(id).role;
      if (!is_persistent(role)) {
        throw ScheduleError(
            fmt::format("schedule: field 'host_state' lists {} of role {}; only weights, gradients "
                        "and optimizer state live on the host",
                        tensor_label(id), role_name(role)));
      }
      TensorState& st = state_[static_cast<size_t>(id)];
      st.resident = false;
      st.host_copy = role != TensorRole::gradient;
    }
  }

  // What a step leaves must be what the next one starts from.
  void check_host_state_at_end() const {
    for (TensorId id : s_.host_state) {
      const TensorState& st = state_[static_cast<size_t>(id)];
      if (st.resident) {
        throw ScheduleError(
            fmt::format("schedule: host_state {} is still on the device at the step's end (it must "
                        "be freed)",
                        tensor_label(id)));
      }
      if (g_.tensor(id).role != TensorRole::gradient && !st.host_copy) {
        throw ScheduleError(
            fmt::format("schedule: host_state {} ends the step without a host copy of its last value "
                        "(swap it out after its last update)",
                        tensor_label(id)));
      }
    }
  }

  void check_fields(const Instruction& in, InstrId index) const {
    if (in.id != index) fail(in, index, fmt::format("field 'id' = {}, expected {}", in.id, index));
    if (in.stream > kMaxStreamId) {
      fail(in, index,
           fmt::format("field 'stream' = {} is over the largest stream id {}", in.stream, kMaxStreamId));
    }
    if (runs_op(in.kind)) {
      if (in.op < 0 || static_cast<size_t>(in.op) >= g_.ops.size()) {
        fail(in, index, fmt::format("field 'op' = {} refers to no op ({} ops)", in.op, g_.ops.size()));
      }
      if (runs_on_host(s_, in) &&
          (in.kind != InstrKind::compute || !is_optimizer_update(g_.op(in.op).kind))) {
        fail(in, index,
             fmt::format(
                 "runs on the host stream {} (field 'host_stream'), which takes only compute "
                 "instructions of optimizer updates (sgd_step, adam_step, adamw_step), not {} of a {} op",
                 in.stream, instr_kind_name(in.kind), kind_name(g_.op(in.op).kind)));
      }
      if (in.tensor != kNoId) fail(in, index, fmt::format("field 'tensor' = {} must be unset", in.tensor));
      if (!is_compute_stream(in.stream)) {
        fail(in, index,
             fmt::format("field 'stream' = {} is not a compute stream (0 or >= {})", in.stream,
                         kFirstExtraComputeStream));
      }
    } else {
      if (in.tensor < 0 || static_cast<size_t>(in.tensor) >= g_.tensors.size()) {
        fail(in, index,
             fmt::format("field 'tensor' = {} refers to no tensor ({} tensors)", in.tensor,
                         g_.tensors.size()));
      }
      if (in.op != kNoId) fail(in, index, fmt::format("field 'op' = {} must be unset", in.op));
      const int32_t expected = in.kind == InstrKind::swap_out  ? kDeviceToHostStream
                               : in.kind == InstrKind::swap_in ? kHostToDeviceStream
                                                               : kComputeStream;
      if (runs_on_host(s_, in)) {
        fail(in, index,
             fmt::format("field 'stream' = {} is the host stream (field 'host_stream'), which takes only "
                         "optimizer updates",
                         in.stream));
      }
      if (in.kind == InstrKind::free ? !is_compute_stream(in.stream) : in.stream != expected) {
        fail(in, index,
             in.kind == InstrKind::free
                 ? fmt::format("field 'stream' = {} is not a compute stream (0 or >= {})", in.stream,
                               kFirstExtraComputeStream)
                 : fmt::format("field 'stream' = {}, {} runs on stream {}", in.stream,
                               instr_kind_name(in.kind), expected));
      }
    }
    for (InstrId w : in.waits) {
      if (w < 0 || w >= index) {
        fail(in, index, fmt::format("field 'waits' lists {}, which is not an earlier instruction", w));
      }
    }
  }

  void tick(const Instruction& in, InstrId index) {
    const size_t si = stream_index_.at(in.stream);
    int32_t* mine = &clock_[static_cast<size_t>(index) * streams_];
    auto join = [&](InstrId other) {
      const int32_t* theirs = &clock_[static_cast<size_t>(other) * streams_];
      for (size_t k = 0; k < streams_; ++k) mine[k] = std::max(mine[k], theirs[k]);
    };
    const InstrId prev = last_on_stream_[si];
    if (prev != kNoId) join(prev);
    for (InstrId w : in.waits) join(w);
    seq_[static_cast<size_t>(index)] = (prev == kNoId ? 0 : seq_[static_cast<size_t>(prev)]) + 1;
    mine[si] = seq_[static_cast<size_t>(index)];
    last_on_stream_[si] = index;
  }

  void read(const Instruction& in, InstrId index, TensorId id) {
    TensorState& st = state_[static_cast<size_t>(id)];
    if (!st.resident) {
      fail(in, index,
           st.freed_by == kNoId
               ? fmt::format("reads {} which is not resident (never produced)", tensor_label(id))
               : fmt::format("reads {} which is not resident (freed by instruction {})", tensor_label(id),
                             st.freed_by));
    }
    require_ordered(in, index, st.maker,
                    [&] { return fmt::format("reads {} made resident by", tensor_label(id)); });
    if (st.readers.empty() || st.readers.back() != index) st.readers.push_back(index);
  }

  // A host optimizer update reads the host copies of its inputs and rewrites those of its weight
  // and state, whose device copies must be gone (they would be stale).
  void check_host_update(const Instruction& in, InstrId index) {
    const Op& op = g_.op(in.op);
    if (computed_[static_cast<size_t>(op.id)] != kNoId) {
      fail(in, index,
           fmt::format("op is already computed by instruction {}", computed_[static_cast<size_t>(op.id)]));
    }
    for (TensorId id : op.inputs) {
      TensorState& st = state_[static_cast<size_t>(id)];
      if (!st.host_copy) {
        fail(in, index,
             fmt::format("runs on the host and reads {}, which has no host copy (swap it out first)",
                         tensor_label(id)));
      }
      require_ordered(in, index, st.host_maker,
                      [&] { return fmt::format("reads the host copy of {} made by", tensor_label(id)); });
    }
    for (TensorId id : op.inputs) {
      const TensorRole role = g_.tensor(id).role;
      if (role != TensorRole::weight && role != TensorRole::optimizer_state) continue;
      TensorState& st = state_[static_cast<size_t>(id)];
      if (st.resident) {
        fail(in, index,
             fmt::format("updates {} on the host while its device copy is resident (free it first)",
                         tensor_label(id)));
      }
      for (InstrId r : st.host_readers) {
        require_ordered(in, index, r, [&] {
          return fmt::format("updates the host copy of {} still read by", tensor_label(id));
        });
      }
      st.host_maker = index;
      st.host_readers.clear();
    }
    computed_[static_cast<size_t>(op.id)] = index;
  }

  void check(const Instruction& in, InstrId index) {
    check_fields(in, index);
    tick(in, index);
    if (runs_on_host(s_, in)) {
      check_host_update(in, index);
      return;
    }
    switch (in.kind) {
      case InstrKind::compute:
      case InstrKind::recompute: {
        const Op& op = g_.op(in.op);
        const InstrId done = computed_[static_cast<size_t>(op.id)];
        if (in.kind == InstrKind::compute && done != kNoId) {
          fail(in, index, fmt::format("op is already computed by instruction {}", done));
        }
        if (in.kind == InstrKind::recompute) {
          if (done == kNoId) fail(in, index, "recomputes an op that is not computed yet");
          if (op.phase != Phase::forward || !op.recomputable) {
            fail(in, index,
                 fmt::format("op is not recomputable (phase {}, recomputable {})", phase_name(op.phase),
                             op.recomputable));
          }
        }
        for (TensorId id : op.inputs) read(in, index, id);
        // The optimizer updates its weight and state in place: a host copy of them is stale.
        if (op.phase == Phase::optimizer && in.kind == InstrKind::compute) {
          for (TensorId id : op.inputs) {
            const TensorRole role = g_.tensor(id).role;
            if (role == TensorRole::weight || role == TensorRole::optimizer_state) {
              state_[static_cast<size_t>(id)].host_copy = false;
            }
          }
        }
        for (TensorId id : op.outputs) {
          TensorState& st = state_[static_cast<size_t>(id)];
          if (in.kind == InstrKind::recompute && st.resident) continue;  // kept; recomputed copy discarded
          if (!st.resident && st.freed_by != kNoId) {
            require_ordered(in, index, st.freed_by,
                            [&] { return fmt::format("rebuilds {} freed by", tensor_label(id)); });
          }
          st.resident = true;
          st.maker = index;
          st.readers.clear();
          if (in.kind == InstrKind::compute) st.host_copy = false;
        }
        if (in.kind == InstrKind::compute) computed_[static_cast<size_t>(op.id)] = index;
        break;
      }
      case InstrKind::swap_out: {
        read(in, index, in.tensor);
        TensorState& st = state_[static_cast<size_t>(in.tensor)];
        st.host_copy = true;
        st.host_maker = index;
        st.host_readers.clear();
        break;
      }
      case InstrKind::swap_in: {
        TensorState& st = state_[static_cast<size_t>(in.tensor)];
        if (!st.host_copy)
          fail(in, index, fmt::format("{} has no host copy (no swap_out)", tensor_label(in.tensor)));
        if (st.resident) fail(in, index, fmt::format("{} is already resident", tensor_label(in.tensor)));
        require_ordered(in, index, st.host_maker, "copies the host copy made by");
        require_ordered(in, index, st.freed_by, "reloads a tensor freed by");
        st.host_readers.push_back(index);
        st.resident = true;
        st.maker = index;
        st.readers.clear();
        break;
      }
      case InstrKind::free: {
        TensorState& st = state_[static_cast<size_t>(in.tensor)];
        if (!st.resident) {
          fail(in, index,
               st.freed_by == kNoId
                   ? fmt::format("frees {} which is not resident (never produced)", tensor_label(in.tensor))
                   : fmt::format("frees {} which is not resident (already freed by instruction {})",
                                 tensor_label(in.tensor), st.freed_by));
        }
        require_ordered(in, index, st.maker, "frees a tensor made resident by");
        for (InstrId r : st.readers) require_ordered(in, index, r, "frees a tensor still read by");
        st.resident = false;
        st.freed_by = index;
        st.readers.clear();
        break;
      }
    }
  }

  const Schedule& s_;
  const Graph& g_;
  std::map<int32_t, size_t> stream_index_;
  size_t streams_ = 0;
  std::vector<int32_t> clock_;  // clock_[i * streams_ + k]: last seq on stream k that happens before-or-is i
  std::vector<int32_t> seq_;    // 1-based position of each instruction on its stream
  std::vector<InstrId> last_on_stream_;
  std::vector<TensorState> state_;
  std::vector<InstrId> computed_;
};

}  // namespace

void validate_schedule(const Schedule& schedule) {
  ScheduleChecker(schedule).run();
}

}  // namespace mutwo::ir

#include "sim/iterations.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "profiles/error.hpp"

namespace mutwo::sim {

using profiles::InstrId;
using profiles::Instruction;
using profiles::InstrKind;
using profiles::TensorId;
using profiles::TensorRole;

namespace {

// The tensors an instruction touches.
template <typename Visit>
void touched(const profiles::Graph& g, const Instruction& in, Visit&& visit) {
  if (profiles::runs_op(in.kind)) {
    const profiles::Op& op = g.op(in.op);
    for (TensorId t : op.inputs) visit(t);
    for (TensorId t : op.outputs) visit(t);
  } else {
    visit(in.tensor);
  }
}

}  // namespace

UnrolledSchedule unroll_iterations(const profiles::Schedule& schedule, int32_t iterations) {
  if (iterations < 1 || iterations > 1000) {
    throw Error(fmt::format("iterations = {}: must be from 1 to 1000", iterations));
  }
  const profiles::Graph& g = schedule.graph;
  UnrolledSchedule out;
  out.schedule.graph = g;
  out.schedule.sub_arrays = schedule.sub_arrays;
  out.schedule.policy = schedule.policy;
  out.schedule.host_state = schedule.host_state;
  out.schedule.host_stream = schedule.host_stream;
  const size_t n = schedule.instructions.size();
  out.schedule.instructions.reserve(n * static_cast<size_t>(iterations));
  out.iteration_of.reserve(n * static_cast<size_t>(iterations));

  std::vector<InstrId> last_touch(g.tensors.size(), profiles::kNoId);  // unrolled id, previous iterations
  std::vector<InstrId> this_touch(g.tensors.size(), profiles::kNoId);  // unrolled id, this iteration
  // The step's inputs and labels, resident at its start: uploaded again for every later iteration.
  std::vector<TensorId> batch;
  for (const profiles::Tensor& t : g.tensors) {
    if (t.role == TensorRole::input || t.role == TensorRole::label) batch.push_back(t.id);
  }
  for (int32_t k = 0; k < iterations; ++k) {
    std::vector<InstrId> new_id(n, profiles::kNoId);
    std::fill(this_touch.begin(), this_touch.end(), profiles::kNoId);
    auto add_touch_waits = [&](Instruction& copy, TensorId t) {
      const auto ti = static_cast<size_t>(t);
      if (this_touch[ti] == profiles::kNoId && last_touch[ti] != profiles::kNoId &&
          out.schedule.instructions[static_cast<size_t>(last_touch[ti])].stream != copy.stream) {
        copy.waits.push_back(last_touch[ti]);
      }
      this_touch[ti] = copy.id;
    };
    std::vector<InstrId> upload_of(g.tensors.size(), profiles::kNoId);
    if (k > 0) {
      // The next batch, copied host->device on the compute stream (see iterations.hpp).
      for (TensorId t : batch) {
        Instruction up;
        up.id = static_cast<InstrId>(out.schedule.instructions.size());
        up.kind = InstrKind::swap_in;
        up.stream = profiles::kComputeStream;
        up.tensor = t;
        add_touch_waits(up, t);
        upload_of[static_cast<size_t>(t)] = up.id;
        out.schedule.instructions.push_back(std::move(up));
        out.iteration_of.push_back(k);
        out.original_of.push_back(profiles::kNoId);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      const Instruction& in = schedule.instructions[i];
      Instruction copy = in;
      copy.id = static_cast<InstrId>(out.schedule.instructions.size());
      copy.waits.clear();
      for (InstrId w : in.waits) copy.waits.push_back(new_id[static_cast<size_t>(w)]);
      touched(g, in, [&](TensorId t) {
        const auto ti = static_cast<size_t>(t);
        if (this_touch[ti] == profiles::kNoId && last_touch[ti] != profiles::kNoId &&
            out.schedule.instructions[static_cast<size_t>(last_touch[ti])].stream != copy.stream) {
          copy.waits.push_back(last_touch[ti]);
        }
        this_touch[ti] = copy.id;
      });
      // The first reader of an uploaded batch tensor waits on its upload.
      touched(g, in, [&](TensorId t) {
        InstrId& up = upload_of[static_cast<size_t>(t)];
        if (up != profiles::kNoId) {
          if (copy.stream != profiles::kComputeStream) copy.waits.push_back(up);
          up = profiles::kNoId;
        }
      });
      std::sort(copy.waits.begin(), copy.waits.end());
      copy.waits.erase(std::unique(copy.waits.begin(), copy.waits.end()), copy.waits.end());
      new_id[i] = copy.id;
      out.schedule.instructions.push_back(std::move(copy));
      out.iteration_of.push_back(k);
      out.original_of.push_back(static_cast<InstrId>(i));
    }
    for (size_t t = 0; t < this_touch.size(); ++t) {
      if (this_touch[t] != profiles::kNoId) last_touch[t] = this_touch[t];
    }
  }
  return out;
}

}  // namespace mutwo::sim

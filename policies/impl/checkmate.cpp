// checkmate: optimal rematerialisation by MILP, for small graphs.
// Jain et al., "Checkmate: Breaking the Memory Wall with Optimal Tensor Rematerialization",
// MLSys 2020. The base schedule's run order is kept (stage t computes op t); the MILP
// (policies/checkmate_milp.hpp) picks which earlier ops each stage recomputes and which tensors it
// retains, minimising the total recompute time under the memory limit. Recomputes only, no swaps.
#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "ir/memory_rule.hpp"
#include "ir/schedule_check.hpp"
#include "policies/checkmate_milp.hpp"
#include "policies/memory_policy.hpp"
#include "policies/policy_registry.hpp"
#include "policies/policy_result.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

using ir::InstrKind;
using ir::OpId;
using ir::Schedule;
using ir::TensorId;
using ir::TensorRole;

namespace {

constexpr const char* kName = "checkmate";

std::string mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0);
}

// The MILP's view of a base schedule: ops in run order, one value per non-persistent tensor.
struct Lowered {
  RematProblem problem;
  std::vector<OpId> order;          // order[t]: the op stage t computes
  std::vector<int32_t> value_of;    // per tensor: value id, -1 for persistent tensors
  std::vector<TensorId> tensor_of;  // per value
  int64_t persistent_bytes = 0;
};

Lowered lower(const Schedule& base, const costmodel::OpCostModel& cost, int64_t limit_bytes) {
  const ir::Graph& g = base.graph;
  Lowered l;
  std::vector<int32_t> position(g.ops.size(), -1);
  for (const ir::Instruction& in : base.instructions) {
    if (in.kind == InstrKind::compute) {
      position[static_cast<size_t>(in.op)] = static_cast<int32_t>(l.order.size());
      l.order.push_back(in.op);
    } else if (in.kind != InstrKind::free) {
      throw Error(
          fmt::format("policy 'checkmate': base schedule instruction {} is a {}; a base schedule has only "
                      "compute and free",
                      in.id, ir::instr_kind_name(in.kind)));
    }
  }
  l.value_of.assign(g.tensors.size(), -1);
  for (const ir::Tensor& t : g.tensors) {
    const int64_t bytes = ir::allocation_bytes(t.bytes);
    if (ir::is_persistent(t.role)) {
      l.persistent_bytes += bytes;
      continue;
    }
    if (t.producer == ir::kNoId && !ir::resident_at_start(t.role)) continue;  // never resident
    l.value_of[static_cast<size_t>(t.id)] = static_cast<int32_t>(l.tensor_of.size());
    l.tensor_of.push_back(t.id);
    RematValue v;
    v.bytes = bytes;
    v.producer = t.producer == ir::kNoId ? -1 : position[static_cast<size_t>(t.producer)];
    l.problem.values.push_back(v);
  }
  // A persistent tensor written in place at stage w may not be read by a recompute after stage w.
  std::vector<int32_t> first_write_after(g.tensors.size(), INT32_MAX);
  l.problem.ops.resize(l.order.size());
  for (int32_t t = static_cast<int32_t>(l.order.size()) - 1; t >= 0; --t) {
    const ir::Op& op = g.op(l.order[static_cast<size_t>(t)]);
    RematOp& r = l.problem.ops[static_cast<size_t>(t)];
    r.cost_ns = cost.op_duration_ns(g, op);
    r.workspace_bytes = ir::allocation_bytes(op.workspace_bytes);
    r.recomputable = op.recomputable && op.phase == ir::Phase::forward;
    for (TensorId in : op.inputs) {
      const int32_t v = l.value_of[static_cast<size_t>(in)];
      if (v >= 0)
        r.inputs.push_back(v);
      else
        r.recompute_until = std::min(r.recompute_until, first_write_after[static_cast<size_t>(in)]);
    }
    for (TensorId out : op.outputs) {
      const int32_t v = l.value_of[static_cast<size_t>(out)];
      if (v >= 0)
        r.outputs.push_back(v);
      else
        first_write_after[static_cast<size_t>(out)] = t;
    }
    for (auto* list : {&r.inputs, &r.outputs}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
  }
  l.problem.budget_bytes = limit_bytes - l.persistent_bytes;
  return l;
}

// Stage t: the recomputes and the compute the MILP chose, each value freed as soon as no later op of
// the stage reads it and the next stage does not retain it (walk_remat_plan, which the solution's peak
// follows too).
Schedule emit(const Schedule& base, const Lowered& l, const RematSolution& s) {
  Schedule out;
  out.graph = base.graph;
  out.sub_arrays = base.sub_arrays;
  out.policy = kName;
  auto add = [&](InstrKind kind, OpId op, TensorId tensor) {
    ir::Instruction in;
    in.id = static_cast<ir::InstrId>(out.instructions.size());
    in.kind = kind;
    in.op = op;
    in.tensor = tensor;
    out.instructions.push_back(std::move(in));
  };
  RematWalk walk;
  walk.run = [&](size_t stage, size_t op) {
    add(op == stage ? InstrKind::compute : InstrKind::recompute, l.order[op], ir::kNoId);
  };
  walk.made = [](int32_t) {};
  walk.ran = [](size_t) {};
  walk.freed = [&](int32_t v) { add(InstrKind::free, ir::kNoId, l.tensor_of[static_cast<size_t>(v)]); };
  walk_remat_plan(l.problem, s, walk);
  return out;
}

class CheckmatePolicy : public MemoryPolicy {
 public:
  explicit CheckmatePolicy(CheckmateOptions options) : options_(options) {}
  std::string_view name() const override { return kName; }

  PolicyResult plan(const PolicyInput& input) const override {
    check_policy_input(input, kName);
    const Schedule& base = *input.base;
    ir::validate_schedule(base);
    Schedule plain = base;
    plain.policy = kName;
    PolicyResult fits = evaluate_schedule(std::move(plain), input, "fits without recomputation");
    if (fits.feasible) return fits;  // no recompute is optimal
    auto refuse = [&](std::string note) {
      fits.note = std::move(note);
      return fits;  // the base schedule, infeasible
    };
    const auto n_ops = static_cast<int64_t>(base.graph.ops.size());
    if (n_ops > options_.max_ops) {
      return refuse(fmt::format("graph too large for checkmate: {} ops > limit {}", n_ops, options_.max_ops));
    }
    const Lowered l = lower(base, *input.cost, input.memory_limit_bytes);
    if (l.problem.budget_bytes < 0) {
      return refuse(fmt::format("persistent tensors alone ({}) exceed the limit ({})",
                                mib(l.persistent_bytes), mib(input.memory_limit_bytes)));
    }
    const RematSolution s = solve_remat_milp(l.problem, options_.milp);
    const std::string size = fmt::format("{} variables, {} rows", s.variables, s.constraints);
    if (s.status == MilpStatus::infeasible) {
      return refuse(fmt::format("no recompute schedule fits the limit ({}): MILP infeasible ({}, {:.2f} s)",
                                mib(input.memory_limit_bytes), size, s.solve_seconds));
    }
    if (s.status == MilpStatus::no_solution) {
      return refuse(fmt::format("CBC hit the {:.0f} s time limit without a feasible solution ({})",
                                options_.milp.time_limit_s, size));
    }
    int64_t recomputes = 0;
    for (size_t t = 0; t < s.runs.size(); ++t) recomputes += static_cast<int64_t>(s.runs[t].size()) - 1;
    std::string note = fmt::format("{} recomputed ({:.3f} ms), MILP {} in {:.2f} s ({})", recomputes,
                                   static_cast<double>(s.recompute_ns) / 1e6, milp_status_name(s.status),
                                   s.solve_seconds, size);
    PolicyResult r = evaluate_schedule(emit(base, l, s), input, std::move(note));
    if (!r.feasible) r.note += "; exceeds the limit in simulation";
    return r;
  }

 private:
  CheckmateOptions options_;
};

}  // namespace

std::unique_ptr<MemoryPolicy> make_checkmate_policy(const CheckmateOptions& options) {
  if (options.max_ops <= 0)
    throw Error(fmt::format("checkmate: option 'max_ops' = {} must be > 0", options.max_ops));
  if (!(options.milp.time_limit_s > 0)) {
    throw Error(fmt::format("checkmate: option 'time_limit_s' = {} must be > 0", options.milp.time_limit_s));
  }
  return std::make_unique<CheckmatePolicy>(options);
}

namespace {

void register_checkmate_policy(PolicyRegistry& registry) {
  registry.add({kName, "optimal recomputation by MILP (COIN-OR CBC) for graphs of up to 60 ops",
                "Jain et al., MLSys 2020", [] { return make_checkmate_policy(); },
                /*in_default_search=*/false});  // one MILP per sub-array is too slow for a sweep
}

[[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(70, register_checkmate_policy);

}  // namespace

}  // namespace mutwo::policies

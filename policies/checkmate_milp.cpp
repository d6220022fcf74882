#include "policies/checkmate_milp.hpp"

#include <Cbc_C_Interface.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "support/error.hpp"

namespace mutwo::policies {

namespace {

constexpr int kZero = -1;                    // variable fixed at 0 (not created)
constexpr int kOne = -2;                     // variable fixed at 1 (not created)
constexpr double kBytesPerUnit = 1048576.0;  // memory in MiB inside the model: 512 B blocks stay exact

// One sparse row lo <= sum coef * x <= hi, terms given by variable code (fixed ones fold into the bounds).
struct Row {
  std::vector<std::pair<int, double>> terms;
  double lo = -INFINITY;
  double hi = INFINITY;
};

class Model {
 public:
  int add_col(double lb, double ub, double obj, bool integer) {
    col_lb_.push_back(lb);
    col_ub_.push_back(ub);
    obj_.push_back(obj);
    integer_.push_back(integer);
    return static_cast<int>(obj_.size()) - 1;
  }
  // Returns false when the row has no variables left and its constant breaks the bounds.
  bool add_row(const std::vector<std::pair<int, double>>& terms, double lo, double hi) {
    Row r;
    double constant = 0;
    for (const auto& [code, coef] : terms) {
      if (code >= 0) {
        r.terms.emplace_back(code, coef);
      } else if (code == kOne) {
        constant += coef;
      }
    }
    if (r.terms.empty()) return lo - 1e-9 <= constant && constant <= hi + 1e-9;
    r.lo = lo - constant;
    r.hi = hi - constant;
    rows_.push_back(std::move(r));
    return true;
  }
  int cols() const { return static_cast<int>(obj_.size()); }
  int rows() const { return static_cast<int>(rows_.size()); }

  // Loads the model into CBC (column-major, as Cbc_loadProblem wants).
  void load(Cbc_Model* cbc) const {
    const size_t n = obj_.size();
    std::vector<int> count(n + 1, 0);
    for (const Row& r : rows_)
      for (const auto& t : r.terms) ++count[static_cast<size_t>(t.first) + 1];
    std::vector<int> start(n + 1, 0);
    for (size_t c = 0; c < n; ++c) start[c + 1] = start[c] + count[c + 1];
    std::vector<int> index(static_cast<size_t>(start[n]));
    std::vector<double> value(static_cast<size_t>(start[n]));
    std::vector<int> fill(start.begin(), start.end() - 1);
    std::vector<double> row_lb, row_ub;
    for (size_t i = 0; i < rows_.size(); ++i) {
      for (const auto& [c, coef] : rows_[i].terms) {
        const auto at = static_cast<size_t>(fill[static_cast<size_t>(c)]++);
        index[at] = static_cast<int>(i);
        value[at] = coef;
      }
      row_lb.push_back(rows_[i].lo);
      row_ub.push_back(rows_[i].hi);
    }
    Cbc_loadProblem(cbc, static_cast<int>(n), static_cast<int>(rows_.size()), start.data(), index.data(),
                    value.data(), col_lb_.data(), col_ub_.data(), obj_.data(), row_lb.data(), row_ub.data());
    for (size_t c = 0; c < n; ++c)
      if (integer_[c]) Cbc_setInteger(cbc, static_cast<int>(c));
  }

 private:
  std::vector<double> col_lb_, col_ub_, obj_;
  std::vector<bool> integer_;
  std::vector<Row> rows_;
};

void check_problem(const RematProblem& p, const MilpOptions& options) {
  if (!(options.time_limit_s > 0)) {
    throw Error(fmt::format("checkmate: option 'time_limit_s' = {} must be > 0", options.time_limit_s));
  }
  const auto n_values = static_cast<int32_t>(p.values.size());
  for (size_t v = 0; v < p.values.size(); ++v) {
    const RematValue& val = p.values[v];
    if (val.bytes < 0) throw Error(fmt::format("checkmate: value {} has bytes = {} < 0", v, val.bytes));
    if (val.producer >= static_cast<int32_t>(p.ops.size()) || val.producer < -1) {
      throw Error(fmt::format("checkmate: value {} has producer = {} out of range", v, val.producer));
    }
    if (val.producer >= 0) {
      const auto& outs = p.ops[static_cast<size_t>(val.producer)].outputs;
      if (!std::binary_search(outs.begin(), outs.end(), static_cast<int32_t>(v))) {
        throw Error(
            fmt::format("checkmate: value {} names producer {} which does not write it", v, val.producer));
      }
    }
  }
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const RematOp& op = p.ops[k];
    if (op.cost_ns < 0 || op.workspace_bytes < 0) {
      throw Error(fmt::format("checkmate: op {} has cost_ns = {} / workspace_bytes = {} < 0", k, op.cost_ns,
                              op.workspace_bytes));
    }
    for (const auto* list : {&op.inputs, &op.outputs}) {
      for (size_t j = 0; j < list->size(); ++j) {
        const int32_t v = (*list)[j];
        if (v < 0 || v >= n_values)
          throw Error(fmt::format("checkmate: op {} names value {} out of range", k, v));
        if (j > 0 && (*list)[j - 1] >= v)
          throw Error(fmt::format("checkmate: op {} value list not ascending", k));
      }
    }
    for (int32_t v : op.inputs) {
      if (p.values[static_cast<size_t>(v)].producer >= static_cast<int32_t>(k)) {
        throw Error(fmt::format("checkmate: op {} reads value {} before its producer runs", k, v));
      }
    }
    for (int32_t v : op.outputs) {
      if (p.values[static_cast<size_t>(v)].producer != static_cast<int32_t>(k)) {
        throw Error(fmt::format("checkmate: op {} writes value {} whose producer is {}", k, v,
                                p.values[static_cast<size_t>(v)].producer));
      }
    }
  }
}

// Exact bytes of an integral plan as the emitted schedule runs it (walk_remat_plan).
int64_t replay_peak_bytes(const RematProblem& p, const RematSolution& s) {
  int64_t in_use = 0;
  for (const RematValue& v : p.values) {
    if (v.producer < 0) in_use += v.bytes;
  }
  int64_t peak = in_use;
  RematWalk walk;
  walk.run = [](size_t, size_t) {};
  walk.made = [&](int32_t v) { in_use += p.values[static_cast<size_t>(v)].bytes; };
  walk.ran = [&](size_t op) { peak = std::max(peak, in_use + p.ops[op].workspace_bytes); };
  walk.freed = [&](int32_t v) { in_use -= p.values[static_cast<size_t>(v)].bytes; };
  walk_remat_plan(p, s, walk);
  return peak;
}

// CBC 2.10's CbcMain keeps global state: one solve at a time per process.
std::mutex& cbc_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

const char* milp_status_name(MilpStatus status) {
  switch (status) {
    case MilpStatus::optimal:
      return "optimal";
    case MilpStatus::time_limit:
      return "time limit";
    case MilpStatus::infeasible:
      return "infeasible";
    case MilpStatus::no_solution:
      return "no solution";
  }
  return "?";
}

void walk_remat_plan(const RematProblem& p, const RematSolution& s, const RematWalk& walk) {
  const size_t n_values = p.values.size();
  std::vector<uint8_t> resident(n_values, 0), keep(n_values, 0);
  std::vector<int32_t> last_read(n_values, 0);  // runs of the stage done when v is last read
  for (size_t v = 0; v < n_values; ++v) resident[v] = p.values[v].producer < 0;
  const auto release = [&](int32_t v, int32_t runs_done) {
    const auto u = static_cast<size_t>(v);
    if (!resident[u] || keep[u] || last_read[u] > runs_done) return;
    resident[u] = 0;
    walk.freed(v);
  };
  for (size_t t = 0; t < p.ops.size(); ++t) {
    const auto& runs = s.runs[t];
    std::fill(keep.begin(), keep.end(), 0);
    for (int32_t v : s.retained[t + 1]) keep[static_cast<size_t>(v)] = 1;
    std::fill(last_read.begin(), last_read.end(), 0);
    for (size_t j = 0; j < runs.size(); ++j)
      for (int32_t v : p.ops[static_cast<size_t>(runs[j])].inputs)
        last_read[static_cast<size_t>(v)] = static_cast<int32_t>(j) + 1;
    for (size_t v = 0; v < n_values; ++v) release(static_cast<int32_t>(v), 0);
    for (size_t j = 0; j < runs.size(); ++j) {
      const auto k = static_cast<size_t>(runs[j]);
      walk.run(t, k);
      const RematOp& op = p.ops[k];
      for (int32_t v : op.outputs) {
        if (!resident[static_cast<size_t>(v)]) {
          resident[static_cast<size_t>(v)] = 1;
          walk.made(v);
        }
      }
      walk.ran(k);
      std::vector<int32_t> touched = op.inputs;
      touched.insert(touched.end(), op.outputs.begin(), op.outputs.end());
      std::sort(touched.begin(), touched.end());
      for (int32_t v : touched) release(v, static_cast<int32_t>(j) + 1);
    }
  }
}

RematSolution solve_remat_milp(const RematProblem& p, const MilpOptions& options) {
  check_problem(p, options);
  const auto start_time = std::chrono::steady_clock::now();
  const auto T = static_cast<int32_t>(p.ops.size());
  const size_t n_values = p.values.size();
  RematSolution sol;

  std::vector<std::vector<int32_t>> readers(n_values);
  for (int32_t k = 0; k < T; ++k)
    for (int32_t v : p.ops[static_cast<size_t>(k)].inputs) readers[static_cast<size_t>(v)].push_back(k);
  // need_op[k]: last stage in which op k may usefully run; last_need[v]: last stage v may be read.
  std::vector<int32_t> need_op(static_cast<size_t>(T)), last_need(n_values, -1);
  for (int32_t k = T - 1; k >= 0; --k) {
    const RematOp& op = p.ops[static_cast<size_t>(k)];
    int32_t need = k;
    if (op.recomputable) {
      for (int32_t v : op.outputs)
        for (int32_t j : readers[static_cast<size_t>(v)])
          need = std::max(need, need_op[static_cast<size_t>(j)]);
      need = std::max(k, std::min(need, op.recompute_until));
    }
    need_op[static_cast<size_t>(k)] = need;
  }
  for (size_t v = 0; v < n_values; ++v)
    for (int32_t j : readers[v]) last_need[v] = std::max(last_need[v], need_op[static_cast<size_t>(j)]);

  Model m;
  const double budget = static_cast<double>(p.budget_bytes) / kBytesPerUnit;
  auto mem = [](int64_t bytes) { return static_cast<double>(bytes) / kBytesPerUnit; };
  // R[t][k] (k <= t) and S[t][v] (t <= T) as variable codes.
  std::vector<std::vector<int>> R(static_cast<size_t>(T));
  std::vector<std::vector<int>> S(static_cast<size_t>(T) + 1, std::vector<int>(n_values, kZero));
  std::vector<std::vector<int32_t>> cand(static_cast<size_t>(T));
  for (int32_t t = 0; t < T; ++t) {
    auto& row = R[static_cast<size_t>(t)];
    row.assign(static_cast<size_t>(t) + 1, kZero);
    for (int32_t k = 0; k < t; ++k) {
      const RematOp& op = p.ops[static_cast<size_t>(k)];
      if (op.recomputable && !op.outputs.empty() && t <= need_op[static_cast<size_t>(k)] &&
          t <= op.recompute_until) {
        row[static_cast<size_t>(k)] = m.add_col(0, 1, static_cast<double>(op.cost_ns) / 1000.0, true);
        cand[static_cast<size_t>(t)].push_back(k);
      }
    }
    row[static_cast<size_t>(t)] = kOne;  // the frontier advances: stage t computes op t
    cand[static_cast<size_t>(t)].push_back(t);
  }
  for (size_t v = 0; v < n_values; ++v) {
    const int32_t prod = p.values[v].producer;
    if (prod < 0) S[0][v] = kOne;
    for (int32_t t = std::max(prod + 1, prod < 0 ? 1 : 0); t <= last_need[v] && t < T; ++t) {
      S[static_cast<size_t>(t)][v] = m.add_col(0, 1, 0, true);
    }
  }
  auto r_code = [&](int32_t t, int32_t k) {
    return k < 0 || k > t ? kZero : R[static_cast<size_t>(t)][static_cast<size_t>(k)];
  };
  bool consistent = true;

  for (int32_t t = 0; t < T; ++t) {
    const auto ts = static_cast<size_t>(t);
    // Every (re)computed op finds its inputs retained or rebuilt earlier in the stage.
    for (int32_t k : cand[ts]) {
      for (int32_t v : p.ops[static_cast<size_t>(k)].inputs) {
        consistent &= m.add_row({{r_code(t, k), 1.0},
                                 {S[ts][static_cast<size_t>(v)], -1.0},
                                 {r_code(t, p.values[static_cast<size_t>(v)].producer), -1.0}},
                                -INFINITY, 0);
      }
    }
    // A value retained into stage t+1 was resident in stage t: retained before or rebuilt.
    for (size_t v = 0; v < n_values; ++v) {
      if (S[ts + 1][v] < 0) continue;
      consistent &= m.add_row(
          {{S[ts + 1][v], 1.0}, {S[ts][v], -1.0}, {r_code(t, p.values[v].producer), -1.0}}, -INFINITY, 0);
    }
    // Memory: U after each candidate op allocates its non-resident outputs, then its frees.
    int prev_u = -1;
    int32_t prev_k = -1;
    for (int32_t k : cand[ts]) {
      const RematOp& op = p.ops[static_cast<size_t>(k)];
      const int u = m.add_col(0, budget, 0, false);
      std::vector<std::pair<int, double>> terms{{u, 1.0}};
      if (prev_u < 0) {
        for (size_t v = 0; v < n_values; ++v)
          if (S[ts][v] != kZero) terms.emplace_back(S[ts][v], -mem(p.values[v].bytes));
      } else {
        terms.emplace_back(prev_u, -1.0);
        const RematOp& prev = p.ops[static_cast<size_t>(prev_k)];
        std::vector<int32_t> freeable = prev.inputs;
        freeable.insert(freeable.end(), prev.outputs.begin(), prev.outputs.end());
        for (int32_t v : freeable) {
          const auto vs = static_cast<size_t>(v);
          if (p.values[vs].bytes == 0) continue;
          bool blocked = false;
          std::vector<int> later;
          for (int32_t j : readers[vs]) {
            if (j <= prev_k || j > t) continue;
            const int c = r_code(t, j);
            if (c == kOne) blocked = true;
            if (c >= 0) later.push_back(c);
          }
          if (blocked) continue;
          const int f = m.add_col(0, 1, 0, false);
          if (r_code(t, prev_k) >= 0) m.add_row({{f, 1.0}, {r_code(t, prev_k), -1.0}}, -INFINITY, 0);
          if (S[ts + 1][vs] >= 0) m.add_row({{f, 1.0}, {S[ts + 1][vs], 1.0}}, -INFINITY, 1);
          for (int c : later) m.add_row({{f, 1.0}, {c, 1.0}}, -INFINITY, 1);
          terms.emplace_back(f, mem(p.values[vs].bytes));
        }
      }
      // Outputs rebuilt by this op: A >= R - S, with A = R when the output is never retained here.
      for (int32_t w : op.outputs) {
        const auto ws = static_cast<size_t>(w);
        if (p.values[ws].bytes == 0) continue;
        int a = r_code(t, k);
        if (a >= 0 && S[ts][ws] >= 0) {
          a = m.add_col(0, 1, 0, false);
          m.add_row({{a, 1.0}, {r_code(t, k), -1.0}, {S[ts][ws], 1.0}}, 0, INFINITY);
        }
        terms.emplace_back(a, -mem(p.values[ws].bytes));
      }
      consistent &= m.add_row(terms, 0, 0);
      if (op.workspace_bytes > 0) {
        consistent &= m.add_row({{u, 1.0}, {r_code(t, k), mem(op.workspace_bytes)}}, -INFINITY, budget);
      }
      prev_u = u;
      prev_k = k;
    }
  }
  sol.variables = m.cols();
  sol.constraints = m.rows();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  };
  if (!consistent || budget < 0) {
    sol.status = MilpStatus::infeasible;
    sol.solve_seconds = elapsed();
    return sol;
  }

  std::vector<double> x;
  {
    const std::lock_guard<std::mutex> lock(cbc_mutex());
    Cbc_Model* cbc = Cbc_newModel();
    m.load(cbc);
    Cbc_setLogLevel(cbc, 0);
    Cbc_setParameter(cbc, "timeMode", "elapsed");  // the limit is wall-clock, not CPU, time
    Cbc_setMaximumSeconds(cbc, options.time_limit_s);
    // Root cut rounds cost more than they gain on this model (measured on small training steps:
    // 2-5x faster proofs of optimality with them off); the heuristics still find early incumbents.
    Cbc_setParameter(cbc, "cuts", "off");
    Cbc_setObjSense(cbc, 1);
    Cbc_solve(cbc);
    const double* best = Cbc_bestSolution(cbc);
    if (best != nullptr) {
      x.assign(best, best + m.cols());
      sol.status = Cbc_isProvenOptimal(cbc) ? MilpStatus::optimal : MilpStatus::time_limit;
      sol.lower_bound_ns = Cbc_getBestPossibleObjValue(cbc) * 1000.0;
    } else {
      sol.status = Cbc_isProvenInfeasible(cbc) ? MilpStatus::infeasible : MilpStatus::no_solution;
    }
    Cbc_deleteModel(cbc);
  }
  sol.solve_seconds = elapsed();
  if (x.empty()) return sol;

  auto on = [&](int code) { return code == kOne || (code >= 0 && x[static_cast<size_t>(code)] > 0.5); };
  sol.runs.resize(static_cast<size_t>(T));
  sol.retained.resize(static_cast<size_t>(T) + 1);
  for (int32_t t = 0; t < T; ++t) {
    for (int32_t k : cand[static_cast<size_t>(t)]) {
      if (!on(r_code(t, k))) continue;
      sol.runs[static_cast<size_t>(t)].push_back(k);
      if (k < t) sol.recompute_ns += p.ops[static_cast<size_t>(k)].cost_ns;
    }
    for (size_t v = 0; v < n_values; ++v)
      if (on(S[static_cast<size_t>(t)][v]))
        sol.retained[static_cast<size_t>(t)].push_back(static_cast<int32_t>(v));
  }
  sol.lower_bound_ns = std::min(sol.lower_bound_ns, static_cast<double>(sol.recompute_ns));
  sol.peak_bytes = replay_peak_bytes(p, sol);
  return sol;
}

}  // namespace mutwo::policies

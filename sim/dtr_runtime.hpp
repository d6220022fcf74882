#pragma once
// simrd's RuntimeV2EagerOptimized over a parsed DTR log, as replay_dtr_log (sim/dtr_replay.hpp) runs
// it. The structure follows simrd's runtime (v2.py: compute, _materialize, _compute, _free, _evict, release,
// pin; optimization/region.py; optimization/eqclass.py) step by step, because the order of every lock, pool
// append and staleness update decides which storage a heuristic picks.
#include <algorithm>
#include <iterator>
#include <limits>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "io/dtr_log.hpp"
#include "sim/dtr_log_graph.hpp"
#include "sim/dtr_regions.hpp"
#include "sim/dtr_replay.hpp"
#include "sim/eq_classes.hpp"
#include "sim/event_core.hpp"
#include "sim/eviction_pool.hpp"
#include "support/error.hpp"

namespace mutwo::sim {

struct OutOfBudget {};    // simrd's MemoryError
struct RematExceeded {};  // simrd's RematExceededError

class DtrRuntime {
 public:
  DtrRuntime(const io::DtrLog& log, const DtrLogGraph& graph, int64_t budget, double remat_limit,
             const EvictionHeuristic& heuristic)
      : log_(log),
        g_(graph),
        budget_(budget),
        remat_limit_(remat_limit),
        heuristic_(heuristic),
        features_(heuristic.features()),
        clock_(result_.clock_ns) {
    const size_t tensors = log.tensors.size();
    const size_t storages = graph.storage_size.size();
    defined_.assign(tensors, 0);
    tensor_refs_.assign(tensors, 0);
    material_.assign(storages, 0);
    pinned_.assign(storages, 0);
    ref_ext_.assign(storages, 0);
    compute_.assign(storages, 0);
    last_access_.assign(storages, EvictionCandidate::kNeverAccessed);
    pool_ = EvictionPool(storages);
    if (features_.regions) {
      regions_ = Regions(storages);
      scratch_.assign(4 * regions_.words(), 0);
    }
    if (features_.eq_classes) {
      ecn_.assign(storages, -1);
      ecn_made_.assign(storages, 0);
    }
    result_.budget_bytes = budget;
  }

  DtrReplayResult run() {
    try {
      for (const io::DtrCommand& cmd : log_.commands) {
        switch (cmd.kind) {
          case io::DtrCommandKind::compute:
            compute(cmd.id);
            break;
          case io::DtrCommandKind::get:
            get(cmd.id);
            break;
          case io::DtrCommandKind::release:
            release(cmd.id);
            break;
          case io::DtrCommandKind::pin:
            if (!defined_[static_cast<size_t>(cmd.id)]) materialize(cmd.id, true);
            pin(cmd.id);
            break;
        }
      }
    } catch (const OutOfBudget&) {
      result_.outcome = DtrOutcome::oom;
    } catch (const RematExceeded&) {
      result_.outcome = DtrOutcome::remat_limit_exceeded;
    }
    result_.clock_ns = clock_.now_ns();
    result_.final_bytes = memory_;
    return result_;
  }

 private:
  // ---- helpers over the static graph
  std::span<const int32_t> storage_tensors(int32_t s) const {
    const auto k = static_cast<size_t>(s);
    const int32_t* first = g_.tensors_flat.data() + g_.tensors_begin[k];
    size_t n = static_cast<size_t>(g_.tensors_begin[k + 1] - g_.tensors_begin[k]);
    while (n > 0 && g_.op_of[static_cast<size_t>(first[n - 1])] >= ops_created_) --n;  // not yet created
    return {first, n};
  }
  std::span<const DtrLogGraph::Edge> edges(int32_t s, bool forward) const {
    const auto k = static_cast<size_t>(s);
    const auto& begin = forward ? g_.fwd_begin : g_.rev_begin;
    const auto& flat = forward ? g_.fwd_flat : g_.rev_flat;
    return {flat.data() + begin[k], static_cast<size_t>(begin[k + 1] - begin[k])};
  }
  const std::vector<int32_t>& parents(int32_t t) const {
    return log_.ops[static_cast<size_t>(g_.op_of[static_cast<size_t>(t)])].args;
  }
  int32_t storage(int32_t t) const { return g_.storage_of[static_cast<size_t>(t)]; }
  bool material(int32_t s) const { return material_[static_cast<size_t>(s)] != 0; }
  int64_t size(int32_t s) const { return g_.storage_size[static_cast<size_t>(s)]; }
  const io::DtrOp& op_of(int32_t t) const {
    return log_.ops[static_cast<size_t>(g_.op_of[static_cast<size_t>(t)])];
  }

  [[noreturn]] void broken(const std::string& what) const {
    throw Error(fmt::format("DTR replay: {} (the log breaks an invariant simrd asserts)", what));
  }

  // ---- the storage pool (sim/eviction_pool.hpp): material storages, unlocked ones in insertion order
  void lock(int32_t s) {
    if (!material(s)) broken("locking an evicted storage");
    if (pool_.locks(s) == 0 && !pool_.in_scan(s)) broken("an unlocked material storage was not evictable");
    pool_.lock(s);
  }
  void unlock(int32_t s) { pool_.unlock(s); }

  // ---- regions (optimization/region.py)
  // A pinned storage is never scored nor evicted again, so nothing reads its regions any more:
  // they are left as they are (simrd keeps updating them; the answers are the same).
  void rebuild(int32_t base, bool reverse) {
    if (pinned_[static_cast<size_t>(base)]) return;
    regions_.clear(base, reverse);
    uint64_t* interior = regions_.interior(base, reverse);
    uint64_t* frontier = regions_.frontier(base, reverse);
    int64_t& sum = regions_.compute_ns(base, reverse);
    stack_.clear();
    stack_.push_back(base);
    auto visit = [&](int32_t us) {
      if (material(us)) {
        if (us != base) Regions::set(frontier, us);
        return;
      }
      if (!Regions::test(interior, us)) {
        sum += compute_[static_cast<size_t>(us)];
        Regions::set(interior, us);
        stack_.push_back(us);
      }
    };
    while (!stack_.empty()) {
      const int32_t s = stack_.back();
      stack_.pop_back();
      for (const DtrLogGraph::Edge& e : edges(s, !reverse)) {
        if (e.from_op >= ops_created_) break;  // sorted: the rest do not exist yet
        visit(e.storage);
      }
    }
  }

  // The region of `base` (direction `reverse`) absorbs the evicted storage x on its frontier: x and
  // x's own region of that direction join the interior (each newly added storage's compute counted;
  // x counted even if already inside, as simrd's set arithmetic does), x's frontier joins the frontier.
  void absorb(int32_t base, int32_t x, bool reverse) {
    if (pinned_[static_cast<size_t>(base)]) return;  // see rebuild()
    const size_t words = regions_.words();
    uint64_t* interior = regions_.interior(base, reverse);
    uint64_t* frontier = regions_.frontier(base, reverse);
    // Copies: base may be x itself (storage-level cycles through views).
    uint64_t* x_interior = scratch_.data();
    uint64_t* x_frontier = scratch_.data() + words;
    std::copy_n(regions_.interior(x, reverse), words, x_interior);
    std::copy_n(regions_.frontier(x, reverse), words, x_frontier);
    if (!Regions::test(frontier, x))
      broken("an evicted storage was missing from a neighbour's region frontier");
    Regions::reset(frontier, x);
    int64_t& sum = regions_.compute_ns(base, reverse);
    for (size_t w = 0; w < words; ++w) {
      frontier[w] |= x_frontier[w];
      x_interior[w] &= ~interior[w];  // now the difference
    }
    Regions::set(x_interior, x);
    Regions::for_each(x_interior, words, [&](int32_t sid) { sum += compute_[static_cast<size_t>(sid)]; });
    for (size_t w = 0; w < words; ++w) interior[w] |= x_interior[w];
  }

  // ---- equivalence classes (optimization/eqclass.py): sim/eq_classes.hpp
  // Storage.evicted_neighbors: distinct non-material storages adjacent to s (parents and children
  // of its tensors), s excluded.
  void evicted_neighbours(int32_t s) {
    neighbours_.clear();
    for (bool forward : {false, true}) {
      for (const DtrLogGraph::Edge& e : edges(s, forward)) {
        if (e.from_op >= ops_created_) break;
        if (!material(e.storage) && e.storage != s) neighbours_.push_back(e.storage);
      }
    }
    std::sort(neighbours_.begin(), neighbours_.end());
    neighbours_.erase(std::unique(neighbours_.begin(), neighbours_.end()), neighbours_.end());
  }

  // ---- eviction
  void evict(int32_t s, bool eager) {
    const auto k = static_cast<size_t>(s);
    if (pool_.locks(s) != 0) broken("evicting a locked storage");
    material_[k] = 0;
    memory_ -= size(s);
    pool_.leave(s);
    for (int32_t t : storage_tensors(s)) defined_[static_cast<size_t>(t)] = 0;
    ++result_.evictions;
    if (eager) ++result_.evictions_eager;
    if (features_.regions) {
      const size_t words = regions_.words();
      uint64_t* frontier = scratch_.data() + 2 * words;
      std::copy_n(regions_.frontier(s, true), words, frontier);
      Regions::for_each(frontier, words, [&](int32_t ps) { absorb(ps, s, false); });
      std::copy_n(regions_.frontier(s, false), words, frontier);
      Regions::for_each(frontier, words, [&](int32_t cs) { absorb(cs, s, true); });
      regions_.clear(s, false);
      regions_.clear(s, true);
    }
    if (features_.eq_classes) {
      ecn_[k] = classes_.make(compute_[k]);
      evicted_neighbours(s);
      for (int32_t n : neighbours_) {
        const int32_t node = ecn_[static_cast<size_t>(n)];
        if (node < 0) broken("an evicted neighbour has no equivalence class");
        classes_.merge(node, ecn_[k]);
      }
    }
  }

  EvictionCandidate candidate(int32_t s) {
    const auto k = static_cast<size_t>(s);
    EvictionCandidate c;
    c.size_bytes = size(s);
    c.compute_ns = compute_[k];
    c.last_access_ns = last_access_[k];
    c.clock_ns = clock_.now_ns();
    if (features_.regions) {
      c.region_compute_ns = regions_.compute_ns(s, false);
      c.region_rev_compute_ns = regions_.compute_ns(s, true);
    }
    if (features_.eq_classes) {
      evicted_neighbours(s);
      roots_.clear();
      for (int32_t n : neighbours_) roots_.push_back(classes_.find(ecn_[static_cast<size_t>(n)]));
      std::sort(roots_.begin(), roots_.end());
      roots_.erase(std::unique(roots_.begin(), roots_.end()), roots_.end());
      for (int32_t r : roots_) c.eqclass_compute_ns += classes_.value(r);
    }
    return c;
  }

  void free_for(int64_t bytes) {
    while (memory_ + bytes > budget_) {
      if (pool_.empty()) throw OutOfBudget{};
      const int32_t chosen = pool_.choose([&](int32_t s) { return heuristic_.score(candidate(s)); },
                                          [](int32_t) { return true; });
      evict(chosen, false);
    }
  }

  // ---- compute / materialize (v2.py)
  void run_op(int32_t t, bool remat) {
    const io::DtrOp& op = op_of(t);
    const int32_t first = op.first_output;
    const int32_t n = op.output_count();
    // Which siblings are defined, which storages come back (t included).
    sibling_defined_.assign(static_cast<size_t>(n), 0);
    for (int32_t i = 0; i < n; ++i)
      sibling_defined_[static_cast<size_t>(i)] = defined_[static_cast<size_t>(first + i)];
    std::vector<int32_t> remat_storages;
    for (int32_t i = 0; i < n; ++i) {  // t.siblings + [t]
      const int32_t u = first + i;
      if (u != t && !material(storage(u))) remat_storages.push_back(storage(u));
    }
    if (!material(storage(t))) remat_storages.push_back(storage(t));

    clock_.advance_by(op.time_ns);
    memory_ += op.total_size_bytes();
    result_.peak_bytes = std::max(result_.peak_bytes, memory_);

    material_[static_cast<size_t>(storage(t))] = 1;
    defined_[static_cast<size_t>(t)] = 1;
    if (remat) {
      result_.remat_compute_ns += op.time_ns;
      ++result_.remat_ops;
    } else {
      result_.model_compute_ns += op.time_ns;
    }
    for (int32_t i = 0; i < n; ++i) {
      const int32_t u = first + i;
      if (u == t || sibling_defined_[static_cast<size_t>(i)]) continue;
      material_[static_cast<size_t>(storage(u))] = 1;
      defined_[static_cast<size_t>(u)] = 1;
      if (remat) ++result_.remat_collateral;
    }
    for (int32_t i = 0; i < n; ++i) {  // free the double-computed outputs
      if (first + i != t && sibling_defined_[static_cast<size_t>(i)])
        memory_ -= op.sizes_bytes[static_cast<size_t>(i)];
    }
    for (int32_t s : remat_storages) pool_.enter(s);

    if (features_.regions && !remat_storages.empty()) {
      // Rebuild the new storages' regions, then the regions at their frontiers. Nothing changes
      // between these rebuilds, so a region already rebuilt here is not rebuilt twice.
      const size_t words = regions_.words();
      uint64_t* affected = scratch_.data() + 2 * words;  // forward regions to rebuild
      uint64_t* affected_rev = scratch_.data() + 3 * words;
      std::fill_n(affected, 2 * words, uint64_t{0});
      for (int32_t s : remat_storages) {
        rebuild(s, false);
        rebuild(s, true);
        const uint64_t* rev_frontier = regions_.frontier(s, true);
        const uint64_t* frontier = regions_.frontier(s, false);
        for (size_t w = 0; w < words; ++w) {
          affected[w] |= rev_frontier[w];
          affected_rev[w] |= frontier[w];
        }
      }
      for (int32_t s : remat_storages) {
        Regions::reset(affected, s);
        Regions::reset(affected_rev, s);
      }
      Regions::for_each(affected, words, [&](int32_t s) { rebuild(s, false); });
      Regions::for_each(affected_rev, words, [&](int32_t s) { rebuild(s, true); });
    }
    if (features_.eq_classes) {
      for (int32_t s : remat_storages) {
        const auto k = static_cast<size_t>(s);
        if (ecn_[k] < 0) broken("a storage coming back has no equivalence class");
        classes_.value(ecn_[k]) -= compute_[k];
        ecn_[k] = -1;
      }
    }
  }

  void materialize(int32_t t, bool remat) {
    const std::vector<int32_t>& ps = parents(t);
    for (int32_t p : ps) last_access_[static_cast<size_t>(storage(p))] = clock_.now_ns();
    // Lock the defined parents first, then bring back the others one by one (a sibling may come
    // back along with an earlier one).
    std::vector<int32_t> undefined;
    for (int32_t p : ps) {
      if (defined_[static_cast<size_t>(p)]) {
        lock(storage(p));
      } else {
        undefined.push_back(p);
      }
    }
    for (int32_t p : undefined) {
      if (!defined_[static_cast<size_t>(p)]) materialize(p, true);
      lock(storage(p));
    }
    const int64_t bytes = op_of(t).total_size_bytes();
    if (memory_ + bytes > budget_) free_for(bytes);
    run_op(t, remat);
    for (int32_t p : ps) unlock(storage(p));
    if (remat_limit_ >= 0 && static_cast<double>(result_.remat_compute_ns) > remat_limit_)
      throw RematExceeded{};
  }

  void compute(int32_t op_id) {
    const io::DtrOp& op = log_.ops[static_cast<size_t>(op_id)];
    ops_created_ = op_id + 1;
    ++result_.op_count;
    for (int32_t i = 0; i < op.output_count(); ++i) {
      const int32_t t = op.first_output + i;
      const int32_t s = storage(t);
      const auto k = static_cast<size_t>(s);
      tensor_refs_[static_cast<size_t>(t)] = 1;
      ++ref_ext_[k];
      // Storage.get_compute: distinct ops of its tensors; a second output of this op on the same
      // storage adds nothing.
      bool counted = false;
      for (int32_t u : storage_tensors(s))
        counted = counted || (u < t && g_.op_of[static_cast<size_t>(u)] == op_id);
      if (!counted) compute_[k] += op.time_ns;
      if (features_.eq_classes && !ecn_made_[k]) {
        ecn_made_[k] = 1;
        ecn_[k] = classes_.make(0);
      }
    }
    materialize(op.first_output, false);
    for (int32_t i = 0; i < op.output_count(); ++i) {
      last_access_[static_cast<size_t>(storage(op.first_output + i))] = clock_.now_ns();
    }
  }

  void get(int32_t t) {
    const auto k = static_cast<size_t>(storage(t));
    if (ref_ext_[k] <= 0)
      broken(fmt::format("a handle is taken on '{}', whose storage has none left",
                         log_.tensors[static_cast<size_t>(t)].name));
    ++ref_ext_[k];
    ++tensor_refs_[static_cast<size_t>(t)];
  }

  void release(int32_t t) {
    const int32_t s = storage(t);
    const auto k = static_cast<size_t>(s);
    if (ref_ext_[k] <= 0)
      broken(fmt::format("'{}' is released but its storage has no handle left",
                         log_.tensors[static_cast<size_t>(t)].name));
    --ref_ext_[k];
    --tensor_refs_[static_cast<size_t>(t)];
    if (ref_ext_[k] == 0 && material(s) && !pinned_[k]) evict(s, true);
  }

  void pin(int32_t t) {
    const int32_t s = storage(t);
    if (!material(s)) broken("pinning an evicted storage");
    if (pinned_[static_cast<size_t>(s)]) return;
    lock(s);
    pinned_[static_cast<size_t>(s)] = 1;
  }

 private:
  const io::DtrLog& log_;
  const DtrLogGraph& g_;
  const int64_t budget_;
  const double remat_limit_;
  const EvictionHeuristic& heuristic_;
  const EvictionFeatures features_;
  DtrReplayResult result_;
  Clock clock_;  // the event core's clock (sim/event_core.hpp): simrd's starts at 1, + every op run
  int64_t memory_ = 0;
  int32_t ops_created_ = 0;

  std::vector<uint8_t> defined_;
  std::vector<int32_t> tensor_refs_;
  std::vector<uint8_t> material_;
  std::vector<uint8_t> pinned_;
  std::vector<int32_t> ref_ext_;
  std::vector<int64_t> compute_;
  std::vector<int64_t> last_access_;
  EvictionPool pool_;

  Regions regions_;
  std::vector<uint64_t> scratch_;  // 4 bitsets: absorb's copies, then the evict/rebuild work sets
  std::vector<int32_t> stack_;

  std::vector<int32_t> ecn_;  // union-find node per storage, -1 none (simrd's meta['ecn'] = None)
  std::vector<uint8_t> ecn_made_;
  EqClasses classes_;
  std::vector<int32_t> neighbours_;
  std::vector<int32_t> roots_;
  std::vector<uint8_t> sibling_defined_;
};

}  // namespace mutwo::sim

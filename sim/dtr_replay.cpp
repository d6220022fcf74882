// simrd's RuntimeV2EagerOptimized over a parsed DTR log. The structure follows simrd's runtime
// (v2.py: compute, _materialize, _compute, _free, _evict, release, pin; optimization/region.py;
// optimization/eqclass.py) step by step, because the order of every lock, pool append and
// staleness update decides which storage a heuristic picks.
#include "sim/dtr_replay.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <mutex>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "profiles/error.hpp"
#include "sim/eq_classes.hpp"

namespace mutwo::sim {
namespace {

using profiles::DtrCommandKind;
using profiles::DtrLog;

struct OutOfBudget {};    // simrd's MemoryError
struct RematExceeded {};  // simrd's RematExceededError

// The log's graph as the runtime sees it: storages, and per tensor its parents, siblings,
// children. Tensors and children come into existence when their op is first computed; ops are
// computed in id order, so "created" is "op id < ops created so far".
struct StaticGraph {
  std::vector<int32_t> storage_of;     // per tensor
  std::vector<int32_t> op_of;          // per tensor
  std::vector<int64_t> storage_size;   // per storage
  std::vector<int32_t> tensors_begin;  // per storage + 1: its tensors, root first, by op id
  std::vector<int32_t> tensors_flat;
  std::vector<int32_t> children_begin;  // per tensor + 1: outputs of ops reading it, repeats kept
  std::vector<int32_t> children_flat;

  // Storage-level adjacency for the region walks and neighbourhoods: per storage, the distinct
  // storages of its tensors' children (forward) or parents (reverse), each with the op from which
  // on the edge exists (the later of the two tensors' creations), sorted by that op.
  struct Edge {
    int32_t storage;
    int32_t from_op;
  };
  std::vector<int32_t> fwd_begin;
  std::vector<Edge> fwd_flat;
  std::vector<int32_t> rev_begin;
  std::vector<Edge> rev_flat;

  explicit StaticGraph(const DtrLog& log) {
    const size_t n = log.tensors.size();
    storage_of.assign(n, -1);
    op_of.assign(n, 0);
    for (size_t o = 0; o < log.ops.size(); ++o) {
      const profiles::DtrOp& op = log.ops[o];
      for (int32_t i = 0; i < op.output_count(); ++i) {
        const auto t = static_cast<size_t>(op.first_output + i);
        op_of[t] = static_cast<int32_t>(o);
        const int32_t a = op.aliases[static_cast<size_t>(i)];
        if (a >= 0) {
          storage_of[t] = storage_of[static_cast<size_t>(op.args[static_cast<size_t>(a)])];
        } else {
          storage_of[t] = static_cast<int32_t>(storage_size.size());
          storage_size.push_back(op.sizes_bytes[static_cast<size_t>(i)]);
        }
      }
    }
    // Storage -> tensors, in tensor id order (= creation order).
    tensors_begin.assign(storage_size.size() + 1, 0);
    for (int32_t s : storage_of) ++tensors_begin[static_cast<size_t>(s) + 1];
    for (size_t s = 0; s < storage_size.size(); ++s) tensors_begin[s + 1] += tensors_begin[s];
    tensors_flat.resize(n);
    std::vector<int32_t> fill(tensors_begin.begin(), tensors_begin.end() - 1);
    for (size_t t = 0; t < n; ++t)
      tensors_flat[static_cast<size_t>(fill[static_cast<size_t>(storage_of[t])]++)] = static_cast<int32_t>(t);
    // Tensor -> children: p.children.extend(outputs) for every arg p, in op order.
    children_begin.assign(n + 1, 0);
    for (const profiles::DtrOp& op : log.ops) {
      for (int32_t p : op.args) children_begin[static_cast<size_t>(p) + 1] += op.output_count();
    }
    for (size_t t = 0; t < n; ++t) children_begin[t + 1] += children_begin[t];
    children_flat.resize(static_cast<size_t>(children_begin[n]));
    std::vector<int32_t> cfill(children_begin.begin(), children_begin.end() - 1);
    for (const profiles::DtrOp& op : log.ops) {
      for (int32_t p : op.args) {
        for (int32_t i = 0; i < op.output_count(); ++i) {
          children_flat[static_cast<size_t>(cfill[static_cast<size_t>(p)]++)] = op.first_output + i;
        }
      }
    }
    build_edges(log, true, fwd_begin, fwd_flat);
    build_edges(log, false, rev_begin, rev_flat);
  }

 private:
  void build_edges(const DtrLog& log, bool forward, std::vector<int32_t>& begin, std::vector<Edge>& flat) {
    const size_t storages = storage_size.size();
    std::vector<std::vector<Edge>> lists(storages);
    std::vector<size_t> owner(storages, storages);  // the storage whose list last saw it
    std::vector<size_t> at(storages, 0);            // its index in that list
    for (size_t s = 0; s < storages; ++s) {
      std::vector<Edge>& list = lists[s];
      auto add = [&](int32_t u, int32_t from_op) {
        const auto us = static_cast<size_t>(storage_of[static_cast<size_t>(u)]);
        if (owner[us] == s) {
          Edge& e = list[at[us]];
          e.from_op = std::min(e.from_op, from_op);
          return;
        }
        owner[us] = s;
        at[us] = list.size();
        list.push_back({static_cast<int32_t>(us), from_op});
      };
      for (int32_t k = tensors_begin[s]; k < tensors_begin[s + 1]; ++k) {
        const int32_t t = tensors_flat[static_cast<size_t>(k)];
        if (forward) {
          for (int32_t c = children_begin[static_cast<size_t>(t)];
               c < children_begin[static_cast<size_t>(t) + 1]; ++c) {
            const int32_t child = children_flat[static_cast<size_t>(c)];
            add(child, op_of[static_cast<size_t>(child)]);
          }
        } else {
          const int32_t o = op_of[static_cast<size_t>(t)];
          for (int32_t p : log.ops[static_cast<size_t>(o)].args) add(p, o);
        }
      }
      std::sort(list.begin(), list.end(), [](const Edge& a, const Edge& b) { return a.from_op < b.from_op; });
    }
    begin.assign(storages + 1, 0);
    for (size_t s = 0; s < storages; ++s) begin[s + 1] = begin[s] + static_cast<int32_t>(lists[s].size());
    flat.clear();
    flat.reserve(static_cast<size_t>(begin[storages]));
    for (const auto& list : lists) flat.insert(flat.end(), list.begin(), list.end());
  }
};

// simrd's Regions (optimization/region.py), two per storage: the evicted storages reachable from
// the base along child edges (forward) or parent edges (reverse) through evicted storages only
// (interior), the material storages at their edge (frontier), and the interior's summed compute.
// Sets are bitsets over storage ids: rebuilds and absorbs are word operations.
class Regions {
 public:
  Regions() = default;
  explicit Regions(size_t storages)
      : words_((storages + 63) / 64), bits_(storages * 4 * words_, 0), compute_ns_(storages * 2, 0) {}

  size_t words() const { return words_; }
  uint64_t* interior(int32_t s, bool reverse) { return bits_.data() + slot(s, reverse) * 2 * words_; }
  uint64_t* frontier(int32_t s, bool reverse) { return interior(s, reverse) + words_; }
  int64_t& compute_ns(int32_t s, bool reverse) { return compute_ns_[slot(s, reverse)]; }
  void clear(int32_t s, bool reverse) {
    std::fill_n(interior(s, reverse), 2 * words_, uint64_t{0});
    compute_ns(s, reverse) = 0;
  }

  static bool test(const uint64_t* set, int32_t x) { return (set[x >> 6] >> (x & 63)) & 1U; }
  static void set(uint64_t* set, int32_t x) { set[x >> 6] |= uint64_t{1} << (x & 63); }
  static void reset(uint64_t* set, int32_t x) { set[x >> 6] &= ~(uint64_t{1} << (x & 63)); }
  template <typename F>
  static void for_each(const uint64_t* set, size_t words, F&& f) {
    for (size_t w = 0; w < words; ++w) {
      for (uint64_t bits = set[w]; bits != 0; bits &= bits - 1) {
        f(static_cast<int32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
      }
    }
  }

 private:
  size_t slot(int32_t s, bool reverse) const { return static_cast<size_t>(s) * 2 + (reverse ? 1 : 0); }
  size_t words_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<int64_t> compute_ns_;
};

class Runtime {
 public:
  Runtime(const DtrLog& log, const StaticGraph& graph, int64_t budget, double remat_limit,
          const EvictionHeuristic& heuristic)
      : log_(log),
        g_(graph),
        budget_(budget),
        remat_limit_(remat_limit),
        heuristic_(heuristic),
        features_(heuristic.features()) {
    const size_t tensors = log.tensors.size();
    const size_t storages = graph.storage_size.size();
    defined_.assign(tensors, 0);
    tensor_refs_.assign(tensors, 0);
    material_.assign(storages, 0);
    pinned_.assign(storages, 0);
    ref_int_.assign(storages, 0);
    ref_ext_.assign(storages, 0);
    compute_.assign(storages, 0);
    last_access_.assign(storages, EvictionCandidate::kNeverAccessed);
    pool_prev_.assign(storages, -1);
    pool_next_.assign(storages, -1);
    in_pool_.assign(storages, 0);
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
      for (const profiles::DtrCommand& cmd : log_.commands) {
        switch (cmd.kind) {
          case DtrCommandKind::compute:
            compute(cmd.id);
            break;
          case DtrCommandKind::get:
            get(cmd.id);
            break;
          case DtrCommandKind::release:
            release(cmd.id);
            break;
          case DtrCommandKind::pin:
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
  std::span<const StaticGraph::Edge> edges(int32_t s, bool forward) const {
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
  const profiles::DtrOp& op_of(int32_t t) const {
    return log_.ops[static_cast<size_t>(g_.op_of[static_cast<size_t>(t)])];
  }

  [[noreturn]] void broken(const std::string& what) const {
    throw Error(fmt::format("DTR replay: {} (the log breaks an invariant simrd asserts)", what));
  }

  // ---- the storage pool: a list in insertion order (simrd's storage_pool)
  void pool_append(int32_t s) {
    const auto k = static_cast<size_t>(s);
    if (in_pool_[k]) return;
    in_pool_[k] = 1;
    pool_prev_[k] = pool_tail_;
    pool_next_[k] = -1;
    if (pool_tail_ >= 0) {
      pool_next_[static_cast<size_t>(pool_tail_)] = s;
    } else {
      pool_head_ = s;
    }
    pool_tail_ = s;
  }
  bool pool_remove(int32_t s) {
    const auto k = static_cast<size_t>(s);
    if (!in_pool_[k]) return false;
    in_pool_[k] = 0;
    const int32_t p = pool_prev_[k];
    const int32_t n = pool_next_[k];
    if (p >= 0) {
      pool_next_[static_cast<size_t>(p)] = n;
    } else {
      pool_head_ = n;
    }
    if (n >= 0) {
      pool_prev_[static_cast<size_t>(n)] = p;
    } else {
      pool_tail_ = p;
    }
    return true;
  }

  void lock(int32_t s) {
    const auto k = static_cast<size_t>(s);
    if (!material(s)) broken("locking an evicted storage");
    if (ref_int_[k] == 0 && !pool_remove(s)) broken("an unlocked material storage was not evictable");
    ++ref_int_[k];
  }
  void unlock(int32_t s) {
    const auto k = static_cast<size_t>(s);
    --ref_int_[k];
    if (ref_int_[k] == 0) pool_append(s);
  }

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
      for (const StaticGraph::Edge& e : edges(s, !reverse)) {
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
      for (const StaticGraph::Edge& e : edges(s, forward)) {
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
    if (ref_int_[k] != 0) broken("evicting a locked storage");
    material_[k] = 0;
    memory_ -= size(s);
    pool_remove(s);
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
    c.clock_ns = result_.clock_ns;
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
      if (pool_head_ < 0) throw OutOfBudget{};
      double best = std::numeric_limits<double>::infinity();
      int32_t chosen = -1;
      for (int32_t s = pool_head_; s >= 0; s = pool_next_[static_cast<size_t>(s)]) {
        const double score = heuristic_.score(candidate(s));
        if (score <= best) {
          best = score;
          chosen = s;
        }
        if (score == 0) break;
      }
      if (chosen < 0) chosen = pool_tail_;  // every score NaN: cannot happen with simrd's formulas
      evict(chosen, false);
    }
  }

  // ---- compute / materialize (v2.py)
  void run_op(int32_t t, bool remat) {
    const profiles::DtrOp& op = op_of(t);
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

    result_.clock_ns += op.time_ns;
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
    for (int32_t s : remat_storages) pool_append(s);

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
    for (int32_t p : ps) last_access_[static_cast<size_t>(storage(p))] = result_.clock_ns;
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
    const profiles::DtrOp& op = log_.ops[static_cast<size_t>(op_id)];
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
      last_access_[static_cast<size_t>(storage(op.first_output + i))] = result_.clock_ns;
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
  const DtrLog& log_;
  const StaticGraph& g_;
  const int64_t budget_;
  const double remat_limit_;
  const EvictionHeuristic& heuristic_;
  const EvictionFeatures features_;
  DtrReplayResult result_;
  int64_t memory_ = 0;
  int32_t ops_created_ = 0;

  std::vector<uint8_t> defined_;
  std::vector<int32_t> tensor_refs_;
  std::vector<uint8_t> material_;
  std::vector<uint8_t> pinned_;
  std::vector<int32_t> ref_int_;
  std::vector<int32_t> ref_ext_;
  std::vector<int64_t> compute_;
  std::vector<int64_t> last_access_;
  std::vector<int32_t> pool_prev_;
  std::vector<int32_t> pool_next_;
  std::vector<uint8_t> in_pool_;
  int32_t pool_head_ = -1;
  int32_t pool_tail_ = -1;

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

}  // namespace

std::string_view dtr_outcome_name(DtrOutcome outcome) {
  switch (outcome) {
    case DtrOutcome::ok:
      return "ok";
    case DtrOutcome::oom:
      return "OOM";
    case DtrOutcome::remat_limit_exceeded:
      return "remat_limit_exceeded";
  }
  return "?";
}

DtrReplayResult replay_dtr_log(const DtrLog& log, int64_t budget_bytes, double remat_limit_ns,
                               const EvictionHeuristic& heuristic) {
  const StaticGraph graph(log);
  Runtime runtime(log, graph, budget_bytes, remat_limit_ns, heuristic);
  return runtime.run();
}

DtrBaseline dtr_baseline(const DtrLog& log) {
  const StaticGraph graph(log);
  const size_t storages = graph.storage_size.size();
  std::vector<int32_t> refs(storages, 0);
  std::vector<uint8_t> live(storages, 0);
  DtrBaseline b;
  int64_t memory = 0;
  for (const profiles::DtrCommand& cmd : log.commands) {
    switch (cmd.kind) {
      case DtrCommandKind::compute: {
        const profiles::DtrOp& op = log.ops[static_cast<size_t>(cmd.id)];
        for (int32_t i = 0; i < op.output_count(); ++i) {
          const auto s = static_cast<size_t>(graph.storage_of[static_cast<size_t>(op.first_output + i)]);
          ++refs[s];
          live[s] = 1;
        }
        memory += op.total_size_bytes();
        b.peak_bytes = std::max(b.peak_bytes, memory);
        b.compute_ns += op.time_ns;
        if (op.origin == profiles::DtrOpOrigin::constant) b.constant_bytes += op.total_size_bytes();
        break;
      }
      case DtrCommandKind::get:
        ++refs[static_cast<size_t>(graph.storage_of[static_cast<size_t>(cmd.id)])];
        break;
      case DtrCommandKind::release: {
        const auto s = static_cast<size_t>(graph.storage_of[static_cast<size_t>(cmd.id)]);
        if (--refs[s] == 0 && live[s]) {  // V1 banishes it, pinned or not
          live[s] = 0;
          memory -= graph.storage_size[s];
        }
        break;
      }
      case DtrCommandKind::pin:
        if (!live[static_cast<size_t>(graph.storage_of[static_cast<size_t>(cmd.id)])]) {
          throw Error(fmt::format("DTR baseline: tensor '{}' is held at the end but its storage was freed",
                                  log.tensors[static_cast<size_t>(cmd.id)].name));
        }
        break;
    }
  }
  return b;
}

const std::vector<double>& dtr_paper_ratios() {
  static const std::vector<double> ratios = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  return ratios;
}

std::vector<DtrSweepRow> sweep_dtr_log(const DtrLog& log, const DtrBaseline& baseline,
                                       const std::vector<double>& ratios,
                                       const std::vector<const EvictionHeuristic*>& heuristics, int jobs,
                                       double overhead_limit) {
  for (double ratio : ratios) {
    if (!(ratio > 0) || !std::isfinite(ratio)) throw Error(fmt::format("budget ratio {} must be > 0", ratio));
  }
  const StaticGraph graph(log);
  const double remat_limit = static_cast<double>(baseline.compute_ns) * (overhead_limit - 1);
  std::vector<DtrSweepRow> rows(heuristics.size() * ratios.size());
  auto run_one = [&](size_t i) {
    const EvictionHeuristic& heuristic = *heuristics[i / ratios.size()];
    DtrSweepRow& row = rows[i];
    row.heuristic = std::string(heuristic.name());
    row.ratio = ratios[i % ratios.size()];
    const auto budget =
        static_cast<int64_t>(static_cast<double>(baseline.peak_bytes) * row.ratio);  // int(x * r)
    row.result = Runtime(log, graph, budget, remat_limit, heuristic).run();
    row.overhead = baseline.compute_ns > 0
                       ? static_cast<double>(row.result.clock_ns) / static_cast<double>(baseline.compute_ns)
                       : 0.0;
  };
  size_t threads = jobs > 0 ? static_cast<size_t>(jobs) : std::max(1U, std::thread::hardware_concurrency());
  threads = std::min(threads, rows.size());
  if (threads <= 1) {
    for (size_t i = 0; i < rows.size(); ++i) run_one(i);
    return rows;
  }
  // Runs longest first would balance better, but their lengths are unknown: hand them out in order.
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> pool;
  for (size_t k = 0; k < threads; ++k) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < rows.size(); i = next++) {
        try {
          run_one(i);
        } catch (...) {
          const std::lock_guard lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return rows;
}

}  // namespace mutwo::sim

#include "io/execution_trace.hpp"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/aten_call.hpp"
#include "io/execution_trace_nodes.hpp"
#include "ir/graph.hpp"
#include "ir/kind_rules.hpp"
#include "support/checked_int.hpp"
#include "support/error.hpp"

namespace mutwo::io {
namespace {

using et::elements;
using et::EtNode;
using et::EtTensor;
using et::subtree;
using nlohmann::json;

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

AtenArguments arguments_of(const EtNode& n) {
  return AtenArguments{n.input_values, n.input_shapes, n.input_types, n.output_shapes};
}

// FLOPs of an aten operator from its arguments: a call with a mutwo kind (GEMMs, convolutions, ...)
// by the kind's own rule (io/aten_call.hpp); convolution_backward and pointwise ops here (a
// multiply-add is 2, pointwise 1 per element); 0 otherwise. Overflow is an error naming the node.
int64_t aten_flops(const EtNode& n) {
  if (const std::optional<TypedCall> call = type_aten_call(n.name, arguments_of(n))) return call->flops;
  const auto& in = n.input_shapes;
  const std::vector<int64_t> out = n.output_shapes.empty() ? std::vector<int64_t>{} : n.output_shapes[0];
  const std::string_view name = n.name;
  const auto arg = [&](size_t i) { return i < in.size() ? in[i] : std::vector<int64_t>{}; };
  const std::string what = fmt::format("execution trace node {} ({}): FLOPs", n.id, n.name);
  if (name == "aten::convolution_backward" && arg(0).size() == 4 && arg(2).size() == 4) {
    // grad_output, input, weight: the input's and the weight's gradient, each the forward's MACs
    // (output_mask is not read: the first layer's input gradient is counted too).
    return support::checked_product({4, elements(arg(0)), arg(2)[1], arg(2)[2], arg(2)[3]}, what);
  }
  if (one_of(name, {"aten::relu",        "aten::relu_",    "aten::gelu",      "aten::silu", "aten::sigmoid",
                    "aten::tanh",        "aten::add",      "aten::add_",      "aten::mul",  "aten::mul_",
                    "aten::div",         "aten::div_",     "aten::sub",       "aten::sub_", "aten::hardswish",
                    "aten::hardsigmoid", "aten::hardtanh", "aten::clamp_min", "aten::sqrt", "aten::addcmul_",
                    "aten::addcdiv_",    "aten::lerp_"})) {
    // addcmul_, addcdiv_ (x + v * a op b) and lerp_ are 3 per element: Adam's single-tensor step
    // (mul_, add_, mul_, addcmul_, sqrt, div, add_, addcdiv_) then counts the zoo's 12 (kAdamFlops).
    const int64_t per_element = one_of(name, {"aten::addcmul_", "aten::addcdiv_", "aten::lerp_"}) ? 3 : 1;
    // Floating arithmetic only: batch norm's num_batches_tracked += 1 (int64) is bookkeeping.
    const std::optional<ir::DType> dtype =
        n.input_types.empty() ? std::nullopt : aten_tensor_dtype(n.input_types[0]);
    return dtype && ir::is_floating(*dtype) ? support::checked_product({per_element, elements(out)}, what)
                                            : 0;
  }
  return 0;
}

constexpr std::string_view kBackwardPrefix = "autograd::engine::evaluate_function:";

enum class UnitPhase : uint8_t { forward, backward, optimizer };

struct Unit {
  size_t node = 0;  // index of the outermost node
  UnitPhase phase = UnitPhase::forward;
};

// What became of each storage the step touched: one mutwo tensor per version.
struct Version {
  int64_t storage_id = 0;
  int64_t bytes = 0;
  int64_t element_size = 0;
  ir::OpId producer = ir::kNoId;  // kNoId: it existed before the step (or was made by no recorded op)
  bool unrecorded = false;
  bool on_gpu = false;
  int64_t numel = 0;
  bool read_in_forward = false;
  bool updated_in_forward = false;
  bool updated_in_optimizer = false;
  bool updated_after_made = false;  // written in place by an op after its producer (relu_ on a conv's output)
  std::set<int64_t> tensor_ids;     // the views of it seen so far
};

}  // namespace

std::string typed_coverage(const ir::Trace& trace) {
  const ir::Graph& g = trace.graph;
  const bool timed = trace.op_duration_ns.size() == g.ops.size();
  struct Share {
    int64_t ops = 0, typed = 0;
    double ns = 0, typed_ns = 0;
  };
  Share phases[3];
  for (const ir::Op& op : g.ops) {
    Share& s = phases[static_cast<size_t>(op.phase)];
    // Typed: a mutwo kind, a view, or (an optimizer's pointwise update) a cost category.
    const bool typed =
        op.attrs.contains("typed_kind") || op.attrs.contains("view") || op.attrs.contains("category");
    const double ns = timed ? trace.op_duration_ns[static_cast<size_t>(op.id)] : 0.0;
    ++s.ops;
    s.ns += ns;
    if (typed) {
      ++s.typed;
      s.typed_ns += ns;
    }
  }
  std::string text =
      "typed ops (a mutwo kind: FLOPs by its rule, its cost category, recomputable where pure):";
  const char* names[3] = {"forward", "backward", "optimizer"};
  for (size_t p = 0; p < 3; ++p) {
    const Share& s = phases[p];
    text += fmt::format(" {} {}/{}", names[p], s.typed, s.ops);
    if (timed && s.ns > 0) text += fmt::format(" ({:.1f} % of its time)", 100.0 * s.typed_ns / s.ns);
    text += p < 2 ? ";" : "";
  }
  return text + "; the others stay opaque with the bytes they touch";
}

bool is_execution_trace_document(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("schema") && doc.contains("nodes") && doc["nodes"].is_array();
}

TraceImport import_execution_trace(const nlohmann::json& doc, std::string_view source) {
  std::vector<EtNode> nodes = et::read_nodes(doc, source);
  std::map<int64_t, size_t> index_of;
  for (size_t i = 0; i < nodes.size(); ++i) index_of[nodes[i].id] = i;
  std::vector<size_t> roots;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto parent = index_of.find(nodes[i].parent);
    if (nodes[i].parent == nodes[i].id || parent == index_of.end()) {
      roots.push_back(i);
    } else {
      nodes[parent->second].children.push_back(i);  // ascending: nodes are sorted by id
    }
  }

  // The outermost operators, in start order, with their phase.
  std::vector<Unit> units;
  int64_t zero_grad_nodes = 0;
  bool in_backward = false;
  auto is_op = [](const EtNode& n) {
    return n.name.find("::") != std::string::npos || !n.inputs.empty() || !n.outputs.empty();
  };
  auto walk = [&](auto&& self, size_t i, bool optimizer) -> void {
    const EtNode& n = nodes[i];
    if (n.name.starts_with("Optimizer.zero_grad")) {
      ++zero_grad_nodes;
      return;
    }
    const bool in_optimizer = optimizer || n.name.starts_with("Optimizer.step");
    if (is_op(n)) {
      if (n.name.starts_with(kBackwardPrefix)) in_backward = true;
      units.push_back(Unit{i, in_optimizer  ? UnitPhase::optimizer
                              : in_backward ? UnitPhase::backward
                                            : UnitPhase::forward});
      return;
    }
    for (size_t c : n.children) self(self, c, in_optimizer);
  };
  for (size_t r : roots) walk(walk, r, false);
  if (units.empty()) {
    throw FormatError(
        fmt::format("{}: execution trace has no operator nodes ({} nodes)", source, nodes.size()));
  }

  // Dataflow through storages, unit by unit.
  std::vector<Version> versions;
  std::map<int64_t, size_t> live;  // storage id -> its current version
  int64_t unrecorded = 0;
  auto new_version = [&](const EtTensor& t, ir::OpId producer) {
    Version v;
    v.storage_id = t.storage_id;
    v.element_size = t.element_size;
    v.on_gpu = t.on_gpu;
    v.numel = t.numel;
    v.producer = producer;
    v.tensor_ids.insert(t.tensor_id);
    versions.push_back(std::move(v));
    live[t.storage_id] = versions.size() - 1;
    return versions.size() - 1;
  };
  // A read of a storage: its live version; a storage not seen yet existed before the step. A tensor
  // id not seen on a live storage, of another element size or a one-element view of a larger
  // storage, is a new tensor on a recycled storage id that no recorded op made (a wrapped Python
  // scalar).
  auto version_read = [&](const EtTensor& t) {
    const auto it = live.find(t.storage_id);
    if (it == live.end()) return new_version(t, ir::kNoId);
    Version& v = versions[it->second];
    if (!v.tensor_ids.contains(t.tensor_id) &&
        (t.element_size != v.element_size || (t.numel <= 1 && v.bytes > t.extent_bytes))) {
      ++unrecorded;
      const size_t k = new_version(t, ir::kNoId);
      versions[k].unrecorded = true;
      return k;
    }
    v.tensor_ids.insert(t.tensor_id);
    return it->second;
  };

  struct OpFlow {
    std::vector<size_t> reads;  // versions, first read first
    std::vector<size_t> made;
    std::vector<size_t> updated;
    std::map<int64_t, size_t> arg_versions;  // the outermost call's tensor arguments: storage id -> version
  };
  // Tensor ids of views (outputs on an input's storage that no in-place op wrote): their numel says
  // nothing of their storage's size (an expanded bias has stride 0).
  std::set<int64_t> view_ids;
  auto grow = [&](size_t v, const EtTensor& t) {
    if (!view_ids.contains(t.tensor_id)) versions[v].bytes = std::max(versions[v].bytes, t.extent_bytes);
  };
  std::vector<OpFlow> flows(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    const auto op = static_cast<ir::OpId>(u);
    OpFlow& f = flows[u];
    std::set<size_t> made;
    for (size_t i : subtree(nodes, units[u].node)) {
      const EtNode& n = nodes[i];
      std::set<int64_t> input_storages;
      for (const EtTensor& t : n.inputs) {
        input_storages.insert(t.storage_id);
        const size_t v = version_read(t);
        grow(v, t);
        if (i == units[u].node) f.arg_versions.emplace(t.storage_id, v);
        if (units[u].phase == UnitPhase::forward) versions[v].read_in_forward = true;
        if (!made.contains(v) && std::find(f.reads.begin(), f.reads.end(), v) == f.reads.end())
          f.reads.push_back(v);
      }
      const std::string_view base = std::string_view(n.name).substr(n.name.rfind(':') + 1);
      const bool in_place = !base.empty() && base.back() == '_';
      for (const EtTensor& t : n.outputs) {
        size_t v = 0;
        const auto it = live.find(t.storage_id);
        if (input_storages.contains(t.storage_id) && it != live.end()) {
          v = it->second;  // a view, or an in-place write
          if (!in_place) view_ids.insert(t.tensor_id);
          if (in_place && !made.contains(v)) {
            if (units[u].phase == UnitPhase::optimizer) versions[v].updated_in_optimizer = true;
            if (units[u].phase == UnitPhase::forward) versions[v].updated_in_forward = true;
            versions[v].updated_after_made = versions[v].producer != ir::kNoId;
            if (std::find(f.updated.begin(), f.updated.end(), v) == f.updated.end()) f.updated.push_back(v);
          }
        } else if (it != live.end() && made.contains(it->second)) {
          v = it->second;  // made earlier in this op (a callee's output is its caller's)
        } else {
          view_ids.erase(t.tensor_id);  // a recycled tensor id, now of a new storage
          v = new_version(t, op);
          made.insert(v);
          f.made.push_back(v);
        }
        versions[v].tensor_ids.insert(t.tensor_id);
        grow(v, t);
      }
    }
  }

  // Forward ops by the sequence numbers of their nodes, for forward_of. An op that makes no autograd
  // function still records the next sequence number (it peeks, as num_batches_tracked's add_ does
  // before batch_norm), so a number belongs to the last forward op that recorded it.
  std::map<int64_t, ir::OpId> forward_by_seq;
  for (size_t u = 0; u < units.size(); ++u) {
    if (units[u].phase != UnitPhase::forward) continue;
    for (size_t i : subtree(nodes, units[u].node)) {
      if (nodes[i].seq_id >= 0) forward_by_seq[nodes[i].seq_id] = static_cast<ir::OpId>(u);
    }
  }
  std::vector<uint8_t> backward_seen(units.size(), 0);  // a forward op's first autograd function was met
  // The mutwo kind of each forward op's aten call (io/aten_call.hpp).
  std::vector<std::optional<TypedCall>> typed(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    if (units[u].phase != UnitPhase::forward) continue;
    const EtNode& n = nodes[units[u].node];
    typed[u] = type_aten_call(n.name, arguments_of(n));
  }

  // Left out of the graph: on a GPU trace, host tensors (they take no device memory); and scalar
  // arguments: one-element tensors that existed before the step and that the step never updates
  // (Python numbers wrapped as tensors, CPU-resident even on a GPU).
  const bool gpu_trace =
      std::any_of(versions.begin(), versions.end(), [](const Version& x) { return x.on_gpu; });
  std::vector<uint8_t> dropped(versions.size(), 0);
  int64_t host_tensors = 0, scalars = 0;
  for (size_t v = 0; v < versions.size(); ++v) {
    const Version& x = versions[v];
    if (gpu_trace && !x.on_gpu) {
      dropped[v] = 1;
      ++host_tensors;
    } else if (x.producer == ir::kNoId && x.numel <= 1 && !x.updated_in_optimizer && !x.updated_in_forward) {
      dropped[v] = 1;
      ++scalars;
    }
  }

  ir::Graph g;
  g.name = std::string(source);
  std::vector<ir::TensorId> tensor_of(versions.size(), ir::kNoId);
  int64_t weights = 0, states = 0, inputs = 0;
  for (size_t v = 0; v < versions.size(); ++v) {
    const Version& x = versions[v];
    if (dropped[v] != 0) continue;
    ir::TensorRole role = ir::TensorRole::activation;
    if (x.producer == ir::kNoId) {
      if (x.updated_in_optimizer) {
        role = x.read_in_forward ? ir::TensorRole::weight : ir::TensorRole::optimizer_state;
      } else if (x.updated_in_forward) {
        role = ir::TensorRole::weight;
      } else {
        role = ir::TensorRole::input;
      }
      ++(role == ir::TensorRole::weight            ? weights
         : role == ir::TensorRole::optimizer_state ? states
                                                   : inputs);
    } else if (units[static_cast<size_t>(x.producer)].phase != UnitPhase::forward) {
      role = ir::TensorRole::temporary;
    }
    const std::string name = x.producer == ir::kNoId
                                 ? fmt::format("storage{}{}", x.storage_id, x.unrecorded ? "/unrecorded" : "")
                                 : fmt::format("op{}/storage{}", x.producer, x.storage_id);
    tensor_of[v] = ir::add_byte_tensor(g, name, x.bytes, role);
  }
  for (size_t u = 0; u < units.size(); ++u) {
    const EtNode& n = nodes[units[u].node];
    const OpFlow& f = flows[u];
    ir::Op op;
    op.id = static_cast<ir::OpId>(u);
    op.name = n.name;
    op.phase = units[u].phase == UnitPhase::forward    ? ir::Phase::forward
               : units[u].phase == UnitPhase::backward ? ir::Phase::backward
                                                       : ir::Phase::optimizer;
    op.kind = op.phase == ir::Phase::backward    ? ir::OpKind::opaque_backward
              : op.phase == ir::Phase::optimizer ? ir::OpKind::opaque_optimizer
                                                 : ir::OpKind::opaque;
    for (size_t v : f.reads) {
      if (dropped[v] != 0) continue;
      op.inputs.push_back(tensor_of[v]);
      op.bytes_read += versions[v].bytes;
    }
    for (size_t v : f.made) {
      if (dropped[v] != 0) continue;
      op.outputs.push_back(tensor_of[v]);
      op.bytes_written += versions[v].bytes;
    }
    for (size_t v : f.updated) {
      if (dropped[v] == 0) op.bytes_written += versions[v].bytes;
    }
    op.attrs["source_op"] = n.name;
    op.attrs["et_node"] = n.id;
    if (n.rf_id >= 0) op.attrs["rf_id"] = n.rf_id;
    std::vector<int64_t> rf_ids;  // its nodes' record-function ids: what launched its kernels
    for (size_t i : subtree(nodes, units[u].node)) {
      if (nodes[i].rf_id >= 0) rf_ids.push_back(nodes[i].rf_id);
    }
    std::sort(rf_ids.begin(), rf_ids.end());
    op.attrs["rf_ids"] = rf_ids;
    // (.item() makes no storage either, but copies a value to the host: not a view.)
    const bool view =
        f.made.empty() && f.updated.empty() && !one_of(n.name, {"aten::item", "aten::_local_scalar_dense"});
    if (typed[u]) {
      const ir::KindRules& rules = *ir::kind_rules(typed[u]->kind);
      op.flops = typed[u]->flops;
      op.attrs["typed_kind"] = std::string(ir::kind_name(typed[u]->kind));
      // Re-runnable from its inputs when it writes nothing in place (relu_ does) and no later op
      // writes its outputs in place (batch norm's before relu_: re-running it would not restore them).
      op.recomputable = rules.recomputable && f.updated.empty() && !f.made.empty() &&
                        std::none_of(f.made.begin(), f.made.end(),
                                     [&](size_t v) { return versions[v].updated_after_made; });
    } else if (view) {
      // A view or metadata op (t, reshape; in the backward their functions, AccumulateGrad taking
      // the gradient as .grad): no kernel, no new storage.
      op.attrs["view"] = int64_t{1};
    } else {
      op.flops = aten_flops(n);
    }
    if (op.phase == ir::Phase::optimizer && op.flops > 0) op.attrs["category"] = std::string("elementwise");
    if (op.phase == ir::Phase::backward) {
      // The autograd function's node carries the sequence number of the forward op it differentiates.
      for (size_t c : n.children) {
        const auto fwd = forward_by_seq.find(nodes[c].seq_id);
        if (nodes[c].seq_id >= 0 && fwd != forward_by_seq.end()) {
          op.forward_of = fwd->second;
          break;
        }
      }
      const auto fwd = static_cast<size_t>(op.forward_of);
      if (op.forward_of != ir::kNoId && typed[fwd] && !view) {
        // A typed op's backward: its kind's autodiff rule, on its first autograd function to run,
        // its result's (addmm's before t's, nll_loss's before log_softmax's); the others are
        // counted with it.
        const TypedCall& call = *typed[fwd];
        op.attrs["typed_kind"] = std::string(ir::kind_name(ir::kind_rules(call.kind)->backward_kind));
        if (backward_seen[fwd] == 0) {
          backward_seen[fwd] = 1;
          const EtNode& forward_node = nodes[units[fwd].node];
          std::vector<bool> needs_grad;
          for (size_t arg : call.arg_of) {
            const json& value = (*forward_node.input_values)[arg];
            const auto v = flows[fwd].arg_versions.find(value[1].get<int64_t>());
            bool needs = false;
            if (v != flows[fwd].arg_versions.end() && dropped[v->second] == 0) {
              const ir::TensorRole role = g.tensor(tensor_of[v->second]).role;
              needs = role == ir::TensorRole::weight || role == ir::TensorRole::activation;
            }
            needs_grad.push_back(needs);
          }
          op.flops = typed_backward_flops(call, needs_grad);
        }
        // The engine's own aten calls beside the function: partial gradients summed (accumulate_grad).
        for (size_t c : n.children) {
          if (nodes[c].name.starts_with("aten::")) op.flops += aten_flops(nodes[c]);
        }
        g.ops.push_back(std::move(op));
        continue;
      }
      // Its own aten calls where they are known GEMMs, convolutions or pointwise ops.
      std::vector<size_t> calls(n.children.begin(), n.children.end());
      for (size_t k = 0; k < calls.size(); ++k) {
        const int64_t call_flops = aten_flops(nodes[calls[k]]);
        if (call_flops > 0) {
          op.flops += call_flops;  // callees of a known op are its own implementation: not counted again
        } else {
          for (size_t c : nodes[calls[k]].children) calls.push_back(c);
        }
      }
    }
    g.ops.push_back(std::move(op));
  }
  ir::link(g);
  ir::validate(g);

  TraceImport out;
  out.trace.graph = std::move(g);
  out.needs_profile = true;
  out.warnings.push_back(fmt::format(
      "{}: an execution trace has no durations: each op's time needs a measured trace of the same step "
      "(its Kineto trace) or a cost source that prices opaque ops",
      source));
  out.warnings.push_back(fmt::format(
      "{}: {} ops ({} forward, {} backward, {} optimizer) over {} tensors; {} weights, {} optimizer states "
      "and {} "
      "inputs existed before the step (roles from where the step updates them in place)",
      source, units.size(),
      std::count_if(units.begin(), units.end(), [](const Unit& x) { return x.phase == UnitPhase::forward; }),
      std::count_if(units.begin(), units.end(), [](const Unit& x) { return x.phase == UnitPhase::backward; }),
      std::count_if(units.begin(), units.end(),
                    [](const Unit& x) { return x.phase == UnitPhase::optimizer; }),
      versions.size() - static_cast<size_t>(host_tensors + scalars), weights, states, inputs));
  if (scalars > 0) {
    out.warnings.push_back(
        fmt::format("{}: {} scalar argument(s) left out (one-element tensors the step reads but "
                    "never updates: wrapped Python numbers)",
                    source, scalars));
  }
  if (host_tensors > 0) {
    out.warnings.push_back(fmt::format(
        "{}: {} host tensor(s) left out of a GPU trace (they take no device memory)", source, host_tensors));
  }
  out.warnings.push_back(fmt::format("{}: {}", source, typed_coverage(out.trace)));
  if (zero_grad_nodes > 0) {
    out.warnings.push_back(
        fmt::format("{}: Optimizer.zero_grad left out (it runs before the forward)", source));
  }
  if (unrecorded > 0) {
    out.warnings.push_back(fmt::format(
        "{}: {} tensor(s) on recycled storage ids were made by no recorded op (wrapped Python scalars)",
        source, unrecorded));
  }
  return out;
}

}  // namespace mutwo::io

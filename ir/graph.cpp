#include "ir/graph.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <type_traits>
#include <variant>

#include "ir/kind_rules.hpp"
#include "ir/optimizer_kernels.hpp"
#include "support/checked_int.hpp"
#include "support/error.hpp"

namespace mutwo::ir {
namespace {

std::string op_label(const Op& op) {
  return fmt::format("op {} '{}'", op.id, op.name);
}
std::string tensor_label(const Tensor& t) {
  return fmt::format("tensor {} '{}'", t.id, t.name);
}

void check_tensor(const Tensor& t, size_t index) {
  if (t.id != static_cast<TensorId>(index)) {
    throw GraphError(
        fmt::format("tensor at position {} has field 'id' = {}, expected {}", index, t.id, index));
  }
  if (t.name.empty()) throw GraphError(fmt::format("{}: field 'name' is empty", tensor_label(t)));
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] < 0) {
      throw GraphError(fmt::format("{}: field 'shape' has negative dimension {} at index {}", tensor_label(t),
                                   t.shape[d], d));
    }
  }
  if (t.bytes < 0)
    throw GraphError(fmt::format("{}: field 'bytes' is negative ({})", tensor_label(t), t.bytes));
  if (t.bytes > kMaxTensorBytes) {
    throw GraphError(
        fmt::format("{}: field 'bytes' = {} exceeds {} (1 PiB), more than any device or host holds",
                    tensor_label(t), t.bytes, kMaxTensorBytes));
  }
  int64_t expected = 0;
  try {
    expected = support::checked_product({element_count(t.shape), dtype_size_bytes(t.dtype)}, "bytes");
  } catch (const GraphError&) {
    throw GraphError(fmt::format("{}: field 'shape' {} of {}: its size overflows 64-bit integers",
                                 tensor_label(t), shape_string(t.shape), dtype_name(t.dtype)));
  }
  if (t.bytes != expected) {
    throw GraphError(fmt::format("{}: field 'bytes' = {} does not match shape {} of {} ({} bytes)",
                                 tensor_label(t), t.bytes, shape_string(t.shape), dtype_name(t.dtype),
                                 expected));
  }
  if (t.width < 1)
    throw GraphError(fmt::format("{}: field 'width' = {} must be >= 1", tensor_label(t), t.width));
}

void check_ids(const Graph& g, const Op& op, const std::vector<TensorId>& ids, const char* field) {
  for (TensorId id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= g.tensors.size()) {
      throw GraphError(fmt::format("{}: field '{}' refers to tensor {} which does not exist ({} tensors)",
                                   op_label(op), field, id, g.tensors.size()));
    }
  }
}

// A backward op reads what autodiff gives it (transforms/autodiff.cpp): the gradient of its forward's
// output (none after a loss), then what the forward saves (KindRules::saved), each as shaped as the
// forward's tensor (a recomputed or swapped copy has another id, never another shape). A hand-edited
// list crashed the executor's kernel and priced the op on what it does not read.
void check_backward_inputs(const Graph& g, const Op& op, const Op& fwd, const KindRules& rules) {
  std::vector<TensorId> expected;
  if (!rules.is_loss && !fwd.outputs.empty()) expected.push_back(fwd.outputs[0]);
  for (const SavedRef& ref : rules.saved) {
    const auto& from = ref.from == SavedRef::From::input ? fwd.inputs : fwd.outputs;
    if (ref.index >= 0 && static_cast<size_t>(ref.index) < from.size())
      expected.push_back(from[static_cast<size_t>(ref.index)]);
  }
  if (op.inputs.size() != expected.size()) {
    throw GraphError(fmt::format("{}: field 'inputs' has {} tensors, the backward of {} ({}) reads {}",
                                 op_label(op), op.inputs.size(), op_label(fwd), kind_name(fwd.kind),
                                 expected.size()));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const Tensor& got = g.tensor(op.inputs[i]);
    const Tensor& want = g.tensor(expected[i]);
    if (got.shape != want.shape) {
      throw GraphError(
          fmt::format("{}: input {} ({}) has shape {}, where it reads {} of shape {}", op_label(op), i,
                      tensor_label(got), shape_string(got.shape),
                      i == 0 && !rules.is_loss ? "the gradient of " + tensor_label(want) : tensor_label(want),
                      shape_string(want.shape)));
    }
  }
}

std::string attr_text(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          return "'" + v + "'";
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>> ||
                             std::is_same_v<V, std::vector<double>>) {
          return fmt::format("[{}]", fmt::join(v, ", "));
        } else {
          return fmt::format("{}", v);
        }
      },
      value);
}

// A backward op runs with its forward op's attributes (autodiff copies them, adding needs_grad): a
// hand-edited schedule whose dropout backward had another p, or whose attention backward another
// scale, trained wrong gradients and predicted the same time.
void check_backward_attributes(const Op& op, const Op& fwd) {
  for (const auto& [key, value] : fwd.attrs) {
    const auto it = op.attrs.find(key);
    if (it == op.attrs.end() || it->second != value) {
      throw GraphError(fmt::format("{}: attribute '{}' {}, where its forward {} has {}", op_label(op), key,
                                   it == op.attrs.end() ? "is missing" : "= " + attr_text(it->second),
                                   op_label(fwd), attr_text(value)));
    }
  }
  for (const auto& [key, value] : op.attrs) {
    if (key != "needs_grad" && !fwd.attrs.contains(key)) {
      throw GraphError(fmt::format("{}: attribute '{}' = {} is not one of its forward {}'s", op_label(op),
                                   key, attr_text(value), op_label(fwd)));
    }
  }
}

// The kind's shape inference of a forward op on its inputs.
InferResult infer_forward(const Graph& g, const Op& op, const KindRules& rules) {
  std::vector<const Tensor*> inputs;
  for (TensorId id : op.inputs) inputs.push_back(&g.tensor(id));
  const std::string name = op.name;
  return rules.infer(InferContext{name, inputs, op.attrs, op.width});
}

void check_shapes_against_rules(const Graph& g, const Op& op) {
  if (const KindRules* rules = kind_rules(op.kind); rules && op.phase == Phase::forward) {
    const InferResult r = infer_forward(g, op, *rules);
    if (r.outputs.size() != op.outputs.size()) {
      throw GraphError(fmt::format("{}: field 'outputs' has {} tensors, kind '{}' produces {}", op_label(op),
                                   op.outputs.size(), kind_name(op.kind), r.outputs.size()));
    }
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      const Tensor& t = g.tensor(op.outputs[i]);
      if (t.shape != r.outputs[i].shape || t.dtype != r.outputs[i].dtype) {
        throw GraphError(fmt::format("{}: output {} ({}) has shape {} {}, kind '{}' gives {} {}",
                                     op_label(op), i, tensor_label(t), shape_string(t.shape),
                                     dtype_name(t.dtype), kind_name(op.kind),
                                     shape_string(r.outputs[i].shape), dtype_name(r.outputs[i].dtype)));
      }
    }
    return;
  }
  // A backward op of a known kind produces one gradient per forward input flagged in needs_grad.
  if (op.forward_of == kNoId) return;
  const Op& fwd = g.op(op.forward_of);
  const KindRules* rules = kind_rules(fwd.kind);
  if (!rules || rules->backward_kind != op.kind) return;
  check_backward_inputs(g, op, fwd, *rules);
  check_backward_attributes(op, fwd);
  if (!op.attrs.contains("needs_grad")) return;
  const auto& needs = attr_ints(op.attrs, "needs_grad", op_label(op));
  if (needs.size() != fwd.inputs.size()) {
    throw GraphError(fmt::format("{}: attribute 'needs_grad' has {} flags, forward {} has {} inputs",
                                 op_label(op), needs.size(), op_label(fwd), fwd.inputs.size()));
  }
  size_t out = 0;
  for (size_t i = 0; i < needs.size(); ++i) {
    if (!needs[i]) continue;
    if (out >= op.outputs.size()) {
      throw GraphError(
          fmt::format("{}: field 'outputs' lacks the gradient of forward input {}", op_label(op), i));
    }
    const Tensor& grad = g.tensor(op.outputs[out++]);
    const Tensor& x = g.tensor(fwd.inputs[i]);
    if (grad.shape != x.shape) {
      throw GraphError(fmt::format("{}: gradient {} has shape {}, forward input {} has {}", op_label(op),
                                   tensor_label(grad), shape_string(grad.shape), tensor_label(x),
                                   shape_string(x.shape)));
    }
  }
  if (out != op.outputs.size()) {
    throw GraphError(fmt::format("{}: field 'outputs' has {} tensors, 'needs_grad' asks for {}", op_label(op),
                                 op.outputs.size(), out));
  }
}

// support::checked_sum with its message formatted only on overflow: validation runs for every plan a
// search makes, and formatting it for every tensor and op took as long as the checks.
template <class What>
int64_t sum_or_throw(int64_t a, int64_t b, What what) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) support::checked_sum(a, b, what());  // throws, naming it
  return out;
}

}  // namespace

void link(Graph& graph) {
  for (Tensor& t : graph.tensors) {
    t.producer = kNoId;
    t.consumers.clear();
  }
  const auto n = static_cast<TensorId>(graph.tensors.size());
  for (const Op& op : graph.ops) {
    for (TensorId id : op.outputs) {
      if (id < 0 || id >= n) {
        throw GraphError(
            fmt::format("{}: field 'outputs' refers to tensor {} which does not exist ({} tensors)",
                        op_label(op), id, n));
      }
      Tensor& t = graph.tensors[static_cast<size_t>(id)];
      if (t.producer != kNoId) {
        throw GraphError(
            fmt::format("{}: field 'producer' is both op {} and op {}", tensor_label(t), t.producer, op.id));
      }
      t.producer = op.id;
    }
    for (TensorId id : op.inputs) {
      if (id < 0 || id >= n) {
        throw GraphError(fmt::format(
            "{}: field 'inputs' refers to tensor {} which does not exist ({} tensors)", op_label(op), id, n));
      }
      auto& consumers = graph.tensors[static_cast<size_t>(id)].consumers;
      if (consumers.empty() || consumers.back() != op.id) consumers.push_back(op.id);
    }
  }
}

void validate(const Graph& g) {
  if (g.width < 1)
    throw GraphError(fmt::format("graph '{}': field 'width' = {} must be >= 1", g.name, g.width));
  // Every tensor at most 1 PiB and all of them together within 64 bits, so that any sum of their
  // sizes (peaks, residency) fits; likewise every op's FLOPs and their total.
  int64_t total_bytes = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    check_tensor(g.tensors[i], i);
    total_bytes = sum_or_throw(total_bytes, g.tensors[i].bytes,
                               [&] { return fmt::format("graph '{}': total tensor bytes", g.name); });
  }
  int64_t total_flops = 0;
  for (const Op& op : g.ops) {
    if (op.flops > 0) {
      total_flops =
          sum_or_throw(total_flops, op.flops, [&] { return fmt::format("graph '{}': total FLOPs", g.name); });
    }
  }

  std::vector<OpId> producer(g.tensors.size(), kNoId);
  std::vector<std::vector<OpId>> consumers(g.tensors.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.id != static_cast<OpId>(i)) {
      throw GraphError(fmt::format("op at position {} has field 'id' = {}, expected {}", i, op.id, i));
    }
    if (op.name.empty()) throw GraphError(fmt::format("op {}: field 'name' is empty", op.id));
    check_ids(g, op, op.inputs, "inputs");
    check_ids(g, op, op.outputs, "outputs");
    if (op.phase != kind_phase(op.kind)) {
      throw GraphError(fmt::format("{}: field 'phase' = {} but kind '{}' is a {} kind", op_label(op),
                                   phase_name(op.phase), kind_name(op.kind),
                                   phase_name(kind_phase(op.kind))));
    }
    if (op.flops < 0 || op.bytes_read < 0 || op.bytes_written < 0 || op.workspace_bytes < 0) {
      throw GraphError(
          fmt::format("{}: fields 'flops', 'bytes_read', 'bytes_written', 'workspace_bytes' must be "
                      ">= 0 (got {}, {}, {}, {})",
                      op_label(op), op.flops, op.bytes_read, op.bytes_written, op.workspace_bytes));
    }
    // A workspace is an allocation like a tensor (at most 1 PiB, counted in the graph's total), and an
    // op's traffic is read + written (roofline and wave prices): both must fit 64 bits.
    if (op.workspace_bytes > kMaxTensorBytes) {
      throw GraphError(
          fmt::format("{}: field 'workspace_bytes' = {} exceeds {} (1 PiB), more than any device holds",
                      op_label(op), op.workspace_bytes, kMaxTensorBytes));
    }
    total_bytes = sum_or_throw(total_bytes, op.workspace_bytes, [&] {
      return fmt::format("graph '{}': total tensor and workspace bytes", g.name);
    });
    sum_or_throw(op.bytes_read, op.bytes_written,
                 [&] { return fmt::format("{}: bytes_read + bytes_written", op_label(op)); });
    if (op.width < 1)
      throw GraphError(fmt::format("{}: field 'width' = {} must be >= 1", op_label(op), op.width));
    if (op.forward_of != kNoId) {
      if (op.forward_of < 0 || op.forward_of >= op.id) {
        throw GraphError(
            fmt::format("{}: field 'forward_of' = {} must name an earlier op", op_label(op), op.forward_of));
      }
      if (g.ops[static_cast<size_t>(op.forward_of)].phase != Phase::forward) {
        throw GraphError(
            fmt::format("{}: field 'forward_of' = {} is not a forward op", op_label(op), op.forward_of));
      }
    }
    // Program order is topological: every input is produced by an earlier op (or is a leaf).
    for (TensorId id : op.inputs) {
      const Tensor& t = g.tensor(id);
      if (t.producer == op.id) {
        throw GraphError(fmt::format("{}: reads its own output {} (cycle)", op_label(op), tensor_label(t)));
      }
      if (t.producer != kNoId && producer[static_cast<size_t>(id)] == kNoId) {
        throw GraphError(
            fmt::format("{}: input {} is produced by op {}, later in program order (cycle or not "
                        "topologically ordered)",
                        op_label(op), tensor_label(t), t.producer));
      }
    }
    for (TensorId id : op.inputs) {
      auto& readers = consumers[static_cast<size_t>(id)];
      if (readers.empty() || readers.back() != op.id) readers.push_back(op.id);
    }
    for (TensorId id : op.outputs) {
      const Tensor& t = g.tensor(id);
      if (producer[static_cast<size_t>(id)] != kNoId) {
        throw GraphError(fmt::format("{}: output {} is already produced by op {}", op_label(op),
                                     tensor_label(t), producer[static_cast<size_t>(id)]));
      }
      if (t.role == TensorRole::weight || t.role == TensorRole::optimizer_state ||
          t.role == TensorRole::input || t.role == TensorRole::label) {
        throw GraphError(fmt::format("{}: output {} has role {}, which no op may produce", op_label(op),
                                     tensor_label(t), role_name(t.role)));
      }
      producer[static_cast<size_t>(id)] = op.id;
    }
    check_shapes_against_rules(g, op);
    if (is_optimizer_update(op.kind)) check_optimizer_attributes(op);
  }
  // Stored producer / consumer links must agree with the ops (a hand-edited file may not).
  for (const Tensor& t : g.tensors) {
    if (t.producer != producer[static_cast<size_t>(t.id)]) {
      throw GraphError(fmt::format("{}: field 'producer' = {} but op {} produces it", tensor_label(t),
                                   t.producer, producer[static_cast<size_t>(t.id)]));
    }
    if (t.producer == kNoId &&
        (t.role == TensorRole::activation || t.role == TensorRole::temporary || t.role == TensorRole::loss)) {
      throw GraphError(fmt::format("{}: role {} needs a producer op", tensor_label(t), role_name(t.role)));
    }
    if (t.consumers != consumers[static_cast<size_t>(t.id)]) {
      throw GraphError(fmt::format(
          "{}: field 'consumers' does not list exactly the ops that read it, in order", tensor_label(t)));
    }
  }
}

void check_forward_flops(const Graph& g) {
  for (const Op& op : g.ops) {
    const KindRules* rules = kind_rules(op.kind);
    if (rules == nullptr || op.phase != Phase::forward) continue;
    const int64_t flops = infer_forward(g, op, *rules).flops;
    if (op.flops != flops) {
      throw GraphError(fmt::format("{}: field 'flops' = {}, kind '{}' on these inputs does {}", op_label(op),
                                   op.flops, kind_name(op.kind), flops));
    }
  }
}

int64_t parameter_count(const Graph& g) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::weight) n += element_count(t.shape);
  }
  return n;
}

int64_t parameter_bytes(const Graph& g) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::weight) n += t.bytes;
  }
  return n;
}

int64_t flops_in_phase(const Graph& g, Phase phase) {
  int64_t n = 0;
  for (const Op& op : g.ops) {
    if (op.phase == phase) n += op.flops;
  }
  return n;
}

int64_t activation_bytes(const Graph& g) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors) {
    if (t.producer != kNoId && g.op(t.producer).phase == Phase::forward) n += t.bytes;
  }
  return n;
}

int64_t saved_for_backward_bytes(const Graph& g) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors) {
    if (t.producer == kNoId || g.op(t.producer).phase != Phase::forward) continue;
    const bool read_in_backward = std::any_of(t.consumers.begin(), t.consumers.end(),
                                              [&](OpId c) { return g.op(c).phase == Phase::backward; });
    if (read_in_backward) n += t.bytes;
  }
  return n;
}

TensorId add_byte_tensor(Graph& graph, std::string name, int64_t bytes, TensorRole role) {
  Tensor t;
  t.id = static_cast<TensorId>(graph.tensors.size());
  t.name = std::move(name);
  t.shape = {bytes};
  t.dtype = DType::u8;
  t.bytes = bytes;
  t.role = role;
  graph.tensors.push_back(std::move(t));
  return graph.tensors.back().id;
}

}  // namespace mutwo::ir

#include "io/kineto/importer.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::io::kineto {

namespace {

// Element sizes of PyTorch's scalar type names as "Input type" spells them; the DType where mutwo
// has one is not needed: bytes are all the importer keeps.
std::optional<int64_t> element_bytes(std::string_view type) {
  // clang-format off
  static const std::map<std::string_view, int64_t, std::less<>> kSizes{
      {"float", 4}, {"double", 8}, {"c10::Half", 2}, {"c10::BFloat16", 2}, {"long int", 8}, {"long", 8},
      {"int64_t", 8}, {"int", 4}, {"short int", 2}, {"short", 2}, {"signed char", 1}, {"unsigned char", 1},
      {"bool", 1}, {"c10::complex<c10::Half>", 4}, {"c10::complex<float>", 8}, {"c10::complex<double>", 16},
      {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1}, {"c10::Float8_e4m3fnuz", 1},
      {"c10::Float8_e5m2fnuz", 1}, {"c10::qint8", 1}, {"c10::quint8", 1}, {"c10::qint32", 4},
      {"c10::quint4x2", 1}};
  // clang-format on
  if (auto it = kSizes.find(type); it != kSizes.end()) return it->second;
  return std::nullopt;
}

// "Input type" values that are not tensors.
bool is_non_tensor_type(std::string_view type) {
  return type.empty() || type == "Scalar" || type == "ScalarList" || type == "None" ||
         type == "GenericList" || type == "TensorList";
}

}  // namespace

std::optional<int64_t> Importer::arg(const Event& e, const char* key) const {
  return event_int_arg(e, key);
}

bool Importer::is_backward_event(const Event& e) const {
  return starts_with(e.name, kBackwardPrefix) || arg(e, "Fwd thread id").value_or(0) > 0;
}

void Importer::nest() {
  std::map<size_t, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < ev_->size(); ++i) {
    if (ev(i).kind == Kind::cpu_op) by_thread[ev(i).thread].push_back(i);
  }
  if (by_thread.empty()) fail("no CPU op events (\"X\" events of category cpu_op) to import");
  root_.assign(ev_->size(), SIZE_MAX);
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      if (ev(a).start_ns != ev(b).start_ns) return ev(a).start_ns < ev(b).start_ns;
      if (ev(a).end_ns != ev(b).end_ns) return ev(a).end_ns > ev(b).end_ns;
      return a < b;
    });
    std::vector<size_t> stack;
    for (size_t i : list) {
      while (!stack.empty() && ev(i).end_ns > ev(stack.back()).end_ns + tol_ns_) stack.pop_back();
      root_[i] = stack.empty() ? i : root_[stack.back()];
      if (stack.empty()) roots_by_thread_[thread].push_back(i);
      stack.push_back(i);
    }
  }
}

std::optional<size_t> Importer::root_at(size_t thread, int64_t t) const {
  auto it = roots_by_thread_.find(thread);
  if (it == roots_by_thread_.end()) return std::nullopt;
  const auto& roots = it->second;
  auto pos = std::upper_bound(roots.begin(), roots.end(), t + tol_ns_,
                              [&](int64_t time, size_t r) { return time < ev(r).start_ns; });
  if (pos == roots.begin()) return std::nullopt;
  const size_t r = *std::prev(pos);
  if (t > ev(r).end_ns + tol_ns_) return std::nullopt;
  return r;
}

void Importer::choose_step() {
  std::vector<size_t> steps;
  for (size_t i = 0; i < ev_->size(); ++i) {
    if (ev(i).kind == Kind::step) steps.push_back(i);
  }
  std::sort(steps.begin(), steps.end(), [&](size_t a, size_t b) { return ev(a).start_ns < ev(b).start_ns; });
  std::optional<size_t> complete, any;
  for (size_t s : steps) {
    window_start_ = ev(s).start_ns;
    window_end_ = ev(s).end_ns;
    bool has_op = false, has_backward = false;
    for (const auto& [thread, roots] : roots_by_thread_) {
      for (size_t r : roots) {
        if (!in_window(ev(r).start_ns)) continue;
        has_op = true;
        has_backward = has_backward || is_backward_event(ev(r));
      }
    }
    if (has_op) any = s;
    if (has_backward) complete = s;
  }
  if (complete || any) {
    const size_t s = complete ? *complete : *any;
    window_start_ = ev(s).start_ns;
    window_end_ = ev(s).end_ns;
    step_name_ = ev(s).name;
    warn(fmt::format("imported {} ({:.3f} ms), the last of {} ProfilerStep annotations {}", step_name_,
                     static_cast<double>(window_end_ - window_start_) / 1e6, steps.size(),
                     complete ? "that holds backward ops"
                              : "with CPU ops: none holds backward ops, so this step may be incomplete"));
    return;
  }
  window_start_ = std::numeric_limits<int64_t>::min() / 2;
  window_end_ = std::numeric_limits<int64_t>::max() / 2;
  step_name_ = "whole trace";
  whole_trace_ = true;
  warn(steps.empty()
           ? "no ProfilerStep#N annotation: the whole trace is imported as one step"
           : "no ProfilerStep#N annotation holds a CPU op: the whole trace is imported as one step");
}

void Importer::build_nodes() {
  std::vector<size_t> roots;
  for (const auto& [thread, list] : roots_by_thread_) {
    for (size_t r : list) {
      if (in_window(ev(r).start_ns)) roots.push_back(r);
    }
  }
  std::sort(roots.begin(), roots.end(), [&](size_t a, size_t b) {
    if (ev(a).start_ns != ev(b).start_ns) return ev(a).start_ns < ev(b).start_ns;
    if (ev(a).thread != ev(b).thread) return ev(a).thread < ev(b).thread;
    return a < b;
  });
  int64_t first_bwd = std::numeric_limits<int64_t>::max(), last_bwd = std::numeric_limits<int64_t>::min();
  for (size_t r : roots) {
    if (is_backward_event(ev(r))) {
      first_bwd = std::min(first_bwd, ev(r).start_ns);
      last_bwd = std::max(last_bwd, ev(r).end_ns);
    }
  }
  std::map<std::string, int> unknown_optimizers;
  int64_t list_inputs = 0;
  std::map<std::string, int> unknown_types;
  bool any_dims = false;
  for (size_t r : roots) {
    Node n;
    n.event = r;
    const Event& e = ev(r);
    op_of_root_[r] = static_cast<ir::OpId>(nodes_.size());
    if (starts_with(e.name, kOptimizerStepPrefix)) {
      const std::string cls =
          e.name.substr(kOptimizerStepPrefix.size(),
                        e.name.find('.', kOptimizerStepPrefix.size()) - kOptimizerStepPrefix.size());
      const std::optional<ir::OpKind> kind = cls == "SGD"     ? std::optional(ir::OpKind::sgd_step)
                                             : cls == "Adam"  ? std::optional(ir::OpKind::adam_step)
                                             : cls == "AdamW" ? std::optional(ir::OpKind::adamw_step)
                                                              : std::nullopt;
      if (kind) {
        n.kind = *kind;
        n.phase = ir::Phase::optimizer;
      } else {
        ++unknown_optimizers[cls];
      }
    } else if (is_backward_event(e) || (e.start_ns >= first_bwd && e.start_ns <= last_bwd)) {
      n.kind = ir::OpKind::opaque_backward;
      n.phase = ir::Phase::backward;
    }
    any_dims = read_input_dims(e, n, list_inputs, unknown_types) || any_dims;
    nodes_.push_back(std::move(n));
  }
  for (const auto& [cls, count] : unknown_optimizers) {
    warn(fmt::format("optimizer '{}' has no mutwo kind: its {} step op(s) are imported as opaque forward ops",
                     cls, count));
  }
  if (!any_dims) {
    warn(
        "no op has \"Input Dims\" (record_shapes=False or a legacy trace): input sizes are unknown, "
        "every op's bytes_read is 0");
  }
  if (list_inputs > 0) {
    warn(fmt::format("{} tensor-list inputs have no element type in \"Input type\": left out of bytes_read",
                     list_inputs));
  }
  if (!unknown_types.empty()) {
    std::string names;
    for (const auto& [type, count] : unknown_types)
      names += fmt::format("{}'{}' ({}x)", names.empty() ? "" : ", ", type, count);
    warn(fmt::format("inputs of unknown \"Input type\" are left out of bytes_read: {}", names));
  }
}

bool Importer::read_input_dims(const Event& e, Node& n, int64_t& list_inputs,
                               std::map<std::string, int>& unknown) const {
  if (e.args == nullptr || !e.args->contains("Input Dims")) return false;
  const Json& dims = (*e.args)["Input Dims"];
  auto bad = [&](const std::string& what) {
    throw FormatError(fmt::format("{}: event {} ('{}'): {}", source_, e.index, e.name, what));
  };
  if (!dims.is_array()) bad(fmt::format("field 'args.Input Dims' = {}, expected a list", dims.dump()));
  if (!e.args->contains("Input type"))
    bad("field 'args.Input type' is missing (it gives 'Input Dims' their types)");
  const Json& types = (*e.args)["Input type"];
  if (!types.is_array() || types.size() != dims.size()) {
    bad(fmt::format("field 'args.Input type' = {}, expected a list of {} type names", types.dump(),
                    dims.size()));
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    if (!types[k].is_string()) {
      bad(fmt::format("field 'args.Input type'[{}] = {}, expected a string", k, types[k].dump()));
    }
    const std::string type = types[k].get<std::string>();
    const std::optional<int64_t> size = element_bytes(type);
    if (!size) {
      if (type == "TensorList" && dims[k].is_array() && !dims[k].empty()) ++list_inputs;
      if (!is_non_tensor_type(type)) ++unknown[type];
      continue;
    }
    if (!dims[k].is_array())
      bad(fmt::format("field 'args.Input Dims'[{}] = {}, expected a list", k, dims[k].dump()));
    int64_t elements = 1;
    std::string shape;
    for (const Json& d : dims[k]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        bad(fmt::format("field 'args.Input Dims'[{}] = {}, expected sizes >= 0", k, dims[k].dump()));
      }
      elements *= d.get<int64_t>();
      shape += fmt::format("{}{}", shape.empty() ? "" : ", ", d.get<int64_t>());
    }
    n.bytes_read += elements * *size;
    n.input_shapes += fmt::format("{}{}[{}]", n.input_shapes.empty() ? "" : ", ", type, shape);
  }
  return true;
}

void Importer::pair_backward() {
  // Sequence number -> forward CPU events (any depth) inside forward graph ops, by start.
  std::map<int64_t, std::vector<size_t>> forward_by_seq;
  for (size_t i = 0; i < ev_->size(); ++i) {
    const Event& e = ev(i);
    if (e.kind != Kind::cpu_op || root_[i] == SIZE_MAX || arg(e, "Fwd thread id").value_or(0) > 0) continue;
    const auto seq = arg(e, "Sequence number");
    auto op = op_of_root_.find(root_[i]);
    if (!seq || *seq < 0 || op == op_of_root_.end()) continue;
    if (nodes_[static_cast<size_t>(op->second)].phase != ir::Phase::forward) continue;
    forward_by_seq[*seq].push_back(i);
  }
  int64_t backward = 0, paired = 0, no_number = 0, unmatched = 0, ambiguous = 0;
  for (size_t k = 0; k < nodes_.size(); ++k) {
    Node& n = nodes_[k];
    if (n.phase != ir::Phase::backward) continue;
    ++backward;
    const auto seq = arg(ev(n.event), "Sequence number");
    if (!seq || *seq < 0) {
      ++no_number;
      continue;
    }
    auto it = forward_by_seq.find(*seq);
    std::optional<size_t> best;
    bool several_threads = false;
    if (it != forward_by_seq.end()) {
      for (size_t f : it->second) {
        if (ev(f).start_ns >= ev(n.event).start_ns) continue;
        if (best && ev(*best).thread != ev(f).thread) several_threads = true;
        if (!best || ev(f).start_ns >= ev(*best).start_ns) best = f;
      }
    }
    const ir::OpId op = best ? op_of_root_.at(root_[*best]) : ir::kNoId;
    if (several_threads) {
      ++ambiguous;
    } else if (op == ir::kNoId || op >= static_cast<ir::OpId>(k)) {
      ++unmatched;
    } else {
      n.forward_of = op;
      ++paired;
    }
  }
  if (backward == 0) {
    warn("no backward ops in the imported step");
    return;
  }
  warn(
      fmt::format("{} of {} backward ops paired to their forward op by \"Sequence number\" (forward_of); "
                  "{} have no sequence number (AccumulateGrad, legacy traces), {} have no forward op with it "
                  "in the step, {} are ambiguous (the number on several threads)",
                  paired, backward, no_number, unmatched, ambiguous));
}

}  // namespace mutwo::io::kineto

#include "exec/kernel.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <mutex>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exec/torch_types.hpp"
#include "ir/needs_grad.hpp"
#include "support/error.hpp"

namespace mutwo::exec {
namespace {

// An input index past the op's list: run_kernel names the op.
struct MissingInput : Error {
  using Error::Error;
};

}  // namespace

const at::Tensor& KernelInputs::operator[](size_t i) const {
  if (i >= tensors_.size()) {
    throw MissingInput(fmt::format("its kind reads input {}, and it lists {} input{}", i, tensors_.size(),
                                   tensors_.size() == 1 ? "" : "s"));
  }
  return tensors_[i];
}

bool KernelContext::needs_grad(size_t i) const {
  return ir::needs_grad(op, i);
}

double KernelContext::attr_double(std::string_view key, double fallback) const {
  return ir::attr_double_or(op.attrs, key, fallback, op.name);
}

int64_t KernelContext::attr_int(std::string_view key, int64_t fallback) const {
  return ir::attr_int_or(op.attrs, key, fallback, op.name);
}

at::Generator KernelContext::generator(int32_t model_in_op, uint64_t salt) const {
  const at::Device device = inputs.empty() ? at::Device(at::kCPU) : inputs[0].device();
  if (runtime.capturing) return at::globalContext().defaultGenerator(device);
  const uint64_t model = static_cast<uint64_t>(runtime.first_model + model_in_op);
  return seeded_generator(device,
                          mix_seed(mix_seed(runtime.seed, model), mix_seed(fnv1a(runtime.base_name), salt)));
}

at::Generator seeded_generator(const at::Device& device, uint64_t seed) {
  // A CPU generator is made fresh: LibTorch 1.13's GeneratorImpl::clone() keeps one reference too
  // many to the clone (a leak LeakSanitizer reports, scripts/sanitize.sh); other devices clone the
  // default generator (their Impl types are in CUDA headers).
  if (device.is_cpu()) return at::detail::createCPUGenerator(seed);
  at::Generator base = at::globalContext().defaultGenerator(device);
  at::Generator gen;
  {
    std::lock_guard<std::mutex> lock(base.mutex());
    gen = base.clone();
  }
  gen.set_current_seed(seed);
  return gen;
}

at::TensorOptions KernelContext::options(size_t i) const {
  return inputs[i].options();
}

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ull + (b << 6) + (b >> 2) + b * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

const KernelTable& builtin_kernels() {
  static const KernelTable table = [] {
    KernelTable t{};
    register_dense_kernels(t);
    register_conv_kernels(t);
    register_norm_kernels(t);
    register_elementwise_kernels(t);
    register_data_kernels(t);
    register_recsys_kernels(t);
    register_loss_kernels(t);
    register_optimizer_kernels(t);
    register_lean_kernels(t);  // after the plain kernels it reuses
    return t;
  }();
  return table;
}

std::vector<at::Tensor> run_kernel(const KernelContext& context) {
  const ir::Op& op = context.op;
  const KernelFn fn = builtin_kernels()[static_cast<size_t>(op.kind)];
  if (fn == nullptr) {
    throw Error(
        fmt::format("op {} '{}' has kind '{}', which mutwo cannot execute (no kernel: an imported "
                    "op of unknown semantics)",
                    op.id, op.name, ir::kind_name(op.kind)));
  }
  // A graph LibTorch cannot run as written (a hand-edited schedule: too few inputs, a dropout
  // probability of 2) is the op's error, named; running out of memory stays the caller's to record.
  std::vector<at::Tensor> outputs;
  const auto refused = [&](std::string_view why) {
    return Error(fmt::format("op {} '{}' ({}): {}", op.id, op.name, ir::kind_name(op.kind), why));
  };
  try {
    outputs = fn(context);
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::Error& e) {
    throw refused(fmt::format("LibTorch refused it: {}", e.what_without_backtrace()));
  } catch (const MissingInput& e) {
    throw refused(e.what());
  }
  if (outputs.size() != op.outputs.size()) {
    throw Error(fmt::format("kernel of op {} '{}' ({}) returned {} outputs, the graph lists {}", op.id,
                            op.name, ir::kind_name(op.kind), outputs.size(), op.outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ir::Tensor& ir = context.output_ir(i);
    at::Tensor& out = outputs[i];
    const c10::ScalarType want = scalar_type(ir.dtype);
    // ATen keeps norm statistics in the accumulation type; the graph states the stored type.
    if (out.scalar_type() != want) out = out.to(want);
    if (out.sizes() != at::IntArrayRef(ir.shape)) {
      throw Error(fmt::format("kernel of op {} '{}' ({}) made output {} '{}' of shape {}, the graph says {}",
                              op.id, op.name, ir::kind_name(op.kind), i, ir.name, fmt::join(out.sizes(), ","),
                              ir::shape_string(ir.shape)));
    }
    // Every output owns its memory, as the memory model assumes: views and aliases of an input
    // (reshape, select, a gradient passed through) are copied.
    bool aliased = !out.is_contiguous();
    for (const at::Tensor& in : context.inputs) aliased = aliased || (in.defined() && out.is_alias_of(in));
    for (size_t j = 0; j < i && !aliased; ++j) aliased = out.is_alias_of(outputs[j]);
    if (aliased) out = out.clone(at::MemoryFormat::Contiguous);
  }
  return outputs;
}

}  // namespace mutwo::exec

#pragma once
// The optimizers a training step can end with (autodiff.hpp) and their names on the command line.
// The fused forms are torch.optim.Adam / AdamW(fused=True) (PyTorch 2.0+, `_fused_adam_`; apex's
// FusedAdam runs the same arithmetic): one multi-tensor kernel reads param, grad and both states and
// writes param and states, holding no weight-sized temporary; GradScaler hands it the scale, so no
// separate unscale runs (torch/amp/grad_scaler.py, `_step_supports_amp_scaling`).
// bert-adam is NVIDIA's BertAdam (DeepLearningExamples, PyTorch/LanguageModeling/BERT/optimization.py,
// which run_squad.py uses when not in fp16): AdamW's update without bias correction, computed by a
// Python loop over the parameters, one tensor op per statement, after the loop's `.item()` on the
// global gradient norm has made the host wait for backward (ir/optimizer_kernels.hpp, and the host
// figure costmodel/device_catalog.cpp measures for a Python-issued op).
#include <cstdint>
#include <string_view>

namespace mutwo::transforms {

enum class OptimizerKind : uint8_t { sgd, adam, adamw, adam_fused, adamw_fused, bert_adam };
// "sgd", "adam", "adamw", "adam-fused", "adamw-fused", "bert-adam"
std::string_view optimizer_name(OptimizerKind kind);
OptimizerKind parse_optimizer(std::string_view name);  // throws UnknownNameError naming the valid ones
// "sgd, adam, adamw, adam-fused, adamw-fused, bert-adam", for help texts.
std::string_view optimizer_names();
bool is_fused(OptimizerKind kind);
// The update a kind computes: adam for adam and adam-fused, adamw for adamw, adamw-fused and bert-adam.
OptimizerKind unfused(OptimizerKind kind);

}  // namespace mutwo::transforms

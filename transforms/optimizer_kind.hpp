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
// figure costmodel/device_catalog.cpp measures for a Python-issued op). bert-adam-hf is the BertAdam
// of HuggingFace's pytorch-pretrained-bert (2018-2019), which NVIDIA's 2019 BERT copied: the same
// update, but each parameter's gradient is clipped on its own by torch's clip_grad_norm_, whose
// `.item()` makes the host wait for the GPU once per weight, and clipping changes the update.
#include <cstdint>
#include <string_view>

#include "ir/attributes.hpp"

namespace mutwo::transforms {

enum class OptimizerKind : uint8_t { sgd, adam, adamw, adam_fused, adamw_fused, bert_adam, bert_adam_hf };
// "sgd", "adam", "adamw", "adam-fused", "adamw-fused", "bert-adam", "bert-adam-hf"
std::string_view optimizer_name(OptimizerKind kind);
OptimizerKind parse_optimizer(std::string_view name);  // throws UnknownNameError naming the valid ones
// The names above, ", "-separated, for help texts.
std::string_view optimizer_names();
bool is_fused(OptimizerKind kind);
// The attributes a kind sets on each update op besides its hyper-parameters (ir/optimizer_kernels.hpp):
// fused = 1 for the fused kinds; bert_adam = 1 for bert-adam, 2 and max_grad_norm = 1 (its default)
// for bert-adam-hf. With `first`, the first update in weight order: host_sync = 1 where the host
// waits on the GPU after issuing it (sim/host_plan.hpp): bert-adam's first update stands for the
// wait before its loop, and every bert-adam-hf update waits in its own clip_grad_norm_.
void add_kind_attributes(OptimizerKind kind, bool first, ir::Attributes& attrs);
// The update a kind computes: adam for adam and adam-fused, adamw for adamw, adamw-fused and the
// BertAdams (bert-adam, bert-adam-hf).
OptimizerKind unfused(OptimizerKind kind);

}  // namespace mutwo::transforms

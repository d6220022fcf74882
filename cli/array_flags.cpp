#include "cli/array_flags.hpp"
#include "cli/number_flags.hpp"

#include "api/values.hpp"
#include "cli/exec_flags.hpp"
#include "experiments/run_pipeline.hpp"

#include "cli/table.hpp"
#include "io/schedule_json.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::cli {

using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

Precision precision_flag(const std::string& value) {
  return api::precision_value(value);
}

std::string lean_ops_help() {
  return "Tempo's memory-lean layers (Andoorveedu et al., NeurIPS 2022): none, tempo (in-place GELU, in-place "
         "LayerNorm, attention dropout recomputed), or a comma-separated list of gelu, layernorm, attention";
}

std::string precision_help() {
  return "Training precision as PyTorch runs it: fp32 (TF32 for cuDNN conv only, PyTorch's default), tf32 "
         "(matmul too), amp-fp16 / amp-bf16 (torch.autocast; fp32 master weights; GradScaler for fp16), bf16 "
         "(the whole model in bf16)";
}

std::string model_names_help() {
  return joined(builtin_models().names()) + "; test-scale: " + joined(mini_models().names());
}

void add_array_flags(CLI::App* cmd, ArrayFlags& flags, const std::string& schedule_help) {
  flags.model_option =
      cmd->add_option("--model,-m", flags.model, "Model of the array: " + model_names_help());
  flags.schedule_option = cmd->add_option("--schedule", flags.schedule, schedule_help);
  flags.model_option->excludes(flags.schedule_option);
  // policies::kMaxArrayModels, as search's name:count: refused before a graph is built.
  CLI::Option* models = cmd->add_option("--models,-k", flags.models, "Models in the array (1 to 1024)")
                            ->check(CLI::Range(1, policies::kMaxArrayModels))
                            ->capture_default_str();
  CLI::Option* partition =
      cmd->add_option("--partition", flags.partition,
                      "Sub-array sizes, comma-separated, adding up to --models (default: all fused in one)")
          ->delimiter(',');
  CLI::Option* batch =
      cmd->add_option("--batch", flags.batch_size, "Batch size per model (default: the model's)")
          ->check(kPositiveNumber);
  CLI::Option* seq =
      cmd->add_option("--seq-len", flags.seq_len, "Sequence length (transformers)")->check(kPositiveNumber);
  CLI::Option* image =
      cmd->add_option("--image-size", flags.image_size, "Image side in pixels (vision models)")
          ->check(kPositiveNumber);
  CLI::Option* dtype =
      cmd->add_option("--dtype", flags.dtype, "Element type: fp32, bf16, fp16, fp64")->capture_default_str();
  CLI::Option* precision =
      cmd->add_option("--precision", flags.precision, precision_help())->capture_default_str();
  CLI::Option* lean = cmd->add_option("--lean-ops", flags.lean_ops, lean_ops_help())->capture_default_str();
  CLI::Option* optimizer = cmd->add_option("--optimizer", flags.optimizer,
                                           "Optimizer: " + std::string(transforms::optimizer_names()))
                               ->capture_default_str();
  CLI::Option* lr =
      cmd->add_option("--lr", flags.lr, "Learning rate, or one per model, comma-separated (HFTA sweeps)")
          ->delimiter(',');
  for (CLI::Option* o : {models, partition, batch, seq, image, dtype, precision, lean, optimizer, lr}) {
    o->excludes(flags.schedule_option);
  }
}

void require_model_or_schedule(const ArrayFlags& flags, std::string_view command) {
  if (flags.model_option->count() == 0 && flags.schedule_option->count() == 0) {
    throw CLI::RequiredError(std::string(command) + ": one of --model or --schedule");
  }
}

Schedule plain_schedule(const ArrayFlags& flags) {
  return experiments::plain_schedule(schedule_source(flags));
}

}  // namespace mutwo::cli

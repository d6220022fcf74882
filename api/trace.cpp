#include "api/trace.hpp"

#include <fmt/format.h>

#include "api/values.hpp"
#include "ir/dtype.hpp"
#include "policies/model_array.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::api {

ir::Graph training_step(const TraceRequest& request) {
  if (request.models < 1 || request.models > policies::kMaxArrayModels) {
    throw Error(fmt::format("models = {}: must be from 1 to {}", request.models, policies::kMaxArrayModels));
  }
  zoo::ModelConfig config;
  config.batch_size = request.batch_size;
  config.seq_len = request.seq_len;
  config.image_size = request.image_size;
  config.dtype = ir::parse_dtype(request.dtype);
  config.precision = precision_value(request.precision);
  config.width = request.models;
  transforms::OptimizerConfig optimizer;
  optimizer.kind = transforms::parse_optimizer(request.optimizer);
  if (!request.lr.empty()) optimizer.lr = request.lr;
  return transforms::build_training_step(zoo::build_model(request.model, config), optimizer);
}

}  // namespace mutwo::api

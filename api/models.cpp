#include "api/models.hpp"

#include <fmt/format.h>

#include "ir/dtype.hpp"
#include "ir/graph.hpp"
#include "support/error.hpp"

namespace mutwo::api {

std::vector<ModelRow> list_models(const ModelsRequest& request) {
  // 0 asks for each model's own batch; a negative one asks for nothing (`mutwo models --batch`
  // refuses it as not positive).
  if (request.batch_size < 0) {
    throw Error(fmt::format("batch = {}: must be >= 1, or 0 for each model's own", request.batch_size));
  }
  const ir::DType dtype = ir::parse_dtype(request.dtype);
  std::vector<ModelRow> rows;
  const zoo::ModelRegistry& registry = request.mini ? zoo::mini_models() : zoo::builtin_models();
  for (const zoo::ModelInfo& info : registry.models()) {
    ModelRow row;
    row.info = &info;
    row.config.batch_size = request.batch_size > 0 ? request.batch_size : info.default_batch_size;
    row.config.seq_len = info.default_seq_len;
    row.config.image_size = info.default_image_size;
    row.config.dtype = dtype;
    ir::Graph g;
    try {
      g = zoo::build_model(info.name, row.config);
    } catch (const Error& e) {
      throw Error(fmt::format("model '{}' does not build: {}", info.name, e.what()));
    }
    row.parameters = ir::parameter_count(g);
    row.parameter_bytes = ir::parameter_bytes(g);
    row.forward_flops = ir::flops_in_phase(g, ir::Phase::forward);
    row.activation_bytes = ir::activation_bytes(g);
    rows.push_back(row);
  }
  return rows;
}

nlohmann::ordered_json models_json(const std::vector<ModelRow>& rows, const ModelsRequest& request) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ModelRow& r : rows) {
    nlohmann::ordered_json j;
    j["name"] = r.info->name;
    j["family"] = r.info->family;
    j["description"] = r.info->description;
    j["reference"] = r.info->reference;
    j["dtype"] = request.dtype;
    j["batch_size"] = r.config.batch_size;
    j["default_batch_size"] = r.info->default_batch_size;
    j["seq_len"] = r.config.seq_len;
    j["image_size"] = r.config.image_size;
    j["parameters"] = r.parameters;
    j["parameter_bytes"] = r.parameter_bytes;
    j["forward_flops"] = r.forward_flops;  // the whole batch; divide by batch_size per sample
    j["activation_bytes"] = r.activation_bytes;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace mutwo::api

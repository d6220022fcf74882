#pragma once
// A Graph as JSON: the "graph" object that trace and schedule files embed. Built and read as JSON
// values, so a file that embeds a graph never prints it to text and parses it back.
#include <nlohmann/json.hpp>

#include "ir/graph.hpp"

namespace mutwo::io {

// Deterministic: keys in the documented order, tensors and ops in id order. Throws FormatError for
// an attribute JSON cannot hold (NaN, infinity).
nlohmann::ordered_json graph_to_json(const ir::Graph& graph);

// Reads every field (unknown or missing fields, wrong types: FormatError naming the op/tensor and
// the field), then links and validates (GraphError).
ir::Graph graph_from_json(const nlohmann::json& j);

}  // namespace mutwo::io

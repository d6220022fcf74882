#pragma once
// A user's model exported as a mutwo forward graph (scripts/export_model.py: torch.fx with shape
// propagation, a width-1 forward Graph of typed op kinds ending in the loss, "format":
// "mutwo-trace"), taking a zoo model's place wherever a --model name goes: a name that ends in
// ".json" or ".json.gz" is such a file. Its shapes are fixed at export (batch, image or sequence
// size); mutwo's autodiff and optimizer build the training step, horizontal fusion (fusion.hpp)
// fuses k copies, and its FLOPs and bytes are re-derived from the kinds' rules (the file's are not
// trusted).
#include <string_view>

#include "zoo/model_registry.hpp"

namespace mutwo::zoo {

bool is_model_file(std::string_view name);

// The family of every exported model (ModelInfo::family).
inline constexpr std::string_view kExportedModelFamily = "exported";

// Whether a file given as a trace (`mutwo search --trace`) is a model, by content: a mutwo trace
// whose ops are all forward ops (what scripts/export_model.py writes), not a measured training
// step. False for other formats and for files that cannot be read (their importer says why).
bool is_forward_graph_file(const std::string& path);

// The file's model, read once per process: name (the file's stem), family "exported", default batch
// size the exported one; its build checks that the config asks for the exported shapes (batch size
// 0 or the exported one, no sequence length or image size) and fuses config.width copies. Throws
// FormatError / GraphError naming the file for a graph that is not a width-1 forward graph of known
// (not opaque) kinds.
const ModelInfo& exported_model(std::string_view path);

}  // namespace mutwo::zoo

#include "zoo/exported_model.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "io/trace_file.hpp"
#include "io/trace_import.hpp"
#include "ir/op_kind.hpp"
#include "support/error.hpp"
#include "support/file_stamp.hpp"
#include "support/text_file.hpp"
#include "transforms/fusion.hpp"

namespace mutwo::zoo {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

ModelInfo load(const std::string& path) {
  ir::Graph forward;
  try {
    forward = io::trace_from_json(support::read_text_file(path, "model file")).graph;  // .json.gz too
  } catch (const Error& e) {
    throw FormatError(fmt::format("model file '{}': {}", path, e.what()));
  }
  for (const ir::Op& op : forward.ops) {
    if (op.phase != ir::Phase::forward || ir::kind_phase(op.kind) != ir::Phase::forward) {
      throw GraphError(
          fmt::format("model file '{}': op {} '{}' is a {} op; an exported model is its forward graph "
                      "(mutwo builds backward and optimizer)",
                      path, op.id, op.name, ir::phase_name(op.phase)));
    }
  }
  // Re-derived through the kinds' shape inference, FLOPs and bytes (and checked fusable).
  ir::Graph checked = transforms::horizontal_fuse(forward, 1);
  // Cut as a view and copied once: gcc 12 warns falsely (-Wstringop-overflow) on resizing the copy.
  std::string_view stem_view = std::string_view(path).substr(path.find_last_of('/') + 1);
  for (std::string_view ext : {".json.gz", ".json"}) {
    if (ends_with(stem_view, ext)) {
      stem_view.remove_suffix(ext.size());
      break;
    }
  }
  const std::string stem(stem_view);
  ModelInfo info;
  info.name = stem;
  info.family = std::string(kExportedModelFamily);
  info.description = fmt::format("exported model '{}' ({} forward ops)", forward.name, forward.ops.size());
  info.reference = path;
  info.default_batch_size = checked.batch_size;
  const int64_t batch = checked.batch_size;
  auto graph = std::make_shared<const ir::Graph>(std::move(forward));
  info.build = [graph, path, batch, stem](const ModelConfig& config) {
    if (config.batch_size != batch) {
      throw Error(
          fmt::format("model file '{}' was exported at batch size {}, not {}: export it again with that "
                      "input shape",
                      path, batch, config.batch_size));
    }
    if (config.seq_len != 0 || config.image_size != 0) {
      throw Error(
          fmt::format("model file '{}': its shapes are fixed at export; --seq-len and --image-size do not "
                      "apply",
                      path));
    }
    if (config.dtype != ir::DType::f32) {
      throw Error(
          fmt::format("model file '{}': exported in fp32; use --precision for mixed precision", path));
    }
    ir::Graph g = transforms::horizontal_fuse(*graph, config.width);
    g.name = stem;
    return g;
  };
  return info;
}

}  // namespace

bool is_forward_graph_file(const std::string& path) {
  try {
    const std::string text = support::read_text_file(path, "trace");
    if (io::detect_trace_format(text) != io::TraceFormat::mutwo) return false;
    const ir::Graph g = io::trace_from_json(text).graph;
    return !g.ops.empty() && std::all_of(g.ops.begin(), g.ops.end(),
                                         [](const ir::Op& op) { return op.phase == ir::Phase::forward; });
  } catch (const Error&) {
    return false;
  }
}

bool is_model_file(std::string_view name) {
  return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

const ModelInfo& exported_model(std::string_view path) {
  // Keyed by the file's stamp, not its path: a model exported again to the same path (Model.save in a
  // notebook) was priced as the first one for the rest of the process. Earlier versions stay loaded:
  // callers hold references to them.
  static std::mutex mutex;
  static std::map<support::FileStamp, std::unique_ptr<ModelInfo>> loaded;
  const std::string file(path);
  const std::optional<support::FileStamp> stamp = support::file_stamp(file);
  if (!stamp) {
    load(file);  // reports why the file cannot be read
    throw Error(fmt::format("model file '{}' cannot be read", file));
  }
  const std::lock_guard lock(mutex);
  if (const auto it = loaded.find(*stamp); it != loaded.end()) return *it->second;
  auto info = std::make_unique<ModelInfo>(load(file));
  return *loaded.emplace(*stamp, std::move(info)).first->second;
}

}  // namespace mutwo::zoo

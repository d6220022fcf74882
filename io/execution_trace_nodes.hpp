#pragma once
// The nodes of a PyTorch execution trace (io/execution_trace.hpp) as read from its JSON, each field
// checked as it is read: ids, parents, record-function and sequence ids, and every argument's
// tensors (storage, extent, device), shapes and types.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mutwo::io::et {

struct EtTensor {
  int64_t tensor_id = 0;
  int64_t storage_id = 0;
  int64_t extent_bytes = 0;  // (offset + numel) x element_size: how far into its storage it reaches
  int64_t element_size = 0;
  int64_t numel = 0;
  bool on_gpu = false;  // device "cuda..."
};

struct EtNode {
  int64_t id = 0;
  int64_t parent = 0;
  int64_t rf_id = -1;
  int64_t seq_id = -1;
  std::string name;
  std::vector<EtTensor> inputs;
  std::vector<EtTensor> outputs;
  std::vector<std::vector<int64_t>> input_shapes;  // per argument; empty for a non-tensor one
  std::vector<std::vector<int64_t>> output_shapes;
  std::vector<std::string> input_types;          // per argument ("Tensor(float)", "Int", ...)
  const nlohmann::json* input_values = nullptr;  // the node's "inputs" array (in the document)
  std::vector<size_t> children;                  // indices into the node list, by id
};

// A node and all its callees, in start (node id) order.
std::vector<size_t> subtree(const std::vector<EtNode>& nodes, size_t root);
// Elements of a shape; 0 for one mutwo cannot use (a negative or overflowing dimension).
int64_t elements(const std::vector<int64_t>& shape);
// Every node of the document's "nodes", sorted by id, children not yet linked. Throws FormatError
// "<source>: execution trace node <id>: field '<field>' ..." for a malformed node or a repeated id.
std::vector<EtNode> read_nodes(const nlohmann::json& doc, std::string_view source);

}  // namespace mutwo::io::et

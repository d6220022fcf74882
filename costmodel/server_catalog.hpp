#pragma once
// The server catalog: name -> ServerSpec of the multi-GPU machines mutwo can simulate, with
// sourced numbers (Harmony's 4x GTX 1080 Ti, an 8x A100 PCIe box, DGX A100, an 8x H100 SXM node).
#include <string_view>
#include <vector>

#include "costmodel/server_spec.hpp"
#include "support/registry.hpp"

namespace mutwo::costmodel {

// add validates the spec (validate_server); find throws UnknownNameError "unknown server 'x'; valid: ...".
class ServerCatalog : public Registry<ServerSpec> {
 public:
  ServerCatalog();
  const std::vector<ServerSpec>& servers() const { return entries(); }
};

// Throws Error naming the server and the field: an unknown GPU, gpu_count < 1, a link without a
// positive finite rate, a node whose parent is not an earlier node or whose uplink is out of range,
// a GPU index missing or given twice, NVLink for some GPUs only, a negative latency, host memory
// bandwidth <= 0.
void validate_server(const ServerSpec& server);

void register_builtin_servers(ServerCatalog& catalog);
const ServerCatalog& builtin_servers();
ServerSpec find_server(std::string_view name);  // a copy; throws UnknownNameError

}  // namespace mutwo::costmodel

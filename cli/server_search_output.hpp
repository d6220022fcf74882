#pragma once
// `mutwo search --server`: runs the server search and prints its table or JSON, writes the winner's
// server schedule and each GPU's part.
#include <string>

#include "policies/server_search.hpp"

namespace mutwo::cli {

struct ServerSearchOutput {
  bool json = false;
  std::string timeline;      // --timeline (refused: single-GPU schedules only)
  std::string schedule_out;  // --output: the winner's server schedule
  std::string parts_dir;     // --parts: each GPU's part as a schedule of its own
};

// Throws Error when no placement fits, or an output cannot be written.
void run_server_search_and_print(policies::ServerSearchConfig config, const ServerSearchOutput& opts);

}  // namespace mutwo::cli

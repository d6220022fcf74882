#pragma once
// What an importer of a foreign trace (PyTorch profiler / Kineto, DTR logs, ...) returns: the
// mutwo Trace it built and, in plain sentences, everything the source did not say and the
// importer therefore assumed or left out.
#include <string>
#include <vector>

#include "io/trace_file.hpp"

namespace mutwo::io {

struct TraceImport {
  ir::Trace trace;                    // validated graph; op_duration_ns has one entry per op
  std::vector<std::string> warnings;  // each names the source; the caller decides how to show them
  // An execution trace: no durations until joined with the profiler trace of its step
  // (io/execution_trace_join.hpp).
  bool needs_profile = false;
};

}  // namespace mutwo::io

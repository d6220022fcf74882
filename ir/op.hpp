#pragma once
// An op of the Graph IR: one kernel-level operation in program order.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/attributes.hpp"
#include "ir/op_kind.hpp"
#include "ir/tensor.hpp"

namespace mutwo::ir {

struct Op {
  OpId id = kNoId;
  std::string name;
  OpKind kind = OpKind::opaque;
  Phase phase = Phase::forward;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  Attributes attrs;
  int64_t flops = 0;
  int64_t bytes_read = 0;     // sum of input bytes: what a roofline model streams in
  int64_t bytes_written = 0;  // sum of output bytes (updated state for optimizer ops)
  int64_t workspace_bytes = 0;
  OpId forward_of = kNoId;    // for backward ops: the forward op they differentiate
  bool recomputable = false;  // may be re-run from its inputs to rebuild its outputs
  int32_t width = 1;          // models fused into this op
};

}  // namespace mutwo::ir

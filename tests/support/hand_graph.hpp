#pragma once
// Hand-built test graphs: a tensor of exactly N bytes (u8, shape {N}) appended to a graph, so that
// memory figures in the tests are whole numbers derived by hand.
#include <cstdint>
#include <string>

#include "ir/graph.hpp"

namespace mutwo::test {

inline ir::TensorId add_byte_tensor(ir::Graph& g, const std::string& name, int64_t bytes,
                                    ir::TensorRole role) {
  ir::Tensor t;
  t.id = static_cast<ir::TensorId>(g.tensors.size());
  t.name = name;
  t.shape = {bytes};
  t.dtype = ir::DType::u8;
  t.bytes = bytes;
  t.role = role;
  g.tensors.push_back(t);
  return t.id;
}

}  // namespace mutwo::test

#pragma once
// Hand-built test graphs: a tensor of exactly N bytes (u8, shape {N}) appended to a graph, so that
// memory figures in the tests are whole numbers derived by hand.
#include <cstdint>
#include <string>

#include "profiles/graph.hpp"

namespace mutwo::test {

inline profiles::TensorId add_byte_tensor(profiles::Graph& g, const std::string& name, int64_t bytes,
                                          profiles::TensorRole role) {
  profiles::Tensor t;
  t.id = static_cast<profiles::TensorId>(g.tensors.size());
  t.name = name;
  t.shape = {bytes};
  t.dtype = profiles::DType::u8;
  t.bytes = bytes;
  t.role = role;
  g.tensors.push_back(t);
  return t.id;
}

}  // namespace mutwo::test

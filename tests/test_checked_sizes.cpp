// Sizes computed from input are checked (issue 20, item 3): an overflow is an error naming the
// tensor or op and the field, never a wrapped number; absurd sizes and files are refused early.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <zlib.h>

#include "costmodel/measured_cost_model.hpp"
#include "io/trace_file.hpp"
#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"
#include "support/checked_int.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

using namespace mutwo;
using namespace mutwo::support;
using namespace mutwo::ir;
using namespace mutwo::io;

namespace {

const std::string kMalformed = std::string(MUTWO_TEST_FIXTURES) + "/malformed/";

}  // namespace

TEST_CASE("checked products and sums name what overflowed") {
  CHECK(checked_product({2, 3, 7}, "x") == 42);
  CHECK(checked_product({int64_t{1} << 31, int64_t{1} << 31}, "x") == int64_t{1} << 62);
  CHECK_THROWS_WITH_AS(checked_product({int64_t{1} << 40, int64_t{1} << 40}, "op 'fc': FLOPs"),
                       "op 'fc': FLOPs: 1099511627776 x 1099511627776 overflows 64-bit integers", GraphError);
  CHECK_THROWS_WITH_AS(checked_sum(INT64_MAX, 1, "total"), doctest::Contains("total: 9223372036854775807 + 1"),
                       GraphError);
  CHECK(element_count({4, 5}) == 20);
  CHECK_THROWS_WITH_AS(element_count({int64_t{1} << 40, int64_t{1} << 40}),
                       doctest::Contains("its element count overflows 64-bit integers"), GraphError);
}

TEST_CASE("a [2^40, 2^40] tensor is an overflow, not 0 bytes; a 4 PiB one is refused; so are FLOPs past 2^63") {
  // Before: "field 'bytes' = 0 does not match shape [...] of fp32 (0 bytes)": 2^80 x 4 wrapped to 0.
  CHECK_THROWS_WITH_AS(trace_from_json(read_text_file(kMalformed + "overflow_shape.json")),
                       "tensor 0 'x': field 'shape' [1099511627776,1099511627776] of fp32: its size overflows "
                       "64-bit integers",
                       GraphError);
  // 2^49 x 2 fp32 = 2^52 bytes fits in 64 bits but no device or host holds it.
  CHECK_THROWS_WITH_AS(trace_from_json(read_text_file(kMalformed + "huge_tensor.json")),
                       doctest::Contains("tensor 0 'x': field 'bytes' = 4503599627370496 exceeds 1125899906842624 "
                                         "(1 PiB)"),
                       GraphError);
  // x [2^24, 2^22], W [2^22, 2^22], y [2^24, 2^22] fp32 are each under 1 PiB; 2 x 2^24 x 2^22 x 2^22
  // = 2^69 multiply-adds do not fit.
  CHECK_THROWS_WITH_AS(trace_from_json(read_text_file(kMalformed + "overflow_flops.json")),
                       "op 'fc': FLOPs: 2 x 16777216 x 4194304 x 4194304 overflows 64-bit integers", GraphError);
  GraphBuilder b("huge", DType::f32, 1, 1);
  const TensorId x = b.add_input("x", {int64_t{1} << 24, int64_t{1} << 22}, TensorRole::input, FuseAxis::stack);
  const TensorId w = b.add_weight("w", {int64_t{1} << 22, int64_t{1} << 22}, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(b.op(OpKind::linear, "fc", {x, w}), doctest::Contains("op 'fc': FLOPs"), GraphError);
}

TEST_CASE("all of a graph's tensors together must fit in 64 bits") {
  // 8193 tensors of 1 PiB each: every one is allowed, their sum (2^63 + 2^50) is not.
  Graph g;
  g.name = "many";
  for (int i = 0; i <= 8192; ++i) add_byte_tensor(g, fmt::format("t{}", i), kMaxTensorBytes, TensorRole::input);
  link(g);
  CHECK_THROWS_WITH_AS(validate(g), doctest::Contains("graph 'many': total tensor bytes"), GraphError);
}

TEST_CASE("an op's workspace is an allocation like a tensor, and its bytes read + written must fit 64 bits") {
  // A schedule file's op with workspace_bytes = 2^63 - 1 used to pass validation, wrap in the memory
  // rule's 512-byte rounding and leave the peak unchanged; bytes_read = 2^63 - 1 wrapped its traffic to
  // a negative count and its price to the compute regime's.
  GraphBuilder b("ops", DType::f32, 1, 1);
  const TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  b.op(OpKind::relu, "relu", {x});
  Graph g = std::move(b).finish();
  g.ops[0].workspace_bytes = INT64_MAX;
  CHECK_THROWS_WITH_AS(
      validate(g),
      "op 0 'relu': field 'workspace_bytes' = 9223372036854775807 exceeds 1125899906842624 (1 PiB), "
      "more than any device holds",
      GraphError);
  g.ops[0].workspace_bytes = kMaxTensorBytes;
  CHECK_NOTHROW(validate(g));
  g.ops[0].bytes_read = INT64_MAX;
  CHECK_THROWS_WITH_AS(
      validate(g),
      "op 0 'relu': bytes_read + bytes_written: 9223372036854775807 + 128 overflows 64-bit integers",
      GraphError);
}

TEST_CASE("input files past the size mutwo reads are refused before reading, gzip bombs while inflating") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mutwo_checked_sizes";
  std::filesystem::create_directories(dir);
  const std::filesystem::path plain = dir / "big.json";
  std::ofstream(plain) << std::string(4096, ' ');
  CHECK(read_text_file(plain, "trace", 4096).size() == 4096);
  CHECK_THROWS_WITH_AS(read_text_file(plain, "trace", 4095),
                       doctest::Contains("is 4096 bytes, more than the 4095 mutwo reads"), Error);
  // 1 MiB of zeros gzip to about 1 KiB: refused once the output passes the limit.
  const std::string zeros(1 << 20, '0');
  uLongf size = compressBound(static_cast<uLong>(zeros.size())) + 64;
  std::string packed(size, '\0');
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
  zs.avail_in = static_cast<uInt>(zeros.size());
  zs.next_out = reinterpret_cast<Bytef*>(packed.data());
  zs.avail_out = static_cast<uInt>(packed.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  packed.resize(zs.total_out);
  deflateEnd(&zs);
  const std::filesystem::path bomb = dir / "bomb.json.gz";
  std::ofstream(bomb, std::ios::binary) << packed;
  CHECK(packed.size() < 8192);
  CHECK(read_text_file(bomb, "trace", 1 << 20).size() == zeros.size());
  CHECK_THROWS_WITH_AS(read_text_file(bomb, "trace", 100000),
                       doctest::Contains("decompresses to more than 100000 bytes, the most mutwo reads"), FormatError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a measured duration past 1000 s is refused, so sums of durations fit") {
  Trace t;
  t.graph.name = "one";
  const TensorId a = add_byte_tensor(t.graph, "a", 4, TensorRole::input);
  Op op;
  op.id = 0;
  op.name = "k";
  op.inputs = {a};
  t.graph.ops.push_back(op);
  link(t.graph);
  t.op_duration_ns = {1'000'000'000'000};
  costmodel::validate_measured_trace(t);
  t.op_duration_ns = {1'000'000'000'001};
  CHECK_THROWS_WITH_AS(costmodel::validate_measured_trace(t), doctest::Contains("op 0 'k': field 'op_duration_ns'"),
                       Error);
}

// Schedule: instruction kinds, concatenation of sub-array graphs, validation rules (each names the
// first offending instruction), the plain schedule builder and the JSON file format.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "io/schedule_json.hpp"
#include "ir/graph_builder.hpp"
#include "ir/schedule.hpp"
#include "ir/schedule_check.hpp"
#include "policies/plain_schedule.hpp"
#include "support/error.hpp"
#include "tests/support/tiny_step.hpp"
#include "transforms/autodiff.hpp"

using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using mutwo::FormatError;
using mutwo::GraphError;
using mutwo::UnknownNameError;
using mutwo::policies::build_plain_schedule;

namespace {

// x[4,8] -> fc (linear 8->16, no bias) -> relu -> ce (cross entropy with labels[4]).
// Tensors: 0 x (input), 1 fc.weight, 2 labels, 3 fc, 4 relu, 5 ce (loss), 6 ce.log_probs.
// Ops: 0 fc, 1 relu, 2 ce.
Graph tiny(const std::string& name = "tiny") { return mutwo::test::tiny_forward(name); }

constexpr TensorId kFc = 3;

// Appends instructions with consecutive ids to a schedule of the tiny graph.
struct Script {
  Schedule s;
  Script() { s.graph = tiny(); }
  InstrId add(InstrKind kind, int32_t ref, int32_t stream, std::vector<InstrId> waits = {}) {
    Instruction in;
    in.id = static_cast<InstrId>(s.instructions.size());
    in.kind = kind;
    in.stream = stream;
    if (kind == InstrKind::compute || kind == InstrKind::recompute) {
      in.op = ref;
    } else {
      in.tensor = ref;
    }
    in.waits = std::move(waits);
    s.instructions.push_back(in);
    return in.id;
  }
  InstrId compute(OpId op, int32_t stream = kComputeStream, std::vector<InstrId> waits = {}) {
    return add(InstrKind::compute, op, stream, std::move(waits));
  }
  InstrId recompute(OpId op) { return add(InstrKind::recompute, op, kComputeStream); }
  InstrId free(TensorId t, std::vector<InstrId> waits = {}) {
    return add(InstrKind::free, t, kComputeStream, std::move(waits));
  }
  InstrId swap_out(TensorId t, std::vector<InstrId> waits, int32_t stream = kDeviceToHostStream) {
    return add(InstrKind::swap_out, t, stream, std::move(waits));
  }
  InstrId swap_in(TensorId t, std::vector<InstrId> waits) {
    return add(InstrKind::swap_in, t, kHostToDeviceStream, std::move(waits));
  }
  // The rest of the tiny step after relu: ce, then free everything the plain schedule frees there.
  void finish_from_ce() {
    compute(2);
    for (TensorId t : {2, 4, 5, 6}) free(t);
  }
};

// fc computed, fc swapped out (stream 1), freed (stream 0), swapped back in (stream 2): the sequence
// every swapping policy emits. Instructions 0..3.
Script swapped_fc(bool free_waits_for_swap_out = true, bool swap_in_waits_for_free = true) {
  Script sc;
  sc.compute(0);
  sc.free(0);
  sc.swap_out(kFc, {0});
  sc.free(kFc, free_waits_for_swap_out ? std::vector<InstrId>{2} : std::vector<InstrId>{});
  sc.swap_in(kFc, swap_in_waits_for_free ? std::vector<InstrId>{3} : std::vector<InstrId>{2});
  return sc;
}

std::string error_of(const Schedule& s) {
  try {
    validate_schedule(s);
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "(valid)";
}

}  // namespace

TEST_CASE("instruction kind names round-trip and unknown names are refused") {
  for (InstrKind k :
       {InstrKind::compute, InstrKind::recompute, InstrKind::swap_out, InstrKind::swap_in, InstrKind::free}) {
    CHECK(parse_instr_kind(instr_kind_name(k)) == k);
  }
  CHECK(instr_kind_name(InstrKind::swap_out) == "swap_out");
  CHECK_THROWS_WITH_AS(parse_instr_kind("evict"), doctest::Contains("unknown instruction kind 'evict'"),
                       UnknownNameError);
}

TEST_CASE("plain schedule computes each op in order and frees each tensor after its last reader") {
  Schedule s = build_plain_schedule({tiny()});
  CHECK(s.policy == "none");
  CHECK(s.graph.name == "tiny");  // one part: no "s0/" prefix
  CHECK(s.graph.tensor(kFc).name == "fc");
  REQUIRE(s.sub_arrays.size() == 1);
  CHECK(s.sub_arrays[0].first_op == 0);
  CHECK(s.sub_arrays[0].end_op == 3);
  // Last readers: x(0) -> fc; fc(3) -> relu; labels(2), relu(4) -> ce; loss(5) and log_probs(6) are read by
  // nobody, so they go right after their producer ce. fc.weight(1) is persistent: never freed.
  // Frees after one op are in ascending tensor id: 2, 4, 5, 6.
  struct Expected {
    InstrKind kind;
    int32_t ref;
  };
  const std::vector<Expected> expected = {
      {InstrKind::compute, 0}, {InstrKind::free, 0},    {InstrKind::compute, 1},
      {InstrKind::free, 3},    {InstrKind::compute, 2}, {InstrKind::free, 2},
      {InstrKind::free, 4},    {InstrKind::free, 5},    {InstrKind::free, 6}};
  REQUIRE(s.instructions.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Instruction& in = s.instructions[i];
    CAPTURE(i);
    CHECK(in.id == static_cast<InstrId>(i));
    CHECK(in.kind == expected[i].kind);
    CHECK(in.stream == kComputeStream);
    CHECK(in.waits.empty());
    if (expected[i].kind == InstrKind::compute) {
      CHECK(in.op == expected[i].ref);
      CHECK(in.tensor == kNoId);
    } else {
      CHECK(in.tensor == expected[i].ref);
      CHECK(in.op == kNoId);
    }
  }
  CHECK(s.graph.tensor(1).role == TensorRole::weight);
}

TEST_CASE("plain schedule of a training step frees each saved tensor after its backward reader") {
  OptimizerConfig sgd;
  sgd.kind = OptimizerKind::sgd;
  const Graph step = build_training_step(tiny(), sgd);
  // Autodiff appends ops 3 ce.backward (log_probs 6, labels 2 -> relu.grad 7), 4 relu.backward (7, relu 4
  // -> fc.grad 8), 5 fc.backward (8, x 0, fc.weight 1 -> fc.weight.grad 9), 6 sgd_step (1, 9, momentum 10).
  REQUIRE(step.ops.size() == 7);
  REQUIRE(step.tensors.size() == 11);
  Schedule s = build_plain_schedule({step});
  // fc(3) dies after relu (relu_backward saves relu's output, not its input); the loss(5) is read by
  // nobody; labels(2) and log_probs(6) die at ce.backward; relu(4) and relu.grad(7) at relu.backward;
  // x(0), saved for fc.backward, and fc.grad(8) at fc.backward. Gradient 9 and momentum 10 persist.
  const std::vector<std::pair<InstrKind, int32_t>> expected = {
      {InstrKind::compute, 0}, {InstrKind::compute, 1}, {InstrKind::free, 3},   {InstrKind::compute, 2},
      {InstrKind::free, 5},    {InstrKind::compute, 3}, {InstrKind::free, 2},   {InstrKind::free, 6},
      {InstrKind::compute, 4}, {InstrKind::free, 4},    {InstrKind::free, 7},   {InstrKind::compute, 5},
      {InstrKind::free, 0},    {InstrKind::free, 8},    {InstrKind::compute, 6}};
  REQUIRE(s.instructions.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    const Instruction& in = s.instructions[i];
    CHECK(in.kind == expected[i].first);
    CHECK((in.kind == InstrKind::compute ? in.op : in.tensor) == expected[i].second);
  }
}

TEST_CASE("plain schedule frees an input that no op reads before the first compute") {
  GraphBuilder b("unused", DType::f32, 1, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  b.add_input("spare", {4, 8}, TensorRole::input, FuseAxis::stack);  // tensor 1, read by nobody
  b.op(OpKind::relu, "relu", {x});                                   // tensor 2, read by nobody
  Schedule s = build_plain_schedule({std::move(b).finish()});
  // free spare; compute relu; free x (last reader relu) and relu's output (unread), ascending.
  REQUIRE(s.instructions.size() == 4);
  CHECK(s.instructions[0].kind == InstrKind::free);
  CHECK(s.instructions[0].tensor == 1);
  CHECK(s.instructions[1].kind == InstrKind::compute);
  CHECK(s.instructions[2].tensor == 0);
  CHECK(s.instructions[3].tensor == 2);
}

TEST_CASE("concat of two graphs remaps ids, prefixes names and records op ranges") {
  std::vector<SubArray> ranges;
  Graph g = concat_graphs({tiny("a"), tiny("b")}, &ranges);
  // Each tiny graph has 7 tensors and 3 ops: b's tensors become 7..13, its ops 3..5.
  CHECK(g.name == "a + b");
  CHECK(g.width == 1);
  CHECK(g.batch_size == 4);
  REQUIRE(g.tensors.size() == 14);
  REQUIRE(g.ops.size() == 6);
  CHECK(g.op(0).name == "s0/fc");
  CHECK(g.op(3).name == "s1/fc");
  CHECK(g.op(3).inputs == std::vector<TensorId>{7, 8});   // x = 0 + 7, fc.weight = 1 + 7
  CHECK(g.op(3).outputs == std::vector<TensorId>{10});    // fc = 3 + 7
  CHECK(g.op(5).inputs == std::vector<TensorId>{11, 9});  // relu = 4 + 7, labels = 2 + 7
  CHECK(g.tensor(10).name == "s1/fc");
  CHECK(g.tensor(10).producer == 3);
  CHECK(g.tensor(10).consumers == std::vector<OpId>{4});
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].name == "a");
  CHECK(ranges[0].first_op == 0);
  CHECK(ranges[0].end_op == 3);
  CHECK(ranges[1].name == "b");
  CHECK(ranges[1].first_op == 3);
  CHECK(ranges[1].end_op == 6);
  CHECK_THROWS_AS(concat_graphs({}), GraphError);

  // The plain schedule of both runs one after the other: 9 instructions each, 18 in all, and the
  // second sub-array's first compute (instruction 9) is op 3.
  Schedule s = build_plain_schedule({tiny("a"), tiny("b")}, "hfta");
  CHECK(s.policy == "hfta");
  REQUIRE(s.instructions.size() == 18);
  CHECK(s.instructions[9].kind == InstrKind::compute);
  CHECK(s.instructions[9].op == 3);
  CHECK(s.instructions[10].tensor == 7);
}

TEST_CASE("a swap-out, free, swap-in sequence ordered by waits validates") {
  Script sc = swapped_fc();
  sc.compute(1, kComputeStream, {4});  // relu waits for the swap-in
  sc.free(kFc);
  sc.finish_from_ce();
  CHECK(error_of(sc.s) == "(valid)");
}

TEST_CASE("happens-before is transitive across streams and extra compute streams") {
  // fc on stream 0; swap_out on stream 1 waits for it; relu on stream 3 waits for the swap_out only,
  // so it reads fc through 0 -> 1 -> 3.
  Script sc;
  sc.compute(0);
  sc.swap_out(kFc, {0});
  sc.compute(1, kFirstExtraComputeStream, {1});
  sc.compute(2, kFirstExtraComputeStream);
  CHECK(error_of(sc.s) == "(valid)");
  // Without the wait relu on stream 3 is unordered with fc on stream 0.
  sc.s.instructions[2].waits.clear();
  CHECK(error_of(sc.s) ==
        "instruction 2 (compute op 1 'relu'): reads tensor 3 'fc' made resident by instruction 0 (compute op "
        "0 'fc') "
        "on stream 0, which is not ordered before it (same stream earlier or reached through waits)");
}

TEST_CASE("recompute after a free rebuilds the tensor") {
  Script sc;
  sc.compute(0);
  sc.compute(1);
  sc.free(kFc);
  sc.recompute(0);  // x is still resident; fc comes back
  sc.free(kFc);
  sc.finish_from_ce();
  CHECK(error_of(sc.s) == "(valid)");
}

TEST_CASE("each validation rule names the first offending instruction") {
  SUBCASE("read before produce") {
    Script sc;
    sc.compute(1);
    CHECK(error_of(sc.s) ==
          "instruction 0 (compute op 1 'relu'): reads tensor 3 'fc' which is not resident "
          "(never produced)");
  }
  SUBCASE("read of a freed tensor") {
    Script sc;
    sc.compute(0);
    sc.free(kFc);
    sc.compute(1);
    CHECK(error_of(sc.s) ==
          "instruction 2 (compute op 1 'relu'): reads tensor 3 'fc' which is not resident "
          "(freed by instruction 1)");
  }
  SUBCASE("double free") {
    Script sc;
    sc.compute(0);
    sc.free(kFc);
    sc.free(kFc);
    CHECK(error_of(sc.s) ==
          "instruction 2 (free tensor 3 'fc'): frees tensor 3 'fc' which is not resident "
          "(already freed by instruction 1)");
  }
  SUBCASE("swap_in without swap_out") {
    Script sc;
    sc.compute(0);
    sc.free(kFc);
    sc.swap_in(kFc, {1});
    CHECK(error_of(sc.s) ==
          "instruction 2 (swap_in tensor 3 'fc'): tensor 3 'fc' has no host copy (no swap_out)");
  }
  SUBCASE("swap_in of a tensor still resident") {
    Script sc;
    sc.compute(0);
    sc.swap_out(kFc, {0});
    sc.swap_in(kFc, {1});
    CHECK(error_of(sc.s) == "instruction 2 (swap_in tensor 3 'fc'): tensor 3 'fc' is already resident");
  }
  SUBCASE("wait pointing forward or at itself") {
    Script sc;
    sc.compute(0, kComputeStream, {1});
    sc.compute(1);
    CHECK(error_of(sc.s) ==
          "instruction 0 (compute op 0 'fc'): field 'waits' lists 1, which is not an earlier "
          "instruction");
    sc.s.instructions[0].waits = {0};
    CHECK(error_of(sc.s) ==
          "instruction 0 (compute op 0 'fc'): field 'waits' lists 0, which is not an earlier "
          "instruction");
  }
  SUBCASE("cross-stream read without a wait") {
    Script sc = swapped_fc();
    sc.compute(1);  // instruction 5 reads fc swapped in on stream 2 without waiting for instruction 4
    CHECK(error_of(sc.s) ==
          "instruction 5 (compute op 1 'relu'): reads tensor 3 'fc' made resident by instruction "
          "4 (swap_in tensor 3 'fc') on stream 2, which is not ordered before it (same stream "
          "earlier or reached through waits)");
  }
  SUBCASE("free before the swap_out reading the tensor finished") {
    Script sc = swapped_fc(/*free_waits_for_swap_out=*/false);
    CHECK(error_of(sc.s) ==
          "instruction 3 (free tensor 3 'fc'): frees a tensor still read by instruction 2 "
          "(swap_out tensor 3 'fc') on stream 1, which is not ordered before it (same stream "
          "earlier or reached through waits)");
  }
  SUBCASE("recompute on another stream not ordered after the free of the old copy") {
    Script sc;
    sc.compute(0);
    sc.compute(1);
    sc.free(kFc);
    sc.add(InstrKind::recompute, 0, kFirstExtraComputeStream);  // no wait for instruction 2
    CHECK(error_of(sc.s) ==
          "instruction 3 (recompute op 0 'fc'): rebuilds tensor 3 'fc' freed by instruction 2 (free "
          "tensor 3 'fc') on stream 0, which is not ordered before it (same stream earlier or reached "
          "through waits)");
  }
  SUBCASE("swap_in not ordered after the free of the old copy") {
    Script sc = swapped_fc(true, /*swap_in_waits_for_free=*/false);
    CHECK(error_of(sc.s) ==
          "instruction 4 (swap_in tensor 3 'fc'): reloads a tensor freed by instruction 3 (free "
          "tensor 3 'fc') on stream 0, which is not ordered before it (same stream earlier or "
          "reached through waits)");
  }
  SUBCASE("swap_in not ordered after its swap_out") {
    Script sc;
    sc.compute(0);
    sc.swap_out(kFc, {0});
    sc.free(kFc, {1});
    sc.swap_in(kFc, {});
    CHECK(error_of(sc.s) ==
          "instruction 3 (swap_in tensor 3 'fc'): copies the host copy made by instruction 1 "
          "(swap_out tensor 3 'fc') on stream 1, which is not ordered before it (same stream "
          "earlier or reached through waits)");
  }
  SUBCASE("swap_out on the wrong stream") {
    Script sc;
    sc.compute(0);
    sc.swap_out(kFc, {0}, kHostToDeviceStream);
    CHECK(error_of(sc.s) ==
          "instruction 1 (swap_out tensor 3 'fc'): field 'stream' = 2, swap_out runs on stream 1");
  }
  SUBCASE("compute on a copy stream, or past the largest stream id (2^31 - 1 crashed the simulator)") {
    Script sc;
    sc.compute(0, kDeviceToHostStream);
    CHECK(error_of(sc.s) ==
          "instruction 0 (compute op 0 'fc'): field 'stream' = 1 is not a compute stream (0 or "
          ">= 3)");
    Script far;
    far.compute(0, 2147483647);
    CHECK(error_of(far.s) ==
          "instruction 0 (compute op 0 'fc'): field 'stream' = 2147483647 is over the "
          "largest stream id 1023");
  }
  SUBCASE("recompute of a non-recomputable op") {
    Script sc;
    sc.s.graph.ops[1].recomputable = false;
    sc.compute(0);
    sc.compute(1);
    sc.recompute(1);
    CHECK(error_of(sc.s) ==
          "instruction 2 (recompute op 1 'relu'): op is not recomputable (phase forward, "
          "recomputable false)");
  }
  SUBCASE("recompute before compute") {
    Script sc;
    sc.recompute(0);
    CHECK(error_of(sc.s) == "instruction 0 (recompute op 0 'fc'): recomputes an op that is not computed yet");
  }
  SUBCASE("op computed twice") {
    Script sc;
    sc.compute(0);
    sc.compute(0);
    CHECK(error_of(sc.s) == "instruction 1 (compute op 0 'fc'): op is already computed by instruction 0");
  }
  SUBCASE("op never computed") {
    Script sc;
    sc.compute(0);
    sc.compute(1);
    CHECK(error_of(sc.s) == "schedule: op 2 'ce' is never computed");
  }
  SUBCASE("references out of range and ids out of place") {
    Script sc;
    sc.compute(7);
    CHECK(error_of(sc.s) == "instruction 0 (compute op 7): field 'op' = 7 refers to no op (3 ops)");
    sc.s.instructions[0].op = 0;
    sc.s.instructions[0].id = 5;
    CHECK(error_of(sc.s) == "instruction 0 (compute op 0 'fc'): field 'id' = 5, expected 0");
  }
  SUBCASE("the earliest of two errors is reported") {
    Script sc;
    sc.compute(0);
    sc.free(kFc);
    sc.free(kFc);                          // instruction 2: double free
    sc.swap_out(kFc, {}, kComputeStream);  // instruction 3: wrong stream, and not resident
    CHECK(error_of(sc.s).starts_with("instruction 2 (free tensor 3 'fc')"));
  }
  SUBCASE("sub-array ranges must be in order within the graph") {
    Schedule s = build_plain_schedule({tiny()});
    s.sub_arrays[0].end_op = 4;
    CHECK(error_of(s) ==
          "sub_array 0 'tiny': op range [0, 4) is not in order within the graph's 3 ops (previous "
          "range ends at 0)");
  }
}

TEST_CASE("schedule JSON round trip is exact") {
  Script sc = swapped_fc();
  sc.compute(1, kComputeStream, {4});
  sc.free(kFc);
  sc.finish_from_ce();
  sc.s.policy = "vdnn";
  SubArray sa;
  sa.name = "tiny";
  sa.width = 1;
  sa.first_op = 0;
  sa.end_op = 3;
  sc.s.sub_arrays = {sa};
  const std::string text = schedule_to_json(sc.s);
  Schedule back = schedule_from_json(text);
  CHECK(back.policy == "vdnn");
  CHECK(back.graph.name == "tiny");
  REQUIRE(back.graph.tensors.size() == 7);
  CHECK(back.graph.tensor(kFc).name == "fc");
  REQUIRE(back.sub_arrays.size() == 1);
  CHECK(back.sub_arrays[0].end_op == 3);
  REQUIRE(back.instructions.size() == sc.s.instructions.size());
  for (size_t i = 0; i < back.instructions.size(); ++i) {
    CAPTURE(i);
    CHECK(back.instructions[i].kind == sc.s.instructions[i].kind);
    CHECK(back.instructions[i].stream == sc.s.instructions[i].stream);
    CHECK(back.instructions[i].op == sc.s.instructions[i].op);
    CHECK(back.instructions[i].tensor == sc.s.instructions[i].tensor);
    CHECK(back.instructions[i].waits == sc.s.instructions[i].waits);
  }
  CHECK(schedule_to_json(back) == text);
  CHECK(text.find(R"({"id":4,"kind":"swap_in","stream":2,"tensor":3,"waits":[3]})") != std::string::npos);

  const auto path = std::filesystem::temp_directory_path() / "mutwo_test_schedule.json";
  write_schedule(sc.s, path.string());
  CHECK(schedule_to_json(read_schedule(path.string())) == text);
  std::filesystem::remove(path);
}

TEST_CASE("a bad schedule file names the instruction and the field") {
  const std::string text = schedule_to_json(build_plain_schedule({tiny()}));
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return t;
  };
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"("version": 4)", R"("version": 5)")),
                       doctest::Contains("unsupported version 5 (this build reads versions 1 to 4)"), FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"("version": 4)", R"("version": 0)")),
                       doctest::Contains("unsupported version 0 (this build reads versions 1 to 4)"), FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"("mutwo-schedule")", R"("mutwo-trace")")),
                       doctest::Contains("field 'format' = 'mutwo-trace'"), FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"({"id":3,"kind":"free")", R"({"id":3,"kind":"evict")")),
                       doctest::Contains("instruction 3: field 'kind': unknown instruction kind 'evict'"),
                       FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"("stream":0,"tensor":3)", R"("stream":"0","tensor":3)")),
                       doctest::Contains("instruction 3: field 'stream' must be an integer"), FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"("stream":0,"tensor":3)", R"("stream":0,"op":3)")),
                       doctest::Contains("instruction 3: field 'op' is not allowed for a free instruction"),
                       FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"("tensor":3,"waits":[])", R"("tensor":3,"wait":[])")),
                       doctest::Contains("instruction 3: unknown field 'wait'"), FormatError);
  // Well-formed but invalid: freeing x twice (instruction 3 now frees tensor 0 again).
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced(R"("stream":0,"tensor":3)", R"("stream":0,"tensor":0)")),
                       doctest::Contains("instruction 3 (free tensor 0 'x'): frees tensor 0 'x' which is not "
                                         "resident (already freed by instruction 1)"),
                       ScheduleError);
  Schedule inflated = build_plain_schedule({tiny()});  // FLOPs the kind does not do priced unsaid
  inflated.graph.ops[0].flops += 1;
  CHECK_THROWS_WITH_AS(schedule_from_json(schedule_to_json(inflated)), doctest::Contains("field 'flops' = "),
                       mutwo::GraphError);
  CHECK_THROWS_AS(schedule_from_json("{\"format\": "), FormatError);
  CHECK_THROWS_WITH_AS(read_schedule("/nonexistent/mutwo.json"),
                       doctest::Contains("cannot open schedule file"), FormatError);
}

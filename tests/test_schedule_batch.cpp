// A schedule's samples per step: each sub-array's width x its batch, checked against its inputs.
#include <doctest/doctest.h>

#include <cstring>

#include "io/schedule_json.hpp"
#include "ir/graph_builder.hpp"
#include "ir/schedule.hpp"
#include "ir/schedule_check.hpp"
#include "policies/plain_schedule.hpp"
#include "support/error.hpp"
#include "tests/support/tiny_step.hpp"

using namespace mutwo::ir;
using namespace mutwo::io;
using mutwo::policies::build_plain_schedule;

namespace {

// tiny (batch 4: x [4,8], ops [0, 3)) beside a part of batch 2 (x [2,8], ops [3, 5)).
Schedule tiny_beside_pair() {
  GraphBuilder b("pair", DType::f32, 1, 2);
  const TensorId x = b.add_input("x", {2, 8}, TensorRole::input, FuseAxis::stack);
  const TensorId w = b.add_weight("fc.weight", {16, 8}, FuseAxis::stack);
  const TensorId labels = b.add_input("labels", {2}, TensorRole::label, FuseAxis::stack, DType::i64);
  b.add_op(OpKind::cross_entropy, "ce", {b.op(OpKind::linear, "fc", {x, w}), labels});
  return build_plain_schedule({mutwo::test::tiny_forward(), std::move(b).finish()});
}

}  // namespace

TEST_CASE("samples per step add each sub-array's width x batch; a batch its inputs do not hold is refused") {
  // tiny (batch 4: x [4,8]) beside a part of batch 2 (x [2,8]): 4 + 2 samples a step, where the first
  // part's batch for every model said 8.
  const Schedule s = tiny_beside_pair();
  REQUIRE(s.sub_arrays.size() == 2);
  CHECK(s.sub_arrays[0].batch_size == 4);
  CHECK(s.sub_arrays[1].batch_size == 2);
  CHECK(samples_per_step(s) == 6);
  const std::string text = schedule_to_json(s);
  CHECK(samples_per_step(schedule_from_json(text)) == 6);

  std::string wrong = text;
  const std::string second = R"("name":"pair","width":1,"first_op":3,"end_op":5,"batch_size":2})";
  REQUIRE(wrong.find(second) != std::string::npos);
  wrong.replace(wrong.find(second), second.size(),
                R"("name":"pair","width":1,"first_op":3,"end_op":5,"batch_size":3})");
  CHECK_THROWS_WITH_AS(
      schedule_from_json(wrong),
      "sub_array 1 'pair': field 'batch_size' = 3, but input tensor 7 's1/x' has shape [2,8] "
      "(width 1): the batch is neither its leading dimension nor the one after the models' axis",
      mutwo::ir::ScheduleError);
  // A version 3 file has no batch per sub-array: each takes the graph's (the first part's, 4), which the
  // second part's inputs do not hold: refused, not priced as 8 samples.
  std::string v3 = text;
  v3.replace(v3.find(R"("version": 4)"), 12, R"("version": 3)");
  for (const char* field : {R"(,"batch_size":4)", R"(,"batch_size":2)"})
    v3.erase(v3.find(field), std::strlen(field));
  CHECK_THROWS_WITH_AS(schedule_from_json(v3),
                       doctest::Contains("sub_array 1 'pair': field 'batch_size' = 4"),
                       mutwo::ir::ScheduleError);
  std::string negative = text;
  negative.replace(negative.find(second), second.size(),
                   R"("name":"pair","width":1,"first_op":3,"end_op":5,"batch_size":-1})");
  CHECK_THROWS_WITH_AS(schedule_from_json(negative),
                       "sub_array 1 'pair': field 'batch_size' = -1 is negative", mutwo::ir::ScheduleError);
}

TEST_CASE("samples per step that overflow 64 bits are an error, not a wrapped count") {
  Schedule s;
  s.sub_arrays = {SubArray{"a", 1 << 30, 0, 0, int64_t{1} << 40}, SubArray{"b", 1, 0, 0, 8}};
  CHECK_THROWS_WITH_AS(samples_per_step(s), doctest::Contains("samples per step (width x batch_size)"),
                       mutwo::GraphError);
  s.sub_arrays = {SubArray{"a", 2, 0, 0, 16}, SubArray{"b", 3, 0, 0, 64}};
  CHECK(samples_per_step(s) == 2 * 16 + 3 * 64);
}

TEST_CASE("a sub-array's width is its ops' and its range holds one whole model array") {
  // Each case once made samples per step a number the schedule does not train: a width of
  // 2147483647 printed 4294967294 samples per step, a model cut in two counted twice.
  const Schedule s = tiny_beside_pair();
  const std::string text = schedule_to_json(s);
  const auto with_second = [&](const char* range) {
    std::string t = text;
    const std::string second = R"("name":"pair","width":1,"first_op":3,"end_op":5,"batch_size":2})";
    t.replace(t.find(second), second.size(), range);
    return t;
  };
  CHECK_THROWS_WITH_AS(
      schedule_from_json(
          with_second(R"("name":"pair","width":2147483647,"first_op":3,"end_op":5,"batch_size":2})")),
      "sub_array 1 'pair': field 'width' = 2147483647, but its ops train 1 model", mutwo::ir::ScheduleError);
  CHECK_THROWS_WITH_AS(
      schedule_from_json(with_second(R"("name":"pair","width":1,"first_op":4,"end_op":5,"batch_size":2})")),
      doctest::Contains("sub_array 1 'pair': op 4 's1/ce' reads tensor"), mutwo::ir::ScheduleError);
  CHECK_THROWS_WITH_AS(
      schedule_from_json(with_second(R"("name":"pair","width":1,"first_op":5,"end_op":5,"batch_size":2})")),
      "sub_array 1 'pair': op range [5, 5) holds no ops", mutwo::ir::ScheduleError);
}

TEST_CASE("without sub-arrays the graph's width is its ops' (the step's model count)") {
  // A width of 3 over ops of 1 model reported two models that never trained (loss 0); 1 over fused
  // ops of 2 read a loss out of range; 10^9 held a loss per model until memory ran out.
  Schedule s = build_plain_schedule({mutwo::test::tiny_forward()});
  s.sub_arrays.clear();
  CHECK_NOTHROW(validate_schedule(s));
  s.graph.width = 3;
  CHECK_THROWS_WITH_AS(validate_schedule(s), "graph 'tiny': field 'width' = 3, but its ops train 1 model",
                       mutwo::ir::ScheduleError);
}

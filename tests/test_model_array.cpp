// Model arrays split into fused sub-arrays: partition checks and per-sub-array training steps.
#include <doctest/doctest.h>

#include "policies/model_array.hpp"
#include "profiles/attributes.hpp"
#include "profiles/error.hpp"

using namespace mutwo;
using namespace mutwo::profiles;

namespace {

policies::ModelArray resnet18_array(int32_t count) {
  policies::ModelArray array;
  array.model = "resnet18";
  array.count = count;
  array.config.batch_size = 2;
  array.config.image_size = 64;
  return array;
}

// The learning rates the first optimizer op of a step carries (one per fused model).
std::vector<double> first_step_lr(const Graph& g) {
  for (const Op& op : g.ops) {
    if (op.phase == Phase::optimizer) return attr_doubles(op.attrs, "lr", op.name);
  }
  return {};
}

}  // namespace

TEST_CASE("a partition must cover the array with sub-arrays of at least one model") {
  const policies::ModelArray array = resnet18_array(4);
  CHECK_NOTHROW(policies::validate_partition(array, {2, 2}));
  CHECK_NOTHROW(policies::validate_partition(array, {1, 3}));
  CHECK_NOTHROW(policies::validate_partition(array, {4}));
  CHECK_THROWS_WITH_AS(policies::validate_partition(array, {2, 1}), "partition 2,1 covers 3 models, the array has 4",
                       Error);
  CHECK_THROWS_WITH_AS(policies::validate_partition(array, {4, 0}), "partition 4,0: sub-array size 0 must be >= 1",
                       Error);
  CHECK_THROWS_WITH_AS(policies::validate_partition(array, {}),
                       "partition is empty; give the sub-array sizes, e.g. 2,2", Error);
  CHECK(policies::partition_text({3, 1, 2}) == "3,1,2");
}

TEST_CASE("each sub-array is one fused training step of its width") {
  const std::vector<Graph> parts = policies::sub_array_steps(resnet18_array(3), {2, 1});
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].name == "resnet18 x2");
  CHECK(parts[0].width == 2);
  CHECK(parts[1].name == "resnet18");
  CHECK(parts[1].width == 1);
  // torchvision resnet18: 11,689,512 parameters per model.
  CHECK(parameter_count(parts[0]) == 2 * 11'689'512);
  CHECK(parameter_count(parts[1]) == 11'689'512);
  CHECK(parts[0].ops.size() == parts[1].ops.size());  // fusion keeps the op count
}

TEST_CASE("per-model learning rates are sliced to each sub-array; one value is shared") {
  policies::ModelArray array = resnet18_array(3);
  array.optimizer.lr = {0.1, 0.2, 0.3};
  const std::vector<Graph> parts = policies::sub_array_steps(array, {1, 2});
  CHECK(first_step_lr(parts[0]) == std::vector<double>{0.1});
  CHECK(first_step_lr(parts[1]) == std::vector<double>{0.2, 0.3});

  array.optimizer.lr = {0.05};
  CHECK(first_step_lr(policies::sub_array_steps(array, {1, 2})[1]) == std::vector<double>{0.05, 0.05});  // broadcast to the width

  array.optimizer.lr = {0.1, 0.2};
  CHECK_THROWS_WITH_AS(policies::sub_array_steps(array, {1, 2}),
                       "optimizer 'lr' has 2 values; give one, or one per model (3)", Error);
}

TEST_CASE("an unknown model in the array lists the valid names") {
  policies::ModelArray array = resnet18_array(2);
  array.model = "resnet19";
  CHECK_THROWS_AS(policies::sub_array_steps(array, {2}), UnknownNameError);
}

// Model arrays split into fused sub-arrays: partition checks and per-sub-array training steps.
#include <doctest/doctest.h>

#include "ir/attributes.hpp"
#include "policies/model_array.hpp"
#include "support/error.hpp"

using namespace mutwo;
using namespace mutwo::ir;

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
  CHECK_THROWS_WITH_AS(policies::validate_partition(array, {2, 1}),
                       "partition 2,1 covers 3 models, the array has 4", Error);
  CHECK_THROWS_WITH_AS(policies::validate_partition(array, {4, 0}),
                       "partition 4,0: sub-array size 0 must be >= 1", Error);
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
  CHECK(first_step_lr(policies::sub_array_steps(array, {1, 2})[1]) ==
        std::vector<double>{0.05, 0.05});  // broadcast to the width

  array.optimizer.lr = {0.1, 0.2};
  CHECK_THROWS_WITH_AS(policies::sub_array_steps(array, {1, 2}),
                       "optimizer 'lr' has 2 values; give one, or one per model (3)", Error);
}

TEST_CASE("an unknown model in the array lists the valid names") {
  policies::ModelArray array = resnet18_array(2);
  array.model = "resnet19";
  CHECK_THROWS_AS(policies::sub_array_steps(array, {2}), UnknownNameError);
}

// ---- Mixed arrays: resnet18:2 + mobilenet-v2:3 at batch 2, 64x64 images ----

namespace {

std::vector<policies::ArchitectureCount> mixed_array() {
  mutwo::zoo::ModelConfig config;
  config.batch_size = 2;
  config.image_size = 64;
  return {{"resnet18", 2, config}, {"mobilenet-v2", 3, config}};
}

}  // namespace

TEST_CASE("a mixed partition's text groups each architecture's widths") {
  CHECK(policies::partition_text(policies::ArrayPartition{
            {"bert-base", 4}, {"bert-base", 4}, {"vit-b16", 2}}) == "bert-base:4+4, vit-b16:2");
  // Groups in first-appearance order, widths in the order given.
  CHECK(policies::partition_text(policies::ArrayPartition{
            {"vit-b16", 1}, {"bert-base", 2}, {"vit-b16", 3}}) == "vit-b16:1+3, bert-base:2");
  CHECK(policies::partition_text(policies::ArrayPartition{}).empty());
}

TEST_CASE("a mixed partition must cover each architecture with its own sub-arrays") {
  const auto a = mixed_array();
  CHECK_NOTHROW(
      policies::validate_array_partition(a, {{"resnet18", 2}, {"mobilenet-v2", 2}, {"mobilenet-v2", 1}}));
  CHECK_NOTHROW(
      policies::validate_array_partition(a, {{"mobilenet-v2", 3}, {"resnet18", 1}, {"resnet18", 1}}));
  CHECK_THROWS_WITH_AS(
      policies::validate_array_partition(a, {{"resnet18", 2}, {"mobilenet-v2", 2}}),
      "partition resnet18:2, mobilenet-v2:2: mobilenet-v2 widths cover 2 models, the array has 3", Error);
  CHECK_THROWS_WITH_AS(
      policies::validate_array_partition(a, {{"resnet18", 2}, {"mobilenet-v2", 3}, {"vit-b16", 1}}),
      "partition resnet18:2, mobilenet-v2:3, vit-b16:1: model 'vit-b16' is not in the array", Error);
  CHECK_THROWS_WITH_AS(
      policies::validate_array_partition(a, {{"resnet18", 2}, {"resnet18", 0}, {"mobilenet-v2", 3}}),
      "partition resnet18:2+0, mobilenet-v2:3: sub-array width 0 of 'resnet18' must be >= 1", Error);
  CHECK_THROWS_WITH_AS(policies::validate_array_partition(a, {}),
                       "array partition is empty; give one sub-array per group of models", Error);
}

TEST_CASE("mixed sub-array steps are fused per architecture with each model's learning rate") {
  // Models in array order: resnet18 #0, #1 (lr 0.1, 0.2), mobilenet-v2 #0, #1, #2 (lr 0.3, 0.4, 0.5).
  transforms::OptimizerConfig opt;
  opt.lr = {0.1, 0.2, 0.3, 0.4, 0.5};
  const std::vector<Graph> parts = policies::sub_array_steps(
      mixed_array(), {{"mobilenet-v2", 1}, {"resnet18", 2}, {"mobilenet-v2", 2}}, opt);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].name == "mobilenet-v2");
  CHECK(parts[1].name == "resnet18 x2");
  CHECK(parts[2].name == "mobilenet-v2 x2");
  // torchvision: resnet18 11,689,512 and mobilenet_v2 3,504,872 parameters per model.
  CHECK(parameter_count(parts[1]) == 2 * 11'689'512);
  CHECK(parameter_count(parts[2]) == 2 * 3'504'872);
  CHECK(first_step_lr(parts[0]) == std::vector<double>{0.3});
  CHECK(first_step_lr(parts[1]) == std::vector<double>{0.1, 0.2});
  CHECK(first_step_lr(parts[2]) == std::vector<double>{0.4, 0.5});
  opt.lr = {0.1, 0.2, 0.3};
  CHECK_THROWS_WITH_AS(policies::sub_array_steps(mixed_array(), {{"resnet18", 2}, {"mobilenet-v2", 3}}, opt),
                       "optimizer 'lr' has 3 values; give one, or one per model (5)", Error);
}

TEST_CASE("the step graph cache builds each architecture and width once") {
  policies::StepGraphCache cache(mixed_array(), {});
  const Graph& r2 = cache.get("resnet18", 2);
  CHECK(r2.name == "resnet18 x2");
  CHECK(&cache.get("resnet18", 2) == &r2);
  CHECK(&cache.get(size_t{0}, 2) == &r2);  // architecture 0 is resnet18
  CHECK(cache.graphs_built() == 1);
  // {mobilenet-v2 2, mobilenet-v2 1, resnet18 2}: two more graphs built, resnet18 x2 reused.
  const std::vector<Graph> parts = cache.steps({{"mobilenet-v2", 2}, {"mobilenet-v2", 1}, {"resnet18", 2}});
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].name == "mobilenet-v2 x2");
  CHECK(parts[2].ops.size() == r2.ops.size());
  CHECK(cache.graphs_built() == 3);
  CHECK_THROWS_WITH_AS(cache.get("resnet18", 3), "step graph cache: width 3 of 'resnet18' must be in [1, 2]",
                       Error);
  CHECK_THROWS_WITH_AS(cache.get("vit-b16", 1), "step graph cache: model 'vit-b16' is not in the array",
                       Error);
  CHECK_THROWS_WITH_AS(cache.get(size_t{2}, 1), "step graph cache: architecture index 2 out of range [0, 2)",
                       Error);
}

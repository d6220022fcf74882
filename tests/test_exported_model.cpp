// User models exported by scripts/export_model.py (torch.fx, PyTorch 1.13) in place of a zoo model
// (zoo/exported_model.hpp): parameter counts against PyTorch's, FLOPs re-derived from
// the kinds' rules (hand-derived below), fusion of k copies, the training step, and the errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "io/trace_file.hpp"
#include "ir/graph.hpp"
#include "support/error.hpp"
#include "tests/support/temp_dir.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/exported_model.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;
using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

namespace {
const std::string kDir = std::string(MUTWO_TEST_FIXTURES) + "/exported/";
}

TEST_CASE("an exported ResNet-style model: parameters as PyTorch counts them, FLOPs from mutwo's rules") {
  const std::string path = kDir + "tiny_resnet.json";
  CHECK(is_model_file(path));
  const ModelInfo& info = find_model(path);
  CHECK(info.name == "tiny_resnet");
  CHECK(info.family == "exported");
  CHECK(info.default_batch_size == 4);
  ModelConfig config;
  const Graph g = build_model(path, config);
  // PyTorch: stem 16x3x3x3 = 432, its batch norm 32, two blocks of 2 x (16x16x3x3 + 32) = 4,672,
  // fc 16x10 + 10 = 170: 9,978 (tests/fixtures/exported/README.md).
  CHECK(parameter_count(g) == 9978);
  CHECK(g.ops.size() == 22);
  // The file says 0 FLOPs; the stem conv's are re-derived: 2 x (3 x 3 x 3 MACs) x output 4x16x16x16.
  CHECK(g.ops[0].kind == OpKind::conv2d);
  CHECK(g.ops[0].flops == 2 * 27 * 4 * 16 * 16 * 16);
  CHECK(g.ops.back().kind == OpKind::cross_entropy);

  // Three copies fused (HFTA): three times the parameters, one graph; and the training step.
  config.width = 3;
  const Graph fused = build_model(path, config);
  CHECK(fused.width == 3);
  CHECK(fused.name == "tiny_resnet x3");
  CHECK(parameter_count(fused) == 3 * 9978);
  const Graph step = build_training_step(fused, OptimizerConfig{});
  CHECK(step.ops.size() > fused.ops.size());

  CHECK(parameter_count(build_model(kDir + "mlp.json", {})) == 2890);  // PyTorch's count
}

TEST_CASE("an exported model's shapes are fixed at export; other files are refused naming them") {
  const std::string path = kDir + "tiny_resnet.json";
  ModelConfig config;
  config.batch_size = 8;
  CHECK_THROWS_WITH_AS(build_model(path, config),
                       doctest::Contains("tiny_resnet.json' was exported at batch size 4, not 8"), Error);
  config = {};
  config.image_size = 64;
  CHECK_THROWS_WITH_AS(build_model(path, config), doctest::Contains("its shapes are fixed at export"), Error);
  // A training-step trace (backward and optimizer included) is not a forward graph.
  const std::filesystem::path step_file = std::filesystem::temp_directory_path() / "mutwo_step_not_a_model.json";
  Trace step;
  step.graph = build_training_step(build_model("resnet-mini", {}), OptimizerConfig{});
  write_trace(step, step_file);
  CHECK_THROWS_WITH_AS(find_model(step_file.string()),
                       doctest::Contains("is a backward op; an exported model is its forward graph"), GraphError);
  std::filesystem::remove(step_file);
  CHECK_THROWS_AS(find_model(kDir + "missing.json"), FormatError);
}

TEST_CASE("torchvision's resnet18, resnet50, mobilenet_v2, mobilenet_v3_large, vit_b_16 exported: the zoo's model") {
  // scripts/export-torchvision.sh (torchvision 0.14, batch 2 of 224x224): parameter count equal to
  // the built-in model's (torchvision's own), forward FLOPs within 1 % and forward-produced
  // (saved-for-backward) bytes within 2 % of what the zoo computes; they come out identical.
  for (const auto& names : std::vector<std::pair<std::string, std::string>>{
           {"resnet18", "resnet18"},
           {"resnet50", "resnet50"},
           {"mobilenet-v2", "mobilenet_v2"},
           {"mobilenet-v3-large", "mobilenet_v3_large"},
           {"vit-b16", "vit_b_16"}}) {
    const std::string& zoo = names.first;  // not a structured binding: CAPTURE's lambda (clang 14)
    const std::string& file = names.second;
    CAPTURE(zoo);
    ModelConfig config;
    config.batch_size = 2;
    const Graph built_in = build_model(zoo, config);
    const Graph exported = build_model(kDir + "torchvision/" + file + ".json.gz", config);
    CHECK(parameter_count(exported) == parameter_count(built_in));
    const auto flops = static_cast<double>(flops_in_phase(exported, Phase::forward));
    CHECK(flops == doctest::Approx(static_cast<double>(flops_in_phase(built_in, Phase::forward))).epsilon(0.01));
    CHECK(static_cast<double>(activation_bytes(exported)) ==
          doctest::Approx(static_cast<double>(activation_bytes(built_in))).epsilon(0.02));
    CHECK(flops_in_phase(exported, Phase::forward) == flops_in_phase(built_in, Phase::forward));  // in fact exact
    // The training steps mutwo builds from them keep the same bytes for backward.
    const Graph exported_step = build_training_step(exported, OptimizerConfig{});
    const Graph built_in_step = build_training_step(built_in, OptimizerConfig{});
    CHECK(static_cast<double>(saved_for_backward_bytes(exported_step)) ==
          doctest::Approx(static_cast<double>(saved_for_backward_bytes(built_in_step))).epsilon(0.02));
    CHECK(saved_for_backward_bytes(exported_step) == saved_for_backward_bytes(built_in_step));  // in fact equal
  }
}

TEST_CASE("a model file rewritten in place is read again; the first version stays valid") {
  // Loaded models were kept by path: a model exported again to the same path (Model.save in a
  // notebook) was priced as the first one for the rest of the process.
  test::TempDir dir("exported");
  const std::string path = (dir / "model.json").string();
  std::filesystem::copy_file(kDir + "tiny_resnet.json", path);
  ModelConfig config;
  const ModelInfo& first = find_model(path);
  CHECK(parameter_count(build_model(path, config)) == 9978);
  std::filesystem::copy_file(kDir + "mlp.json", path, std::filesystem::copy_options::overwrite_existing);
  const ModelInfo& second = find_model(path);
  CHECK(&second != &first);
  CHECK(second.description != first.description);
  CHECK(parameter_count(build_model(path, config)) == 2890);          // tests/fixtures/exported/README.md
  CHECK(first.description.find("tiny_resnet") != std::string::npos);  // still the first file's
}

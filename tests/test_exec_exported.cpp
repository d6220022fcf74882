// An exported user model (scripts/export_model.py, tests/fixtures/exported/tiny_resnet_ref.json)
// trained by mutwo's executor on PyTorch's own initial weights and batch gives PyTorch's loss and
// every weight's gradient (autograd, recorded by the exporter's --reference): the export, mutwo's
// autodiff and its kernels agree with the framework the model came from.
#include "tests/support/torch_doctest.hpp"

#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "exec/device_backend.hpp"
#include "exec/interpreter.hpp"
#include "policies/plain_schedule.hpp"
#include "support/text_file.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;
using namespace mutwo::support;
using namespace mutwo::ir;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

TEST_CASE("an exported ResNet-style model: mutwo's loss and gradients equal PyTorch's") {
  const std::string dir = std::string(MUTWO_TEST_FIXTURES) + "/exported/";
  const nlohmann::json ref =
      nlohmann::json::parse(read_text_file(dir + "tiny_resnet_ref.reference.json.gz"));
  OptimizerConfig sgd;
  sgd.kind = OptimizerKind::sgd;
  const Schedule s =
      policies::build_plain_schedule({build_training_step(build_model(dir + "tiny_resnet_ref.json", {}), sgd)});
  const Graph& g = s.graph;
  auto backend = exec::make_backend("cpu");
  exec::Interpreter interpreter(s, *backend);
  int32_t set = 0;
  for (const Tensor& t : g.tensors) {
    const nlohmann::json* values = nullptr;
    if (t.role == TensorRole::weight && ref["weights"].contains(t.name)) values = &ref["weights"][t.name];
    if (t.role == TensorRole::input && ref["inputs"].contains(t.name)) values = &ref["inputs"][t.name];
    if (t.role == TensorRole::label) {
      interpreter.set_tensor(t.id, at::tensor(ref["inputs"]["labels"].get<std::vector<int64_t>>()));
      ++set;
      continue;
    }
    if (values == nullptr) continue;
    interpreter.set_tensor(t.id, at::tensor(values->get<std::vector<double>>()).to(at::kFloat).reshape(t.shape));
    ++set;
  }
  CHECK(set == 17 + 2);  // every parameter, the images and the labels

  const exec::StepResult r = interpreter.step();
  REQUIRE_FALSE(r.oom);
  REQUIRE(r.losses.size() == 1);
  CHECK(r.losses[0] == doctest::Approx(ref["loss"].get<double>()).epsilon(1e-5));
  int32_t compared = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role != TensorRole::gradient) continue;
    const std::string weight = t.name.substr(0, t.name.size() - std::string(".grad").size());
    REQUIRE(ref["grads"].contains(weight));
    CAPTURE(weight);
    const at::Tensor expected = at::tensor(ref["grads"][weight].get<std::vector<double>>()).reshape(t.shape);
    const at::Tensor got = interpreter.tensor(t.id).to(at::kDouble).cpu();
    CHECK(at::allclose(got, expected, /*rtol=*/1e-4, /*atol=*/1e-6));
    ++compared;
  }
  CHECK(compared == 17);
}

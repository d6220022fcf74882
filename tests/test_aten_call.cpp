// io/aten_call: an execution trace's aten call typed as a mutwo kind, for the calls torchvision's
// DenseNet, GoogLeNet, Inception and EfficientNet record beside ResNet's (real traces of ResNet,
// MobileNet and ViT are checked in test_execution_trace.cpp): the argument values as PyTorch 1.13's
// execution observer writes them (aten::avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override), aten::max_pool2d(self, kernel_size, stride, padding,
// dilation, ceil_mode)).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "io/aten_call.hpp"

using namespace mutwo;
using namespace mutwo::io;
using Shape = std::vector<int64_t>;

namespace {

struct Call {
  nlohmann::json values;
  AtenArguments args;
};

// A call on one float tensor `x` followed by `rest` (values and types).
Call call(const Shape& x, const nlohmann::json& rest, const std::vector<std::string>& rest_types,
          const Shape& out) {
  Call c;
  c.values = nlohmann::json::array({"<tensor>"});
  for (const auto& v : rest) c.values.push_back(v);
  c.args.types = {"Tensor(float)"};
  c.args.shapes = {x};
  for (const std::string& t : rest_types) {
    c.args.types.push_back(t);
    c.args.shapes.push_back({});
  }
  c.args.output_shapes = {out};
  return c;
}

}  // namespace

TEST_CASE("aten::avg_pool2d is avg_pool2d with its ceil_mode and padding rule; FLOPs by the kind's rule") {
  // Inception-v3's branch pool: 3x3, stride 1, padding 1, on [2,192,35,35].
  Call c =
      call({2, 192, 35, 35}, {{3, 3}, {1, 1}, {1, 1}, false, true, nullptr},
           {"GenericList[Int,Int]", "GenericList[Int,Int]", "GenericList[Int,Int]", "Bool", "Bool", "None"},
           {2, 192, 35, 35});
  c.args.values = &c.values;
  const auto typed = type_aten_call("aten::avg_pool2d", c.args);
  REQUIRE(typed);
  CHECK(typed->kind == ir::OpKind::avg_pool2d);
  REQUIRE(typed->outputs.size() == 1);
  CHECK(typed->outputs[0].shape == Shape{2, 192, 35, 35});
  CHECK(typed->flops == int64_t{2 * 192 * 35 * 35} * 10);  // 9 window adds and a divide per output
  // DenseNet's transition: 2x2, stride [] (the kernel's).
  Call t = call({2, 128, 56, 56}, {{2, 2}, nlohmann::json::array(), {0, 0}, false, true, nullptr},
                {"GenericList[Int,Int]", "GenericList[]", "GenericList[Int,Int]", "Bool", "Bool", "None"},
                {2, 128, 28, 28});
  t.args.values = &t.values;
  const auto transition = type_aten_call("aten::avg_pool2d", t.args);
  REQUIRE(transition);
  CHECK(transition->outputs[0].shape == Shape{2, 128, 28, 28});
  // A divisor override has no kind: the call stays untyped.
  t.values[6] = 3;
  t.args.types[6] = "Int";
  CHECK_FALSE(type_aten_call("aten::avg_pool2d", t.args));
}

TEST_CASE("aten::max_pool2d with ceil_mode (GoogLeNet) is typed with it; the output follows ATen's shape") {
  Call c = call({2, 64, 112, 112}, {{3, 3}, {2, 2}, {0, 0}, {1, 1}, true},
                {"GenericList[Int,Int]", "GenericList[Int,Int]", "GenericList[Int,Int]",
                 "GenericList[Int,Int]", "Bool"},
                {2, 64, 56, 56});
  c.args.values = &c.values;
  const auto typed = type_aten_call("aten::max_pool2d", c.args);
  REQUIRE(typed);
  CHECK(typed->kind == ir::OpKind::max_pool2d);
  CHECK(typed->outputs[0].shape == Shape{2, 64, 56, 56});  // floor would give 55
  CHECK(std::get<int64_t>(typed->attrs.at("ceil_mode")) == 1);
}

TEST_CASE("aten::silu and aten::silu_ are silu (EfficientNet)") {
  for (const char* name : {"aten::silu", "aten::silu_"}) {
    Call c = call({2, 32, 112, 112}, nlohmann::json::array(), {}, {2, 32, 112, 112});
    c.args.values = &c.values;
    const auto typed = type_aten_call(name, c.args);
    REQUIRE(typed);
    CHECK(typed->kind == ir::OpKind::silu);
  }
}

TEST_CASE(
    "aten::softmax and aten::_softmax: a half input read into float (autocast on CUDA) is attr dtype fp32") {
  // _softmax(self, dim, half_to_float) on [2,4,8] scores; softmax(self, dim, dtype) with dtype 6
  // (c10::ScalarType::Float), the call autocast makes; `x` the input's type.
  const auto typed = [](const char* name, const char* x, const nlohmann::json& rest, const char* rest_type) {
    Call c = call({2, 4, 8}, rest, {"Int", rest_type}, {2, 4, 8});
    c.args.types[0] = x;
    c.args.values = &c.values;
    return type_aten_call(name, c.args);
  };
  const auto fused = typed("aten::_softmax", "Tensor(c10::Half)", {-1, true}, "Bool");
  REQUIRE(fused);
  CHECK(fused->kind == ir::OpKind::softmax);
  CHECK(std::get<std::string>(fused->attrs.at("dtype")) == "fp32");
  CHECK(fused->outputs[0].dtype == ir::DType::f32);
  CHECK(fused->outputs[0].bytes == 2 * 4 * 8 * 4);
  const auto with_dtype = typed("aten::softmax", "Tensor(c10::Half)", {-1, 6}, "ScalarType");
  REQUIRE(with_dtype);
  CHECK(with_dtype->outputs[0].dtype == ir::DType::f32);
  // Without a conversion the output keeps the input's dtype and no attribute is set.
  const auto plain = typed("aten::_softmax", "Tensor(float)", {-1, false}, "Bool");
  REQUIRE(plain);
  CHECK(plain->attrs.count("dtype") == 0);
  CHECK(plain->outputs[0].dtype == ir::DType::f32);
  const auto none = typed("aten::softmax", "Tensor(c10::Half)", {-1, nullptr}, "None");
  REQUIRE(none);
  CHECK(none->attrs.count("dtype") == 0);
  CHECK(none->outputs[0].dtype == ir::DType::f16);
  // half_to_float on a float input, or a conversion to half, is no one-kernel call of ATen's.
  CHECK_FALSE(typed("aten::_softmax", "Tensor(float)", {-1, true}, "Bool"));
  CHECK_FALSE(typed("aten::softmax", "Tensor(float)", {-1, 5}, "ScalarType"));
}

// A fused 1x1 convolution priced as the executor runs it: one batched GEMM per pass
// (costmodel/pointwise_conv_kernels.hpp, ir/conv_lowering.hpp), and as cuDNN's kernels per model
// when its op does not record that lowering (a schedule of an earlier lease).
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/waves_cost_model.hpp"
#include "ir/graph_builder.hpp"
#include "tests/support/zoo_step.hpp"
#include "transforms/autodiff.hpp"
#include "transforms/fusion.hpp"

using namespace mutwo::costmodel;
using namespace mutwo::ir;
using namespace mutwo::transforms;

namespace {

// A 3x3 conv (so that the projection's input needs a gradient), then ResNet's downsample: a 1x1
// convolution of stride 2, 16 -> 32 channels on 14x14 images, batch 8; 4 models fused and trained.
Graph downsample_step() {
  GraphBuilder b("downsample", DType::f32, 1, 8);
  const TensorId x = b.add_input("image", {8, 16, 14, 14}, TensorRole::input, FuseAxis::dim1);
  const TensorId w3 = b.add_weight("conv.weight", {16, 16, 3, 3}, FuseAxis::dim0);
  const TensorId w1 = b.add_weight("proj.weight", {32, 16, 1, 1}, FuseAxis::dim0);
  const TensorId h = b.op(OpKind::conv2d, "conv", {x, w3}, {{"padding", std::vector<int64_t>{1, 1}}});
  const TensorId y = b.op(OpKind::conv2d, "proj", {h, w1}, {{"stride", std::vector<int64_t>{2, 2}}});
  const TensorId pooled =
      b.op(OpKind::adaptive_avg_pool2d, "pool", {y}, {{"output_size", std::vector<int64_t>{1, 1}}});
  const TensorId flat = b.op(OpKind::flatten, "flat", {pooled}, {{"start_dim", int64_t{1}}});
  const TensorId labels = b.add_input("labels", {8}, TensorRole::label, FuseAxis::stack, DType::i64);
  b.add_op(OpKind::cross_entropy, "loss", {flat, labels});
  return build_training_step(horizontal_fuse(std::move(b).finish(), 4), OptimizerConfig{});
}

}  // namespace

TEST_CASE("a fused 1x1 convolution is priced as one batched GEMM per pass, as the executor runs it") {
  const Graph step = downsample_step();
  const Op& proj = mutwo::test::op_named(step, "proj");
  const Op& backward = mutwo::test::op_named(step, "proj.backward");
  // N = 8 images, G = 4 groups (models), Ci = 16, Co = 32, stride 2: P x Q = 7 x 7 = 49 pixels.
  // Forward: the sampled input copied (2 x 8*4*16*49 = 50,176 elements, 4 bytes each), the weight
  // over the 8 images (read once, written 8 times: 9 * 4*32*16 = 18,432 elements), then 32 products
  // Co x PQ x Ci: 2 * 32 * 32 * 49 * 16 = 1,605,632 FLOPs, 32 * (32*16 + 16*49 + 32*49) * 4 = 366,592
  // bytes.
  // The executor's temporaries, held by the memory rule in both passes: the weight over the 8 images
  // (8 * 128 * 16 = 16,384 elements) and the sampled input (8 * 64 * 49 = 25,088), 4 bytes each.
  CHECK(proj.workspace_bytes == 165'888);
  CHECK(backward.workspace_bytes == 165'888);
  const std::vector<OpKernel> fwd = op_kernels(step, proj);
  REQUIRE(fwd.size() == 3);
  CHECK(fwd[0].kernel == "copy");
  CHECK(fwd[0].helper);
  CHECK(fwd[0].sample.bytes == 200'704);
  CHECK((fwd[1].kernel == "copy" && fwd[1].helper && fwd[1].sample.bytes == 73'728));
  CHECK(fwd[2].kernel == "gemm");
  CHECK(fwd[2].launches == 1);
  CHECK(
      (fwd[2].sample.batch == 32 && fwd[2].sample.m == 32 && fwd[2].sample.n == 49 && fwd[2].sample.k == 16));
  CHECK(fwd[2].sample.flops == 1'605'632);
  CHECK(fwd[2].sample.bytes == 366'592);
  // Backward: W^T over the images (18,432 elements), dX = W^T dY (32 products 16 x 49 x 32), the zeros of dX
  // (8*64*14*14 = 100,352 elements) and the scatter into them; dW: the sampled input again, 32 products 32 x
  // 16 x 49, and the sum over the 8 images of 32 * 32 * 16 = 16,384 elements.
  const std::vector<OpKernel> bwd = op_kernels(step, backward);
  REQUIRE(bwd.size() == 7);
  CHECK((bwd[0].kernel == "copy" && bwd[0].sample.bytes == 73'728));
  CHECK((bwd[1].kernel == "gemm" && bwd[1].sample.batch == 32 && bwd[1].sample.m == 16 &&
         bwd[1].sample.n == 49 && bwd[1].sample.k == 32));
  CHECK((bwd[2].kernel == "copy" && bwd[2].sample.bytes == 100'352 * 4));
  CHECK((bwd[3].kernel == "copy" && bwd[3].sample.bytes == 200'704));
  CHECK((bwd[4].kernel == "copy" && bwd[4].sample.bytes == 200'704));
  CHECK((bwd[5].kernel == "gemm" && bwd[5].sample.batch == 32 && bwd[5].sample.m == 32 &&
         bwd[5].sample.n == 16 && bwd[5].sample.k == 49));
  CHECK((bwd[6].kernel == "sum_to_shape" && bwd[6].category == KindCategory::reduction &&
         bwd[6].sample.bytes == 16'384 * 4));
  // The waves source's price is the sum of these kernels' prices, in TF32 on the H100: the executor
  // runs them under cuDNN's TF32 flag (on by PyTorch's default), the convolution's math.
  const DeviceSpec h100 = find_device("h100-sxm-80gb");
  const WaveCostModel waves(h100, std::make_shared<WaveModel>(shipped_wave_model()));
  CHECK(op_precision(step, proj, h100, AnalyticOptions{}) == "tf32");
  CHECK(op_precision(step, backward, h100, AnalyticOptions{}) == "tf32");
  AnalyticOptions no_tf32;
  no_tf32.allow_tf32_conv = false;
  CHECK(op_precision(step, proj, h100, no_tf32) == "fp32");
  for (const Op* op : {&proj, &backward}) {
    double sum_ns = 0;
    for (const OpKernel& k : op_kernels(step, *op)) sum_ns += waves.kernel_ns(k, "tf32").value();
    CHECK(waves.op_duration_ns(step, *op) == static_cast<int64_t>(std::ceil(sum_ns)));
  }
  // The 3x3 convolution stays cuDNN's, one kernel per model.
  const std::vector<OpKernel> conv = op_kernels(step, mutwo::test::op_named(step, "conv"));
  REQUIRE(conv.size() == 1);
  CHECK((conv[0].kernel == "conv2d_forward" && conv[0].launches == 4));
}

TEST_CASE("without the recorded lowering a fused 1x1 convolution is priced as its models' cuDNN kernels") {
  Graph step = downsample_step();
  for (Op& op : step.ops) op.attrs.erase("lowering");  // as the schedules of earlier leases
  const std::vector<OpKernel> fwd = op_kernels(step, mutwo::test::op_named(step, "proj"));
  REQUIRE(fwd.size() == 1);
  CHECK(fwd[0].kernel == "conv2d_forward");
  CHECK(fwd[0].variant == "1x1-strided");  // per model: the class of each model's own kernel
  CHECK(fwd[0].launches == 4);
  const std::vector<OpKernel> bwd = op_kernels(step, mutwo::test::op_named(step, "proj.backward"));
  REQUIRE(bwd.size() == 2);
  CHECK((bwd[0].kernel == "conv2d_backward_data" && bwd[0].launches == 4));
  CHECK((bwd[1].kernel == "conv2d_backward_filter" && bwd[1].launches == 4));
}

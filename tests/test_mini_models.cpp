// Test-scale variants of the zoo (zoo/mini_models.cpp): built by the same family builders
// as the published models, so the same op kinds and tensor names at small dimensions; each fuses at
// width 2 and 3 and gets a training step. Parameter counts are derived from the dims beside each
// assertion.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "transforms/fusion.hpp"
#include "zoo/family_builders.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::transforms;
using namespace mutwo::zoo;
using mutwo::Error;
using mutwo::UnknownNameError;

namespace {

const std::vector<std::string> kMinis = {
    "bert-mini",        "gpt2-mini",        "vit-mini", "resnet-mini", "resnet-bottleneck-mini",
    "mobilenetv2-mini", "mobilenetv3-mini", "dlrm-mini"};

// The published model each variant shrinks (also what its reference names).
const std::map<std::string, std::string> kPublished = {{"bert-mini", "bert-base"},
                                                       {"gpt2-mini", "gpt2"},
                                                       {"vit-mini", "vit-b16"},
                                                       {"resnet-mini", "resnet18"},
                                                       {"resnet-bottleneck-mini", "resnet50"},
                                                       {"mobilenetv2-mini", "mobilenet-v2"},
                                                       {"mobilenetv3-mini", "mobilenet-v3-large"},
                                                       {"dlrm-mini", "dlrm"}};

Graph mini(const std::string& name, int32_t width = 1) {
  ModelConfig cfg;
  cfg.width = width;
  return build_model(name, cfg);
}

// The published model at batch 1 and a small sequence / image, so that building it is cheap (shapes
// only, no tensor is allocated); its kinds do not depend on the sizes.
Graph published_small(const std::string& name) {
  const ModelInfo& info = builtin_models().find(name);
  ModelConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = info.default_seq_len > 0 ? 8 : 0;
  cfg.image_size = info.default_image_size > 0 ? (info.family == "vit" ? 16 : 32) : 0;
  return build_model(name, cfg);
}

std::set<OpKind> kinds_of(const Graph& g) {
  std::set<OpKind> kinds;
  for (const Op& op : g.ops) kinds.insert(op.kind);
  return kinds;
}

std::string kinds_text(const std::set<OpKind>& kinds) {
  std::string out;
  for (OpKind k : kinds) {
    if (!out.empty()) out += ' ';
    out += kind_name(k);
  }
  return out;
}

std::set<std::string> tensor_names(const Graph& g) {
  std::set<std::string> names;
  for (const Tensor& t : g.tensors) names.insert(t.name);
  return names;
}

// "31,458": the count as the description writes it.
std::string with_commas(int64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Registry

TEST_CASE("the test-scale registry holds one variant per zoo family, apart from the zoo") {
  CHECK(mini_models().names() == kMinis);
  std::set<std::string> zoo_families, mini_families;
  for (const ModelInfo& info : builtin_models().models()) zoo_families.insert(info.family);
  for (const ModelInfo& info : mini_models().models()) mini_families.insert(info.family);
  CHECK(mini_families == zoo_families);
  // The zoo lists only published models: 12, none of them a mini.
  CHECK(builtin_models().models().size() == 13);
  for (const std::string& name : kMinis) CHECK_FALSE(builtin_models().contains(name));
  CHECK_THROWS_AS(builtin_models().find("bert-mini"), UnknownNameError);
}

TEST_CASE("each variant names the published model it shrinks, its family and its parameter count") {
  for (const ModelInfo& info : mini_models().models()) {
    CAPTURE(info.name);
    const std::string& published = kPublished.at(info.name);
    CHECK(info.reference == "test-scale variant of " + published);
    CHECK(info.family == builtin_models().find(published).family);
    CHECK(info.description.find(with_commas(parameter_count(mini(info.name)))) != std::string::npos);
  }
}

TEST_CASE("build_model resolves minis with batch 2, seq 8, 32 px images (vit 16 px) by default") {
  const Graph bert = build_model("bert-mini", {});
  CHECK(bert.name == "bert-mini");
  CHECK(bert.batch_size == 2);
  CHECK(find_model("bert-mini").default_seq_len == 8);
  CHECK(find_model("gpt2-mini").default_seq_len == 8);
  CHECK(find_model("vit-mini").default_image_size == 16);
  for (const char* cnn : {"resnet-mini", "resnet-bottleneck-mini", "mobilenetv2-mini", "mobilenetv3-mini"})
    CHECK(find_model(cnn).default_image_size == 32);
  CHECK(find_model("dlrm-mini").default_batch_size == 2);
  // The zoo is searched first: published names resolve as before.
  CHECK(&find_model("bert-base") == &builtin_models().find("bert-base"));
  ModelConfig two;
  two.width = 2;
  CHECK(build_model("resnet-mini", two).name == "resnet-mini x2");
}

TEST_CASE("an unknown name lists the zoo first, then the test-scale variants") {
  CHECK_THROWS_WITH_AS(build_model("bert-tiny", {}),
                       "unknown model 'bert-tiny'; valid: bert-base, bert-large, gpt2, gpt2-medium, gpt2-xl, vit-b16, "
                       "vit-l16, resnet18, resnet50, resnet101, mobilenet-v2, mobilenet-v3-large, dlrm; "
                       "test-scale: bert-mini, gpt2-mini, vit-mini, resnet-mini, resnet-bottleneck-mini, "
                       "mobilenetv2-mini, mobilenetv3-mini, dlrm-mini",
                       UnknownNameError);
}

// ---------------------------------------------------------------------------------------------
// Parameter counts, derived from the dims

TEST_CASE("bert-mini: 2 layers, H 32, 2 heads, vocab 96, 16 positions, 2 token types = 31,458 parameters") {
  // embeddings: word 96*32 + position 16*32 + type 2*32 + LayerNorm 2*32    = 3,712
  // layer: q,k,v,o 4*(32*32+32) + LN 64 + intermediate 32*128+128
  //        + output 128*32+32 + LN 64 = 4,224 + 64 + 4,224 + 4,128 + 64       = 12,704, x2 = 25,408
  // pooler 32*32+32 = 1,056; MLM transform 32*32+32 + LN 64 + decoder bias 96 = 1,216
  // (decoder weight tied to the word embeddings); NSP 32*2+2 = 66
  CHECK(parameter_count(mini("bert-mini")) == 3712 + 25408 + 1056 + 1216 + 66);
}

TEST_CASE("gpt2-mini: 2 layers, H 32, 2 heads, vocab 96, 16 positions = 29,056 parameters") {
  // wte 96*32 = 3,072 (lm_head tied to it), wpe 16*32 = 512
  // block: ln_1 64 + q,k,v 3*(32*32+32) + c_proj 32*32+32 + ln_2 64 + c_fc 32*128+128
  //        + mlp.c_proj 128*32+32 = 64 + 3,168 + 1,056 + 64 + 4,224 + 4,128 = 12,704, x2 = 25,408
  // ln_f 64
  CHECK(parameter_count(mini("gpt2-mini")) == 3072 + 512 + 25408 + 64);
}

TEST_CASE("vit-mini: 2 layers, H 32, 2 heads, MLP 64, patch 4 on 16 px, 10 classes = 19,626 parameters") {
  // conv_proj 32*3*4*4+32 = 1,568; class token 32; pos embedding (1 + 4*4 patches)*32 = 544
  // layer: ln_1 64 + q,k,v 3*(32*32+32) + out_proj 32*32+32 + ln_2 64 + mlp.0 32*64+64
  //        + mlp.3 64*32+32 = 64 + 3,168 + 1,056 + 64 + 2,112 + 2,080 = 8,544, x2 = 17,088
  // encoder.ln 64; head 32*10+10 = 330
  CHECK(parameter_count(mini("vit-mini")) == 1568 + 32 + 544 + 17088 + 64 + 330);
}

TEST_CASE("resnet-mini: basic blocks [2,2,2,2], widths 4-8-16-32, stem 4, 10 classes = 45,102 parameters") {
  // Each conv is followed by a batchnorm of 2*C; the first block of layers 2-4 has a 1x1 downsample.
  const int64_t stem = 4 * 3 * 7 * 7 + 8;                                      // 596
  const int64_t layer1 = 2 * (4 * 4 * 9 + 8 + 4 * 4 * 9 + 8);                  // 608
  const int64_t layer2 = (8 * 4 * 9 + 16 + 8 * 8 * 9 + 16 + 8 * 4 + 16)        // 944
                         + (8 * 8 * 9 + 16 + 8 * 8 * 9 + 16);                  // + 1,184
  const int64_t layer3 = (16 * 8 * 9 + 32 + 16 * 16 * 9 + 32 + 16 * 8 + 32)    // 3,680
                         + (16 * 16 * 9 + 32 + 16 * 16 * 9 + 32);              // + 4,672
  const int64_t layer4 = (32 * 16 * 9 + 64 + 32 * 32 * 9 + 64 + 32 * 16 + 64)  // 14,528
                         + (32 * 32 * 9 + 64 + 32 * 32 * 9 + 64);              // + 18,560
  const int64_t fc = 32 * 10 + 10;                                             // 330
  CHECK(stem + layer1 + layer2 + layer3 + layer4 + fc == 45102);
  CHECK(parameter_count(mini("resnet-mini")) == 45102);
}

TEST_CASE("resnet-bottleneck-mini: bottlenecks [3,4,6,3], widths 4-8-16-32 (x4 out) = 96,782 parameters") {
  // Bottleneck(in, p): 1x1 in->p, 3x3 p->p, 1x1 p->4p, each with a batchnorm; the first block of
  // every stage has a 1x1 downsample in->4p (layer1 too: 4 -> 16).
  auto block = [](int64_t in, int64_t p, bool downsample) {
    return in * p + 2 * p + p * p * 9 + 2 * p + p * 4 * p + 2 * 4 * p +
           (downsample ? in * 4 * p + 2 * 4 * p : 0);
  };
  const int64_t stem = 4 * 3 * 7 * 7 + 8;                                  // 596
  const int64_t layer1 = block(4, 4, true) + 2 * block(16, 4, false);      // 368 + 2*320 = 1,008
  const int64_t layer2 = block(16, 8, true) + 3 * block(32, 8, false);     // 1,632 + 3*1,184 = 5,184
  const int64_t layer3 = block(32, 16, true) + 5 * block(64, 16, false);   // 6,208 + 5*4,544 = 28,928
  const int64_t layer4 = block(64, 32, true) + 2 * block(128, 32, false);  // 24,192 + 2*17,792 = 59,776
  const int64_t fc = 128 * 10 + 10;                                        // 1,290
  CHECK(layer1 == 1008);
  CHECK(layer2 == 5184);
  CHECK(layer3 == 28928);
  CHECK(layer4 == 59776);
  CHECK(parameter_count(mini("resnet-bottleneck-mini")) == stem + layer1 + layer2 + layer3 + layer4 + fc);
  CHECK(stem + layer1 + layer2 + layer3 + layer4 + fc == 96782);
}

TEST_CASE(
    "mobilenetv2-mini: 8 -> t1 8, t6 16x2 /2, t6 24x2 /2, t6 32 -> 64, 10 classes = 33,354 parameters") {
  // Every conv has no bias and a batchnorm of 2*C. Block in->out with t: [expand 1x1 in->t*in]
  // dw 3x3 (t*in)*9, project 1x1 t*in->out.
  const int64_t stem = 8 * 3 * 9 + 16;                                // 232
  const int64_t f1 = 8 * 9 + 16 + 8 * 8 + 16;                         // t1: 168
  const int64_t f2 = 8 * 48 + 96 + 48 * 9 + 96 + 48 * 16 + 32;        // 8->16: 1,808
  const int64_t f3 = 16 * 96 + 192 + 96 * 9 + 192 + 96 * 16 + 32;     // 16->16: 4,352
  const int64_t f4 = 16 * 96 + 192 + 96 * 9 + 192 + 96 * 24 + 48;     // 16->24: 5,136
  const int64_t f5 = 24 * 144 + 288 + 144 * 9 + 288 + 144 * 24 + 48;  // 24->24: 8,832
  const int64_t f6 = 24 * 144 + 288 + 144 * 9 + 288 + 144 * 32 + 64;  // 24->32: 10,000
  const int64_t last = 32 * 64 + 128;                                 // 2,176
  const int64_t classifier = 64 * 10 + 10;                            // 650
  CHECK(parameter_count(mini("mobilenetv2-mini")) == stem + f1 + f2 + f3 + f4 + f5 + f6 + last + classifier);
  CHECK(stem + f1 + f2 + f3 + f4 + f5 + f6 + last + classifier == 33354);
}

TEST_CASE(
    "mobilenetv3-mini: 5 bnecks with SE and hardswish, last conv 144, classifier 64 = 32,434 parameters") {
  // Convs without bias + batchnorm 2*C; SE: fc1 exp->sq and fc2 sq->exp 1x1 convs with bias, squeeze =
  // _make_divisible(exp/4, 8): 48/4 = 12 -> 16, 72/4 = 18 -> 16 < 0.9*18, so 24.
  const int64_t stem = 8 * 3 * 9 + 16;                          // 232
  const int64_t b1 = 8 * 9 + 16 + 8 * 8 + 16;                   // no expand: 168
  const int64_t b2 = 8 * 32 + 64 + 32 * 9 + 64 + 32 * 16 + 32;  // 1,216
  const int64_t b3 = 16 * 48 + 96 + 48 * 25 + 96 + (48 * 16 + 16 + 16 * 48 + 48) + 48 * 16 + 32;    // 4,560
  const int64_t b4 = 16 * 64 + 128 + 64 * 9 + 128 + 64 * 24 + 48;                                   // 3,440
  const int64_t b5 = 24 * 72 + 144 + 72 * 25 + 144 + (72 * 24 + 24 + 24 * 72 + 72) + 72 * 24 + 48;  // 9,144
  const int64_t last = 24 * 144 + 288;                      // 6 x 24 = 144: 3,744
  const int64_t classifier = 144 * 64 + 64 + 64 * 10 + 10;  // 9,930
  CHECK(parameter_count(mini("mobilenetv3-mini")) == stem + b1 + b2 + b3 + b4 + b5 + last + classifier);
  CHECK(stem + b1 + b2 + b3 + b4 + b5 + last + classifier == 32434);
}

TEST_CASE("dlrm-mini: 3 tables x 16, bottom 13-64-32-16, top 22-64-32-1 = 9,393 parameters") {
  const int64_t tables = (64 + 48 + 32) * 16;                         // 2,304
  const int64_t bottom = 13 * 64 + 64 + 64 * 32 + 32 + 32 * 16 + 16;  // 3,504
  // Interaction: dense 16 + 4*3/2 pairwise dots of 4 vectors = 22 features.
  const int64_t top = 22 * 64 + 64 + 64 * 32 + 32 + 32 * 1 + 1;  // 3,585
  CHECK(parameter_count(mini("dlrm-mini")) == tables + bottom + top);
  CHECK(tables + bottom + top == 9393);
}

// ---------------------------------------------------------------------------------------------
// Faithful to the family

TEST_CASE("each mini uses exactly the forward op kinds of the published model it shrinks") {
  for (const std::string& name : kMinis) {
    CAPTURE(name);
    const std::set<OpKind> small = kinds_of(mini(name));
    const std::set<OpKind> published = kinds_of(published_small(kPublished.at(name)));
    INFO("mini: " << kinds_text(small) << "\npublished: " << kinds_text(published));
    CHECK(small == published);
  }
}

TEST_CASE("minis keep the family's signature kinds and attributes") {
  const Graph bert = mini("bert-mini");
  const Graph gpt2 = mini("gpt2-mini");
  auto has = [](const Graph& g, OpKind kind, const char* attr = nullptr, int64_t value = 0) {
    for (const Op& op : g.ops) {
      if (op.kind != kind) continue;
      if (attr == nullptr || attr_int_or(op.attrs, attr, -1, op.name) == value) return true;
    }
    return false;
  };
  CHECK(has(bert, OpKind::attn_scores, "causal", 0));
  CHECK(has(bert, OpKind::gelu, "approximate", 0));  // erf GELU
  CHECK(has(gpt2, OpKind::attn_scores, "causal", 1));
  CHECK(has(gpt2, OpKind::gelu, "approximate", 1));  // tanh GELU
  // Both BERT losses, and the decoder tied to the word embeddings (read by two ops).
  int losses = 0;
  for (const Op& op : bert.ops) losses += op.kind == OpKind::cross_entropy ? 1 : 0;
  CHECK(losses == 2);
  for (const Tensor& t : bert.tensors) {
    if (t.name == "bert.embeddings.word_embeddings.weight") CHECK(t.consumers.size() == 2);
  }
}

TEST_CASE("mini tensor names are the published model's state_dict names") {
  // Fewer layers, so the names are a subset (resnets: the same blocks, so the very same names).
  for (const char* name : {"bert-mini", "gpt2-mini", "vit-mini", "dlrm-mini"}) {
    CAPTURE(name);
    const std::set<std::string> small = tensor_names(mini(name));
    const std::set<std::string> published = tensor_names(published_small(kPublished.at(name)));
    int missing = 0;
    for (const std::string& n : small) {
      if (published.count(n) == 0 && ++missing <= 3) FAIL_CHECK("'" << n << "' is not a published name");
    }
    CHECK(missing == 0);
  }
  CHECK(tensor_names(mini("resnet-mini")) == tensor_names(published_small("resnet18")));
  CHECK(tensor_names(mini("resnet-bottleneck-mini")) == tensor_names(published_small("resnet50")));
  // MobileNets: torchvision's module paths, e.g. the SE of a V3 block and a V2 expansion.
  const std::set<std::string> v3 = tensor_names(mini("mobilenetv3-mini"));
  CHECK(v3.count("features.3.block.2.fc1.weight") == 1);
  CHECK(v3.count("classifier.3.weight") == 1);
  const std::set<std::string> v2 = tensor_names(mini("mobilenetv2-mini"));
  CHECK(v2.count("features.2.conv.0.0.weight") == 1);
  CHECK(v2.count("features.1.conv.0.0.weight") == 1);  // t = 1: the depthwise conv comes first
  CHECK(v2.count("classifier.1.weight") == 1);
}

TEST_CASE("every mini stays small: under 2e5 parameters and 1e7 forward FLOPs at its defaults") {
  for (const std::string& name : kMinis) {
    CAPTURE(name);
    const Graph g = mini(name);
    CHECK(parameter_count(g) >= 5000);
    CHECK(parameter_count(g) <= 200000);
    CHECK(flops_in_phase(g, Phase::forward) < 10'000'000);
  }
}

// ---------------------------------------------------------------------------------------------
// Fusion and training steps

TEST_CASE("every mini fused at width 2 and 3 equals its native width-k build, with k x parameters") {
  for (const std::string& name : kMinis) {
    const Graph one = mini(name);
    for (int32_t k : {2, 3}) {
      CAPTURE(name);
      CAPTURE(k);
      const Graph fused = horizontal_fuse(one, k);
      const Graph native = mini(name, k);
      CHECK_NOTHROW(validate(fused));
      CHECK(fused.width == k);
      CHECK(parameter_count(fused) == k * parameter_count(one));
      CHECK(flops_in_phase(fused, Phase::forward) == k * flops_in_phase(one, Phase::forward));
      REQUIRE(fused.tensors.size() == native.tensors.size());
      REQUIRE(fused.ops.size() == native.ops.size());
      int mismatches = 0;
      for (size_t i = 0; i < fused.tensors.size(); ++i) {
        const Tensor& f = fused.tensors[i];
        const Tensor& n = native.tensors[i];
        if (f.name != n.name || f.shape != n.shape || f.dtype != n.dtype || f.role != n.role) ++mismatches;
      }
      for (size_t i = 0; i < fused.ops.size(); ++i) {
        const Op& f = fused.ops[i];
        const Op& n = native.ops[i];
        if (f.kind != n.kind || f.name != n.name || f.attrs != n.attrs || f.flops != n.flops) ++mismatches;
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("every mini and fused mini gets a valid training step with one gradient per weight") {
  for (const std::string& name : kMinis) {
    for (int32_t k : {1, 2, 3}) {
      CAPTURE(name);
      CAPTURE(k);
      const Graph forward = k == 1 ? mini(name) : horizontal_fuse(mini(name), k);
      for (OptimizerKind opt : {OptimizerKind::sgd, OptimizerKind::adam}) {
        OptimizerConfig config;
        config.kind = opt;
        const Graph step = build_training_step(forward, config);
        CHECK_NOTHROW(validate(step));
        int64_t weights = 0, gradients = 0, backward = 0, updates = 0;
        for (const Tensor& t : step.tensors) {
          weights += t.role == TensorRole::weight ? 1 : 0;
          gradients += t.role == TensorRole::gradient ? 1 : 0;
        }
        for (const Op& op : step.ops) {
          backward += op.phase == Phase::backward ? 1 : 0;
          updates += op.phase == Phase::optimizer ? 1 : 0;
        }
        CHECK(gradients >= weights);  // every weight's gradient, plus activation gradients
        CHECK(backward > 0);
        CHECK(updates == weights);  // one optimizer step per weight
        CHECK(parameter_count(step) == parameter_count(forward));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Spec checks of the family builders

TEST_CASE("family builders refuse bad specs and over-long inputs, naming the model and field") {
  ModelConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 8;
  CHECK_THROWS_WITH_AS(build_bert("b", BertSpec{2, 30, 4, 96, 16, 2}, cfg),
                       "model 'b': 4 heads do not divide hidden 30", Error);
  CHECK_THROWS_WITH_AS(build_gpt2("g", Gpt2Spec{2, 32, 2, 0, 16}, cfg),
                       "model 'g': spec field 'vocab_size' = 0 must be >= 1", Error);
  ModelConfig long_seq = cfg;
  long_seq.seq_len = 17;
  CHECK_THROWS_WITH_AS(build_model("bert-mini", long_seq),
                       "model 'bert-mini': sequence length 17 exceeds max_position_embeddings 16", Error);
  CHECK_THROWS_WITH_AS(build_model("gpt2-mini", long_seq),
                       "model 'gpt2-mini': sequence length 17 exceeds n_positions 16", Error);
  ModelConfig odd_image;
  odd_image.image_size = 18;
  CHECK_THROWS_WITH_AS(build_model("vit-mini", odd_image),
                       "model 'vit-mini': image size 18 must be a positive multiple of the patch size 4",
                       Error);
  DlrmSpec dlrm;
  dlrm.table_rows = {4};
  dlrm.sparse_feature_size = 8;
  dlrm.bottom_mlp = {13, 4};  // ends at 4, not the embedding size 8
  dlrm.top_mlp = {1};
  CHECK_THROWS_WITH_AS(build_dlrm("d", dlrm, cfg), doctest::Contains("must end at the sparse feature size 8"),
                       Error);
  MobileNetV3Spec v3;
  v3.setting = {{8, 3, 8, 8, false, false, 1}, {16, 3, 32, 16, false, false, 1}};  // second expects 16
  v3.last_channel = 16;
  v3.num_classes = 2;
  ModelConfig image = cfg;
  image.image_size = 32;
  CHECK_THROWS_WITH_AS(build_mobilenet_v3("m", v3, image),
                       "model 'm': block features.2 expects 16 input channels, gets 8", Error);
  ResNetSpec resnet{false, {2, 0, 2, 2}, {4, 8, 16, 32}, 4, 10};
  CHECK_THROWS_WITH_AS(build_resnet("r", resnet, image), "model 'r': spec field 'blocks[1]' = 0 must be >= 1",
                       Error);
}

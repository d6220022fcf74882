// NeuSight's measured operator times read into the calibration format: every op type, the shape
// semantics its collection script gives (N is the reduction), the eager-op timing, and refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/neusight_csv.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

using namespace mutwo::costmodel;

namespace {

const std::string kDir = std::string(MUTWO_TEST_FIXTURES) + "/calibration/neusight";

constexpr const char* kGemmHeader =
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid "
    "y,Grid "
    "z,Block x,Block y,Block z,CUDA Version,Kernels,B,M,N,K\n";
constexpr const char* kVectorHeader =
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid "
    "y,Grid "
    "z,Block x,Block y,Block z,CUDA Version,B,H\n";

std::string refusal(const std::string& text) {
  try {
    convert_neusight_csv(text, "n.csv");
  } catch (const mutwo::FormatError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("NeuSight rows: linear and bmm become gemm rows with N as the reduction") {
  // The first A100 linear and bmm rows of the fixture.
  const std::string text =
      std::string(kGemmHeader) +
      "linear,0.05450666695833206,NVIDIA A100-PCIE-40GB,p2.1.0,8902,ampere_sgemm_32x128_tn,"
      "0.37037036,0.046296295,5,1,1,256,1,1,cu121,;ampere_sgemm_32x128_tn,1,58,13,141\n"
      "bmm,0.03578666721781095,NVIDIA A100-PCIE-40GB,p2.1.0,8902,ampere_sgemm_128x128_nn,"
      "1.7777778,0.22222222,4,1,6,256,1,1,cu121,;ampere_sgemm_128x128_nn,6,27,21,390\n";
  const auto rows = convert_neusight_csv(text, "n.csv");
  REQUIRE(rows.size() == 2);
  const CalibrationRow& lin = rows[0];
  CHECK(lin.device == "a100-pcie-40gb");
  CHECK(lin.precision == "fp32");
  CHECK(lin.kernel == "gemm");
  CHECK(lin.timing == Timing::eager_op);
  // nn.Linear(13, 141) on [58, 13]: m = 58, n = 141 outputs, k = 13; flops 2*58*141*13 = 212,628;
  // bytes (58*13 + 13*141 + 58*141 + 141 bias) * 4 = 43,624; 0.054506667 ms -> 54,507 ns.
  CHECK((lin.batch == 1 && lin.m == 58 && lin.n == 141 && lin.k == 13));
  CHECK(lin.flops == 212'628);
  CHECK(lin.bytes == 43'624);
  CHECK(lin.time_ns == 54'507);
  CHECK(lin.source == "neusight linear");
  CHECK(lin.shape == "B=1 M=58 N=13 K=141 ampere_sgemm_32x128_tn");
  // bmm [6, 27, 21] x [6, 21, 390]: batch 6 of m = 27, n = 390, k = 21; flops 2*6*27*390*21 =
  // 2,653,560; bytes 6 * (27*21 + 21*390 + 27*390) * 4 = 462,888.
  const CalibrationRow& bmm = rows[1];
  CHECK((bmm.batch == 6 && bmm.m == 27 && bmm.n == 390 && bmm.k == 21));
  CHECK(bmm.flops == 2'653'560);
  CHECK(bmm.bytes == 462'888);
  CHECK(bmm.time_ns == 35'787);
}

TEST_CASE("NeuSight's launch grids confirm that K is the output columns") {
  // cuBLAS tiles the column-major output [K x M]: a plain sgemm_<tm>x<tn> kernel launches
  // (ceil(K/tm), ceil(M/tn), B). Counted over the A100's bmm file: every such row fits.
  const std::string text = mutwo::support::read_text_file(kDir + "/bmm/NVIDIA_A100-PCIE-40GB.csv.gz");
  size_t start = text.find('\n') + 1;
  const auto header = split_csv_line(text.substr(0, start - 1), "header");
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  int fits = 0, plain = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const auto f = split_csv_line(text.substr(start, end - start), "row");
    start = end == std::string::npos ? text.size() : end + 1;
    const std::string& name = f[col["Kernel Name"]];
    int tm = 0, tn = 0;
    char layout[3] = {};
    if (std::sscanf(name.c_str(), "ampere_sgemm_%dx%d_%2s", &tm, &tn, layout) != 3 ||
        name.find("sliced") != std::string::npos) {
      continue;
    }
    ++plain;
    const int64_t b = std::stoll(f[col["B"]]), m = std::stoll(f[col["M"]]), k = std::stoll(f[col["K"]]);
    const auto ceil_div = [](int64_t a, int64_t d) { return (a + d - 1) / d; };
    if (std::stoll(f[col["Grid x"]]) == ceil_div(k, tm) && std::stoll(f[col["Grid y"]]) == ceil_div(m, tn) &&
        std::stoll(f[col["Grid z"]]) == b) {
      ++fits;
    }
  }
  CHECK(plain == 16'601);
  CHECK(fits == plain);
}

TEST_CASE("NeuSight rows: conv, layer norm, softmax and the elementwise ops") {
  const std::string conv =
      "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid "
      "y,Grid "
      "z,Block x,Block y,Block z,CUDA "
      "Version,Kernels,B,Input_Channel,Output_Channel,Kernel_Szie,Input_Size,Stride,"
      "Padding\nconv,0.9669973452885946,NVIDIA A100 80GB PCIe,p2.1.0,8902,\"void "
      "implicit_convolve_sgemm<float, "
      "float>(int, int)\",6.1,3.0,30,11,1,8,8,1,cu121,\";void implicit_convolve_sgemm<float, float>(int, "
      "int)\","
      "38,893,326,3,5,1,1\n";
  const auto c = convert_neusight_csv(conv, "c.csv");
  REQUIRE(c.size() == 1);
  // [38, 893, 5, 5] * [326, 893, 3, 3], padding 1: P = Q = 5; m = 38*25 = 950, n = 326, k = 893*9.
  CHECK(c[0].device == "a100-pcie-80gb");
  CHECK(c[0].kernel == "conv2d_forward");
  CHECK(c[0].variant == "3x3s1");
  CHECK((c[0].m == 950 && c[0].n == 326 && c[0].k == 8'037));
  CHECK(c[0].flops == int64_t{2} * 38 * 326 * 25 * 893 * 9);
  CHECK(c[0].time_ns == 966'997);
  const std::string vec =
      std::string(kVectorHeader) +
      "add,0.026816000044345856,NVIDIA A100-PCIE-40GB,p2.1.0,8902,k,1,1,42,1,1,128,1,1,cu121,127,168\n"
      "divu,0.03,Tesla P4,p2.1.0,8902,k,1,1,42,1,1,128,1,1,cu121,127,168\n"
      "softmax,0.04,Tesla T4,p2.1.0,8902,k,1,1,42,1,1,128,1,1,cu121,127,168\n";
  const auto v = convert_neusight_csv(vec, "v.csv");
  REQUIRE(v.size() == 3);
  // add on two [127, 168] f32 tensors: 21,336 elements, 3 * 4 bytes each.
  CHECK(v[0].kernel == "add");
  CHECK(v[0].m == 21'336);
  CHECK(v[0].bytes == 21'336 * 12);
  CHECK(v[0].time_ns == 26'816);
  // tensor / scalar reads one tensor and writes one: priced as relu's traffic, its name kept.
  CHECK(v[1].device == "p4");
  CHECK(v[1].kernel == "relu");
  CHECK(v[1].bytes == 21'336 * 8);
  CHECK(v[1].source == "neusight divu");
  CHECK(v[2].kernel == "softmax");
  CHECK(v[2].category == mutwo::ir::KindCategory::reduction);
}

TEST_CASE("every NeuSight file reads, each on its catalog GPU") {
  std::map<std::string, size_t> per_device;
  size_t files = 0;
  for (const auto& op : std::filesystem::directory_iterator(kDir)) {
    if (!op.is_directory() || op.path().filename() == "device_configs") continue;
    for (const auto& file : std::filesystem::directory_iterator(op.path())) {
      for (const CalibrationRow& r : read_calibration_input(file.path().string())) {
        ++per_device[r.device];
        CHECK_MESSAGE(r.timing == Timing::eager_op, file.path().string());
      }
      ++files;
    }
  }
  CHECK(files == 16 * 5);
  // conv holds the A100 80GB PCIe in place of the A100-PCIE-40GB.
  CHECK(per_device.size() == 6);
  CHECK(per_device["a100-pcie-80gb"] == 4'787);
  CHECK(per_device["a100-pcie-40gb"] == 6'460 + 16'661 + 1'400 + 12 * 1'750);
}

TEST_CASE("a bad NeuSight row is refused with the file, line, field and value") {
  const std::string row = "add,0.02,NVIDIA A100-PCIE-40GB,p,8,k,1,1,1,1,1,1,1,1,cu,127,168\n";
  CHECK(refusal(std::string(kVectorHeader) + row) == "accepted");
  CHECK(refusal(std::string(kVectorHeader) +
                "add,-1,NVIDIA A100-PCIE-40GB,p,8,k,1,1,1,1,1,1,1,1,cu,127,168\n") ==
        "n.csv:2: field 'Latency' = '-1': must be > 0 and at most 1e6 ms");
  CHECK(refusal(std::string(kVectorHeader) + "add,0.02,AMD MI250,p,8,k,1,1,1,1,1,1,1,1,cu,127,168\n") ==
        "n.csv:2: field 'Device' = 'AMD MI250': not a GPU of the device catalog (match_device)");
  CHECK(refusal(std::string(kVectorHeader) +
                "add,0.02,NVIDIA A100-PCIE-40GB,p,8,k,1,1,1,1,1,1,1,1,cu,0,168\n") ==
        "n.csv:2: field 'B' = '0': must be from 1 to 2^31");
  CHECK(refusal(std::string(kVectorHeader) +
                "bmm,0.02,NVIDIA A100-PCIE-40GB,p,8,k,1,1,1,1,1,1,1,1,cu,127,168\n") ==
        "n.csv:2: op 'bmm' needs a column 'M', which the header lacks");
  CHECK(refusal(std::string(kVectorHeader) +
                "exp,0.02,NVIDIA A100-PCIE-40GB,p,8,k,1,1,1,1,1,1,1,1,cu,127,168\n")
            .rfind("n.csv:2: field 'OPName' = 'exp': valid: linear, bmm, conv,", 0) == 0);
  CHECK(refusal(std::string(kVectorHeader) + "add,0.02\n") == "n.csv:2: expected 17 fields, got 2");
  CHECK(refusal("device,precision\n").rfind("n.csv:1: header", 0) == 0);
  // Decimal numbers alone: strtod read hexadecimal, stoll a leading space or '+'.
  CHECK(refusal(std::string(kVectorHeader) +
                "add,0x10,NVIDIA A100-PCIE-40GB,p,8,k,1,1,1,1,1,1,1,1,cu,127,168\n") ==
        "n.csv:2: field 'Latency' = '0x10': must be a number (milliseconds)");
  CHECK(refusal(std::string(kVectorHeader) +
                "add,0.02,NVIDIA A100-PCIE-40GB,p,8,k,1,1,1,1,1,1,1,1,cu,+1,168\n") ==
        "n.csv:2: field 'B' = '+1': must be a whole number");
  // A column named twice: the last was read, the first ignored.
  CHECK(refusal("OPName,Latency,Device,B,M,N,K,M\nlinear,10,Tesla T4,1,4096,4096,4096,64\n") ==
        "n.csv:1: column 'M' is named twice in the header");
}

// The lengths a length-binned loader (NVIDIA's LDDL) pads its batches to: derived by hand on a
// made-up histogram, and the shipped Wikipedia histogram against what its authors published of it.
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "experiments/padded_lengths.hpp"
#include "support/error.hpp"

namespace {

using namespace mutwo;
using namespace mutwo::experiments;

const std::string kFixtures = std::string(MUTWO_TEST_FIXTURES) + "/published/";
// The shipped histogram, beside docs/published_throughput.csv, which prices BERT phase 2 with it.
const std::string kWikipedia = std::string(MUTWO_TEST_FIXTURES) + "/../../docs/wikipedia_seq512_lengths.csv";

double total_share(const std::vector<PaddedLength>& lengths) {
  return std::accumulate(lengths.begin(), lengths.end(), 0.0,
                         [](double s, const PaddedLength& l) { return s + l.batch_share; });
}

}  // namespace

TEST_CASE("a batch is padded to its bin's longest draw, aligned up; bins give batches by their sequences") {
  // tiny_lengths.csv: 1 sequence of 4 tokens, 1 of 7, 2 of 12, 4 of 16 (8 in all).
  const LengthHistogram h = read_length_histogram(kFixtures + "tiny_lengths.csv");
  CHECK(h.sequences() == 8);
  CHECK(h.longest_tokens() == 16);
  CHECK(h.mean_tokens() == doctest::Approx((4 + 7 + 2 * 12 + 4 * 16) / 8.0));
  // Bins of 8 tokens, batches of 2. Bin [1, 8] (2 of 8 sequences: share 1/4): F(4) = 1/2, F(7) = 1,
  // so the longest of 2 draws is 4 with (1/2)^2 = 1/4 and 7 with 3/4. Bin [9, 16] (share 3/4):
  // F(12) = 1/3, F(16) = 1: 12 with 1/9, 16 with 8/9.
  const std::vector<PaddedLength> exact = padded_lengths(h, {2, 8, 1});
  REQUIRE(exact.size() == 4);
  CHECK(exact[0].tokens == 4);
  CHECK(exact[0].batch_share == doctest::Approx(0.25 * 0.25));
  CHECK(exact[1].tokens == 7);
  CHECK(exact[1].batch_share == doctest::Approx(0.25 * 0.75));
  CHECK(exact[2].tokens == 12);
  CHECK(exact[2].batch_share == doctest::Approx(0.75 / 9));
  CHECK(exact[3].tokens == 16);
  CHECK(exact[3].batch_share == doctest::Approx(0.75 * 8 / 9));
  // Aligned to 4 tokens, 7 pads to 8; the rest are multiples of 4 already.
  const std::vector<PaddedLength> aligned = padded_lengths(h, {2, 8, 4});
  REQUIRE(aligned.size() == 4);
  CHECK(aligned[1].tokens == 8);
  CHECK(aligned[1].batch_share == doctest::Approx(0.25 * 0.75));
  // One bin over everything, batches of 1: each sequence is its own batch, padded to itself.
  const std::vector<PaddedLength> one = padded_lengths(h, {1, 16, 1});
  REQUIRE(one.size() == 4);
  CHECK(one[0].batch_share == doctest::Approx(1.0 / 8));
  CHECK(one[3].batch_share == doctest::Approx(4.0 / 8));
  // A batch of 4 from one bin of 16 tokens: the longest is 16 unless all 4 draws are shorter:
  // (4/8)^4 = 1/16 of batches have none of 16 tokens.
  const std::vector<PaddedLength> wide = padded_lengths(h, {4, 16, 1});
  CHECK(wide.back().tokens == 16);
  CHECK(wide.back().batch_share == doctest::Approx(1 - 1.0 / 16));
  CHECK(total_share(wide) == doctest::Approx(1.0));
}

TEST_CASE("the shipped Wikipedia histogram is the one Graphcore's packing paper describes") {
  const LengthHistogram h = read_length_histogram(kWikipedia);
  // arXiv 2107.02027: "the Wikipedia dataset of over 16M sequences"; "at sequence length 512 padding
  // tokens represent in excess of 50% of the Wikipedia dataset".
  CHECK(h.sequences() == 16'279'552);
  CHECK(h.longest_tokens() == 512);
  CHECK(1 - h.mean_tokens() / 512 > 0.50);
  CHECK(1 - h.mean_tokens() / 512 < 0.501);
  // LDDL's phase 2 (bins of 64, aligned to 8), batch 32: the last bin (449-512 tokens, 27.2 % of the
  // sequences, most of them at 512) pads every one of its batches to 512.
  const std::vector<PaddedLength> lengths = padded_lengths(h, {32, 64, 8});
  CHECK(total_share(lengths) == doctest::Approx(1.0));
  CHECK(lengths.back().tokens == 512);
  CHECK(lengths.back().batch_share == doctest::Approx(0.27202).epsilon(1e-4));
  for (const PaddedLength& l : lengths) CHECK(l.tokens % 8 == 0);
}

TEST_CASE("a malformed histogram or batching is refused naming the line, the field and the value") {
  CHECK_THROWS_WITH_AS(parse_length_histogram("len,count\n1,2\n", "h.csv"),
                       doctest::Contains("h.csv:1: header 'len,count'"), FormatError);
  CHECK_THROWS_WITH_AS(parse_length_histogram("length,sequences\n3,1\n3,1\n", "h.csv"),
                       "h.csv:3: field 'length' = '3' must be in [4, 1048576]", FormatError);
  CHECK_THROWS_WITH_AS(parse_length_histogram("length,sequences\n3,-1\n", "h.csv"),
                       doctest::Contains("h.csv:2: field 'sequences' = '-1' must be in [0,"), FormatError);
  CHECK_THROWS_WITH_AS(parse_length_histogram("length,sequences\n3,x\n", "h.csv"),
                       "h.csv:2: field 'sequences' = 'x' is not an integer", FormatError);
  CHECK_THROWS_WITH_AS(parse_length_histogram("length,sequences\n3,0\n", "h.csv"),
                       "h.csv: the histogram holds no sequence", FormatError);
  CHECK_THROWS_WITH_AS(parse_length_histogram("# nothing\n", "h.csv"),
                       "h.csv: no header line 'length,sequences'", FormatError);
  const LengthHistogram h = parse_length_histogram("length,sequences\n3,1\n", "h.csv");
  CHECK_THROWS_WITH_AS(padded_lengths(h, {0, 8, 8}), "padded lengths: batch_size = 0; expected >= 1", Error);
  CHECK_THROWS_WITH_AS(padded_lengths(h, {1, 8, 0}), "padded lengths: align_tokens = 0; expected >= 1",
                       Error);
}

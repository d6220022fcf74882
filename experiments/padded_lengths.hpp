#pragma once
// The sequence lengths a length-binned data loader pads its batches to: the workload a BERT run
// measures when its loader does not pad every sequence to the model's maximum. NVIDIA's LDDL
// (NVIDIA/LDDL, lddl/dask/bert/binning.py and lddl/torch/bert.py), which DeepLearningExamples' BERT
// feeds phase 2 through since 2022, files each sequence of n tokens in bin (n - 1) / bin_tokens,
// draws every batch from one bin (a bin at random, weighted by the samples it has left: over an
// epoch each bin gives batches in proportion to its sequences) and pads the batch to its longest
// sequence rounded up to a multiple of align_tokens ("sequence_length_alignment", 8 by default).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mutwo::experiments {

// How many sequences of a data set hold each number of tokens.
struct LengthHistogram {
  std::vector<int64_t> sequences_by_tokens;  // [i]: sequences of i + 1 tokens

  int64_t sequences() const;
  int64_t longest_tokens() const;  // 0 when empty
  double mean_tokens() const;
};

// CSV "length,sequences" ('#' lines are comments): lengths 1 to 2^20, strictly increasing (a length
// left out holds no sequence), counts 0 to 2^40, at least one sequence. FormatError naming the file,
// the line and the field otherwise.
LengthHistogram parse_length_histogram(std::string_view text, std::string_view file);
LengthHistogram read_length_histogram(const std::string& path);

// The largest bin and alignment, in tokens (as the histogram's longest length).
inline constexpr int64_t kMaxBinnedTokens = int64_t{1} << 20;

struct BinnedBatching {
  int64_t batch_size = 1;    // sequences per batch
  int64_t bin_tokens = 64;   // LDDL's --bin-size
  int64_t align_tokens = 8;  // LDDL's sequence_length_alignment
};

// One length a batch is padded to, and the share of all batches padded to it.
struct PaddedLength {
  int64_t tokens = 0;
  double batch_share = 0;
};

// The padded lengths of the batches, ascending, their shares adding up to 1. In a bin whose lengths
// have the cumulative distribution F, a batch of B sequences drawn from it has its longest at
// most l with probability F(l)^B, so P(longest = l) = F(l)^B - F(l - 1)^B; that length, aligned up,
// is the batch's. A bin's share of batches is its share of sequences. Error on batch_size, bin_tokens
// or align_tokens < 1, bin_tokens or align_tokens > kMaxBinnedTokens, or an empty histogram.
std::vector<PaddedLength> padded_lengths(const LengthHistogram& histogram, const BinnedBatching& batching);

}  // namespace mutwo::experiments

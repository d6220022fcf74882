#include "experiments/padded_lengths.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "costmodel/calibration_csv.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {
namespace {

constexpr std::string_view kHeader = "length,sequences";
// A histogram longer than any sequence model takes is a malformed file, not a data set.
constexpr int64_t kMaxTokens = int64_t{1} << 20;
// Sequences of one length: at most 2^40, so that no sum over 2^20 lengths overflows.
constexpr int64_t kMaxSequences = int64_t{1} << 40;

int64_t integer_field(const std::string& where, std::string_view field, const std::string& value, int64_t min,
                      int64_t max) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size())
    throw FormatError(fmt::format("{}: field '{}' = '{}' is not an integer", where, field, value));
  if (v < min || v > max)
    throw FormatError(
        fmt::format("{}: field '{}' = '{}' must be in [{}, {}]", where, field, value, min, max));
  return v;
}

}  // namespace

int64_t LengthHistogram::sequences() const {
  return std::accumulate(sequences_by_tokens.begin(), sequences_by_tokens.end(), int64_t{0});
}

int64_t LengthHistogram::longest_tokens() const {
  for (size_t i = sequences_by_tokens.size(); i > 0; --i) {
    if (sequences_by_tokens[i - 1] > 0) return static_cast<int64_t>(i);
  }
  return 0;
}

double LengthHistogram::mean_tokens() const {
  double tokens = 0;
  for (size_t i = 0; i < sequences_by_tokens.size(); ++i)
    tokens += static_cast<double>(i + 1) * static_cast<double>(sequences_by_tokens[i]);
  const int64_t n = sequences();
  return n > 0 ? tokens / static_cast<double>(n) : 0;
}

LengthHistogram parse_length_histogram(std::string_view text, std::string_view file) {
  LengthHistogram h;
  bool seen_header = false;
  int64_t total = 0;
  for (const auto& [number, line] : support::numbered_lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", file, number);
    if (!seen_header) {
      if (line != kHeader)
        throw FormatError(
            fmt::format("{}: header '{}' is not the length histogram header '{}'", where, line, kHeader));
      seen_header = true;
      continue;
    }
    const std::vector<std::string> f = costmodel::split_csv_line(line, where);
    if (f.size() != 2) throw FormatError(fmt::format("{}: expected 2 fields, got {}", where, f.size()));
    const int64_t previous = static_cast<int64_t>(h.sequences_by_tokens.size());
    const int64_t length = integer_field(where, "length", f[0], previous + 1, kMaxTokens);
    const int64_t count = integer_field(where, "sequences", f[1], 0, kMaxSequences);
    h.sequences_by_tokens.resize(static_cast<size_t>(length), 0);
    h.sequences_by_tokens.back() = count;
    total += count;
  }
  if (!seen_header) throw FormatError(fmt::format("{}: no header line '{}'", file, kHeader));
  if (total == 0) throw FormatError(fmt::format("{}: the histogram holds no sequence", file));
  return h;
}

LengthHistogram read_length_histogram(const std::string& path) {
  return parse_length_histogram(support::read_file_bytes(path, "sequence length histogram"), path);
}

std::vector<PaddedLength> padded_lengths(const LengthHistogram& histogram, const BinnedBatching& batching) {
  for (const auto& [name, value] :
       {std::pair{"batch_size", batching.batch_size}, std::pair{"bin_tokens", batching.bin_tokens},
        std::pair{"align_tokens", batching.align_tokens}}) {
    if (value < 1) throw Error(fmt::format("padded lengths: {} = {}; expected >= 1", name, value));
  }
  // As the command's --length-bin-tokens and --length-align-tokens: past 2^20 tokens no loader bins,
  // and the bin and alignment sums below would overflow.
  for (const auto& [name, value] :
       {std::pair{"bin_tokens", batching.bin_tokens}, std::pair{"align_tokens", batching.align_tokens}}) {
    if (value > kMaxBinnedTokens)
      throw Error(fmt::format("padded lengths: {} = {}; expected at most {}", name, value, kMaxBinnedTokens));
  }
  const int64_t total = histogram.sequences();
  if (total <= 0) throw Error("padded lengths: the length histogram holds no sequence");
  const double batch = static_cast<double>(batching.batch_size);
  const int64_t longest = histogram.longest_tokens();
  std::map<int64_t, double> shares;
  for (int64_t first = 1; first <= longest; first += batching.bin_tokens) {
    const int64_t last = std::min(longest, first + batching.bin_tokens - 1);
    int64_t in_bin = 0;
    for (int64_t n = first; n <= last; ++n)
      in_bin += histogram.sequences_by_tokens[static_cast<size_t>(n - 1)];
    if (in_bin == 0) continue;
    const double bin_share = static_cast<double>(in_bin) / static_cast<double>(total);
    int64_t at_most = 0;  // sequences of the bin of at most n tokens
    double below = 0;     // F(n - 1)^B
    for (int64_t n = first; n <= last; ++n) {
      at_most += histogram.sequences_by_tokens[static_cast<size_t>(n - 1)];
      const double up_to = std::pow(static_cast<double>(at_most) / static_cast<double>(in_bin), batch);
      if (up_to > below) {
        const int64_t aligned =
            (n + batching.align_tokens - 1) / batching.align_tokens * batching.align_tokens;
        shares[aligned] += bin_share * (up_to - below);
      }
      below = up_to;
    }
  }
  std::vector<PaddedLength> out;
  out.reserve(shares.size());
  for (const auto& [tokens, share] : shares) out.push_back({tokens, share});
  return out;
}

}  // namespace mutwo::experiments

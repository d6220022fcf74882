#include "experiments/published_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "costmodel/calibration_csv.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {
namespace {

[[noreturn]] void field_error(const std::string& where, std::string_view field, std::string_view value,
                              std::string_view why) {
  throw FormatError(fmt::format("{}: field '{}' = '{}' {}", where, field, value, why));
}

int64_t integer(const std::string& where, std::string_view field, const std::string& value, int64_t min,
                int64_t max = std::numeric_limits<int64_t>::max()) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size())
    field_error(where, field, value, "is not an integer");
  if (v < min || v > max) {
    field_error(where, field, value,
                max == std::numeric_limits<int64_t>::max() ? fmt::format("must be >= {}", min)
                                                           : fmt::format("must be from {} to {}", min, max));
  }
  return v;
}

double throughput(const std::string& where, std::string_view field, const std::string& value) {
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size())
    field_error(where, field, value, "is not a number");
  if (!(v > 0) || !std::isfinite(v)) field_error(where, field, value, "must be > 0");
  // A throughput is samples per second: under 1e-6 (a sample in 11 days) or past 1e12 it is a typo
  // or a unit slip, and its error against the prediction overflowed.
  if (v < 1e-6 || v > 1e12) field_error(where, field, value, "must be from 1e-6 to 1e12 samples/s");
  return v;
}

bool valid_id(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

}  // namespace

std::vector<PublishedThroughput> parse_published_csv(std::string_view text, std::string_view file) {
  std::vector<PublishedThroughput> rows;
  std::set<std::string> ids;
  bool seen_header = false;
  size_t columns = 0;
  for (const auto& [number, line] : support::numbered_lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", file, number);
    if (!seen_header) {
      if (line != kPublishedCsvHeader) {
        throw FormatError(fmt::format("{}: header '{}' is not the published throughput header '{}'", where,
                                      line, kPublishedCsvHeader));
      }
      columns = costmodel::split_csv_line(line, where).size();
      seen_header = true;
      continue;
    }
    const std::vector<std::string> f = costmodel::split_csv_line(line, where);
    if (f.size() != columns)
      throw FormatError(fmt::format("{}: expected {} fields, got {}", where, columns, f.size()));
    PublishedThroughput r;
    r.id = f[0];
    if (!valid_id(r.id)) field_error(where, "id", r.id, "must be lower-case letters, digits, '_' or '-'");
    if (!ids.insert(r.id).second) field_error(where, "id", r.id, "repeats an earlier row's id");
    r.model = f[1];
    r.zoo_model = f[2];
    r.gpu = f[3];
    r.gpus_in_run =
        static_cast<int32_t>(integer(where, "gpus_in_run", f[4], 1, std::numeric_limits<int32_t>::max()));
    r.precision = f[5];
    r.batch_size = integer(where, "batch_size", f[6], 1);
    r.seq_len = integer(where, "seq_len", f[7], 0);
    r.image_size = integer(where, "image_size", f[8], 0);
    r.optimizer = f[9];
    r.accumulation_steps = integer(where, "accumulation_steps", f[10], 1);
    r.length_histogram = f[11];
    if (r.length_histogram.empty()) {
      for (const auto& [field, value] :
           {std::pair{"length_bin_tokens", f[12]}, std::pair{"length_align_tokens", f[13]}}) {
        if (!value.empty()) field_error(where, field, value, "must be empty without a length_histogram");
      }
    } else {
      if (r.seq_len == 0) field_error(where, "seq_len", f[7], "must be >= 1 with a length_histogram");
      r.length_bin_tokens = integer(where, "length_bin_tokens", f[12], 1);
      r.length_align_tokens = integer(where, "length_align_tokens", f[13], 1);
    }
    r.samples_per_s = throughput(where, "samples_per_s", f[14]);
    r.framework = f[15];
    r.source_url = f[16];
    r.source_note = f[17];
    if (r.source_url.empty()) field_error(where, "source_url", r.source_url, "must cite the measurement");
    rows.push_back(std::move(r));
  }
  if (!seen_header) throw FormatError(fmt::format("{}: no header line '{}'", file, kPublishedCsvHeader));
  return rows;
}

std::vector<PublishedThroughput> read_published_csv(const std::string& path) {
  return parse_published_csv(support::read_file_bytes(path, "published throughput CSV"), path);
}

}  // namespace mutwo::experiments

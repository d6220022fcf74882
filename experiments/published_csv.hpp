#pragma once
// Published measured training throughputs (docs/published_throughput.csv): one row per measurement a
// paper, a vendor or a benchmark suite published, with its citation. The `published` experiment kind
// predicts each row's configuration and reports the error; the rows validate, they are never fitted.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mutwo::experiments {

struct PublishedThroughput {
  std::string id;           // unique, [a-z0-9_-]+: "rn50-a100-tf32"
  std::string model;        // as the source names it: "ResNet-50 v1.5"
  std::string zoo_model;    // the mutwo zoo model that stands for it: "resnet50"
  std::string gpu;          // device catalog name
  int32_t gpus_in_run = 1;  // GPUs of the measured run; samples_per_s is per GPU
  std::string precision;    // ir/precision.hpp name: fp32, tf32, amp-fp16, amp-bf16, bf16
  int64_t batch_size = 0;   // per GPU, per step
  int64_t seq_len = 0;      // 0: not a sequence model
  int64_t image_size = 0;   // 0: not a vision model
  std::string optimizer;    // transforms/optimizer_kind.hpp name: the optimizer closest to the run's
  // Micro-batches of batch_size whose gradients the run accumulates before each optimizer step (1: a
  // step per batch): BERT pre-training updates LAMB once per 32-16,384 micro-batches.
  int64_t accumulation_steps = 1;
  // A run whose loader pads each batch only to its longest sequence: the data set's sequence lengths
  // (a length histogram CSV, its path relative to this CSV's folder; experiments/padded_lengths.hpp)
  // and the loader's bins and alignment (LDDL's bin size and sequence_length_alignment). Empty: every
  // sequence is padded to seq_len.
  std::string length_histogram;
  int64_t length_bin_tokens = 0;    // with length_histogram, >= 1
  int64_t length_align_tokens = 0;  // with length_histogram, >= 1
  double samples_per_s = 0;         // measured, per GPU
  std::string framework;
  std::string source_url;
  std::string source_note;  // where in the source the number stands, how batch and precision were read
};

// The CSV's columns, in this order (a '#' line is a comment, blank lines are skipped).
inline constexpr std::string_view kPublishedCsvHeader =
    "id,model,zoo_model,gpu,gpus_in_run,precision,batch_size,seq_len,image_size,optimizer,accumulation_steps,"
    "length_histogram,length_bin_tokens,length_align_tokens,samples_per_s,framework,source_url,source_note";

// Parses the CSV text; `file` names it in errors. Throws FormatError naming the file, the line and the
// field on a wrong header, a wrong field count, a number that does not parse or is out of range
// (batch_size, gpus_in_run, accumulation_steps >= 1; seq_len, image_size >= 0; samples_per_s > 0; with a
// length_histogram, length_bin_tokens and length_align_tokens >= 1 and a seq_len; without one, both empty),
// an id that is not [a-z0-9_-]+ or repeats. Names (zoo model, GPU, precision, optimizer) are checked by the
// kind.
std::vector<PublishedThroughput> parse_published_csv(std::string_view text, std::string_view file);
std::vector<PublishedThroughput> read_published_csv(const std::string& path);

}  // namespace mutwo::experiments

#pragma once
// Operator logs of the DTR prototype (Kirisame et al., ICLR 2021; uwsampl/dtr-prototype), as its
// simulator simrd parses them (simrd/parse/parse.py, parse_file with out_cond=REMATERIALIZE and
// ignore_undefined_release=True). The format and every rule below are written up in
// tests/fixtures/dtr/SEMANTICS.md ("Log format and semantics").
//
// A log is JSON Lines, one instruction per line. Names "x<N>" are handles; several handles may
// share one value. The parse yields simrd's graph and its schedule of commands:
// - CONSTANT + MEMORY: a cost-0 op with one output, then `pin` of it;
// - CALL + (MEMORY, ALIAS) per result: an op; an aliasing output (ALIAS k >= 0) shares the storage
//   of ARGS[k] and has size 0 (its logged MEMORY is ignored);
// - MUTATE: an out-of-place op over all ARGS whose outputs ("<tensor>$") are fresh storages of the
//   mutated arguments' storage sizes; each mutated handle is rebound, the old tensor released;
// - COPY: a new handle on SRC's tensor (`get`); COPY_FROM: DST's old tensor released, DST rebound to
//   SRC's tensor (`get`); RELEASE: `release` of the bound tensor (the name stays bound; an unbound
//   name is ignored);
// - ANNOTATE BACKWARD (or an op name containing "backward") marks the ops from there on as
//   backward; lines up to and including the first ANNOTATE START are skipped (simrd's has_start);
// - at the end, `pin` of every tensor some handle still holds, in first-binding order.
// Numbers (MEMORY, TIME, ALIAS) are JSON strings holding integers; TIME is in ns, MEMORY in bytes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/trace_import_result.hpp"

namespace mutwo::io {

enum class DtrOpOrigin : uint8_t { constant, call, mutate };

struct DtrOp {
  std::string name;  // simrd's unique op name: the logged name + "/" + a graph-wide counter
  DtrOpOrigin origin = DtrOpOrigin::call;
  int64_t time_ns = 0;               // logged TIME (0 for constants)
  std::vector<int32_t> args;         // input tensors in ARGS order, repeats kept
  std::vector<int64_t> sizes_bytes;  // per output; 0 for aliasing outputs
  std::vector<int32_t> aliases;      // per output: index into args whose storage it shares, or -1
  int32_t first_output = 0;          // outputs are tensors first_output ... + sizes_bytes.size() - 1
  bool backward = false;             // simrd's in_bwd: it does not change the simulation
  int32_t line = 0;                  // 1-based line of the instruction in the log

  int32_t output_count() const { return static_cast<int32_t>(sizes_bytes.size()); }
  int64_t total_size_bytes() const;  // sum of sizes_bytes: what running the op allocates
};

struct DtrTensor {
  std::string name;           // the handle that created it, or "<old>$" for a MUTATE output
  int32_t op = 0;             // producing op
  int32_t index = 0;          // output index in that op
  int64_t storage_bytes = 0;  // bytes of its root storage (its own size unless it aliases)
};

enum class DtrCommandKind : uint8_t {
  compute,  // run op `id` for the first time
  get,      // one more handle on tensor `id`
  release,  // one handle fewer on tensor `id`
  pin,      // rematerialise tensor `id` if needed, then keep its storage resident for good
};

struct DtrCommand {
  DtrCommandKind kind = DtrCommandKind::compute;
  int32_t id = 0;  // an op for compute, a tensor otherwise
};

// Instruction counts of the part after START.
struct DtrLogCounts {
  int32_t lines = 0;  // lines processed (after START)
  int32_t calls = 0;
  int32_t mutates = 0;
  int32_t constants = 0;
  int32_t copies = 0;
  int32_t copy_froms = 0;
  int32_t releases = 0;
  int32_t releases_ignored = 0;  // of names never bound
  int32_t alias_outputs = 0;
  int32_t pinned_at_end = 0;  // tensors still held when the log ends
};

struct DtrLog {
  std::vector<DtrOp> ops;  // in log order; constants included
  std::vector<DtrTensor> tensors;
  std::vector<DtrCommand> commands;  // simrd's schedule
  DtrLogCounts counts;
  int32_t start_line = 0;  // the line of ANNOTATE START that was skipped to (0: none)

  int64_t compute_ns() const;  // sum of op times: simrd's baseline compute
};

struct DtrParseOptions {
  // simrd's has_start (true for every log in its manifest): skip up to and including the first
  // ANNOTATE START, which must exist. False: replay from line 1.
  bool skip_to_start = true;
};

// The longest line a DTR log may have: its lines are single instructions of a few hundred bytes
// (the longest of the 9 logs in tests/fixtures/dtr is 306 bytes); a longer one is refused before it is
// parsed, whose JSON tree would take several times its bytes.
inline constexpr int64_t kMaxDtrLineBytes = int64_t{1} << 20;

// Throws FormatError naming the source, the line, the instruction and the field at fault: a line
// longer than kMaxDtrLineBytes, a line that is not a JSON object, an unknown instruction (PIN included: simrd
// rejects it), a missing or mistyped field, a number that is not a non-negative integer, a CONSTANT without
// its MEMORY, a CALL without its MEMORY/ALIAS pair per result, a name used before it is bound or bound twice,
// an ALIAS or MUTATE index out of range, a missing START.
DtrLog parse_dtr_log(std::string_view text, std::string_view source, const DtrParseOptions& options = {});

// The log as a mutwo Trace, for `mutwo simulate --trace`: one opaque op per CALL and MUTATE
// (opaque_backward once simrd's in_bwd is set) with its logged TIME as measured duration, one uint8
// tensor per op output (its bytes; 0 for a view), constants as step inputs. What the Graph IR cannot
// say (views sharing storage, handles) is listed in the warnings; `mutwo replay --dtr-log` keeps
// simrd's full semantics.
TraceImport dtr_log_to_trace(const DtrLog& log, const std::string& source_name);

// Content check: the first line is a JSON object with an "INSTRUCTION" key (a first line past
// kMaxDtrLineBytes is judged by its first 4 KiB, so that the parser refuses it by its length).
bool looks_like_dtr_log(std::string_view text);

}  // namespace mutwo::io

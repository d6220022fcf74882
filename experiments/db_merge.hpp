#pragma once
// Merging results databases: sweep shards written on several machines (or by several processes into
// several files) become one file, with nothing duplicated and nothing lost (`mutwo db merge`).
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "experiments/results_db.hpp"

namespace mutwo::experiments {

// What one merge did.
struct MergeCounts {
  int64_t runs_added = 0;
  int64_t runs_skipped = 0;  // already in out, or an earlier run of the same input
  int64_t experiments_added = 0;
  int64_t experiments_updated = 0;  // replaced by the input's later row
  int64_t experiments_kept = 0;     // out's row was as new as the input's, or newer

  MergeCounts& operator+=(const MergeCounts& other);
  bool operator==(const MergeCounts&) const = default;
};

// Copies every run of `in` that `out` lacks, in `in`'s id order, with its prediction, measurement,
// op times and experiment row; each run is one transaction of ResultsDb::insert, so an interrupted
// merge leaves whole runs only and running it again completes it. A run is already present when
//   - it is an experiment's row with a non-empty config_hash and out has a run with that config_hash
//     and mutwo_version (a configuration an experiment stores once per mutwo), or
//   - otherwise, out has a run equal to it in every field but id, its prediction and measurement
//     too (two `mutwo run`s of one configuration are two measurements: both are kept).
// Runs get new ids in out; created_at and every other field are kept as they were. Runs copied
// earlier in the same merge count as present (a configuration twice in `in` is copied once).
// Experiments (table experiments): one absent from out is added; one present is replaced when the
// input's updated_at is later (ISO-8601 UTC text compares in time order).
// While it runs, out's commits skip their own fsync (WAL, synchronous=NORMAL; restored after): a killed
// merge keeps all it committed, a power loss at most its last whole runs.
// Throws ResultsDbError when in and out are the same file, or when reading or writing fails. Callers
// run check_sound on both first (a bad cell found half way stops the merge after the runs before it).
MergeCounts merge_results(ResultsDb& out, const ResultsDb& in);

// Whether two paths name the same file (one file reached through links or another spelling counts);
// false when either does not exist and their canonical spellings differ.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Throws ResultsDbError naming the path unless SQLite's quick_check finds the whole file sound. Opening
// a database reads only its table list; this reads every page, so a merge checks its inputs first and
// never stops half way through one because of a damaged page.
void check_readable(const ResultsDb& db);

// check_readable, then every cell's type and range (ResultsDb::check_values): what `mutwo db merge`
// runs on each input and on an existing OUT before it writes anything, so a merge neither stops half
// way nor copies a bad cell in as a clean one, and never writes into a damaged file.
void check_sound(const ResultsDb& db);

// Whether path names a file that holds tables: the existing files a writer (merge's OUT, an
// experiment's database) runs check_sound on, opened read-only, before it opens them to write. An
// absent or empty file, or one a parallel writer has begun to create, is left to ResultsDb::open's
// create mode. Throws ResultsDbError for a file that is not a SQLite database.
bool holds_tables(const std::filesystem::path& path);

// What every writer of runs (run, profile, experiment, their Python calls) runs on its database before
// it works: an existing one must pass check_sound, a new one must be writable (support::writable_target,
// naming `what`, the flag). So a damaged or unwritable database is refused before a measurement is
// taken, not after, and never written to.
void check_results_destination(const std::filesystem::path& path, std::string_view what);

}  // namespace mutwo::experiments

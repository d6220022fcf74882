#pragma once
// The keys of an experiment spec's [sweep] table, declared once: each with its one-line meaning, how
// it is read into a Sweep, and the columns it gives a row in the CSV export. The spec reader
// (spec.cpp), `mutwo experiment --help` and the kinds' tables (sweep_columns) read this table; which
// keys a kind accepts is the kind's (ExperimentKind::sweep_keys), and each must be here.
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "experiments/spec.hpp"
#include "support/toml_reader.hpp"

namespace mutwo::experiments {

struct SweepKeyInfo {
  std::string_view name;  // "model_counts"
  std::string_view help;  // one line, for --help
  // Reads the key's node (`key` is "sweep.<name>" for messages) into the sweep; throws FormatError
  // naming the source, line, key and value.
  void (*read)(const support::TomlReader& reader, const toml::node& node, const std::string& key,
               Sweep& sweep);
  // The config fields a row records for this key, which are its CSV columns, in order; none for a
  // key that shapes the runs but tells no row apart (iterations, traces, ...).
  std::vector<std::string_view> columns = {};
  // Set for a key whose columns a table shows only when the spec sets it (so that tables of specs
  // that never set it keep their columns): whether `sweep` sets it.
  bool (*shown_when)(const Sweep& sweep) = nullptr;
  // The cell of a row that does not store the column (lean_ops: rows without lean layers store
  // nothing, so that their hashes stay those of plain rows, and read "none").
  std::string_view absent_cell = "";
};

const std::vector<SweepKeyInfo>& sweep_key_table();
const SweepKeyInfo* find_sweep_key(std::string_view name);  // null when the table lacks it

// A kind's CSV config columns: the columns of `keys` in that order, a key with shown_when only when
// the spec sets it. Throws mutwo::Error naming a key the table lacks.
std::vector<std::string> sweep_columns(const ExperimentSpec& spec, const std::vector<std::string_view>& keys);

// The cell of a row without `column` in its config: the absent_cell of the key that gives the column
// ("" for a column no key gives).
std::string_view absent_cell(std::string_view column);

}  // namespace mutwo::experiments

#pragma once
// The keys of an experiment spec's [sweep] table, declared once: each with its one-line meaning and
// how it is read into a Sweep. The spec reader (spec.cpp) and `mutwo experiment --help` read this
// table; which keys a kind accepts is the kind's (ExperimentKind::sweep_keys), and each must be here.
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
};

const std::vector<SweepKeyInfo>& sweep_key_table();
const SweepKeyInfo* find_sweep_key(std::string_view name);  // null when the table lacks it

}  // namespace mutwo::experiments

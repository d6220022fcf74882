#include "experiments/spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/experiment_kind.hpp"
#include "experiments/sweep_keys.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"
#include "support/toml_reader.hpp"
#include "zoo/exported_model.hpp"

// The source tree's experiments/ folder: relative paths of an embedded spec resolve against it.
#ifndef MUTWO_EXPERIMENTS_DIR
#error "MUTWO_EXPERIMENTS_DIR must be defined by experiments/CMakeLists.txt"
#endif

namespace mutwo::experiments {
namespace {

// Reads one spec: every error names the source, the line and the key; [sweep] through its key table
// (sweep_keys.hpp).
class SpecReader : public support::TomlReader {
 public:
  using TomlReader::TomlReader;

  void sweep(const toml::table& t, ExperimentSpec& spec) const {
    const ExperimentKind& kind = builtin_experiment_kinds().find(spec.kind);
    std::vector<std::string_view> known(kind.sweep_keys().begin(), kind.sweep_keys().end());
    reject_unknown(t, "sweep.", known);
    Sweep& s = spec.sweep;
    for (const auto& [k, node] : t) {
      const std::string key = fmt::format("sweep.{}", k.str());
      const std::string_view name = k.str();
      spec.sweep_keys_given.emplace_back(name);
      const SweepKeyInfo* info = find_sweep_key(name);
      // A kind that lists a key the table does not know is a bug in that kind.
      if (info == nullptr) fail(&node, key, "is listed by the kind but has no reader");
      info->read(*this, node, key, s);
    }
  }
};

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

}  // namespace

ExperimentSpec parse_spec(std::string_view text, std::string_view source,
                          const std::filesystem::path& base_dir) {
  const toml::table root = support::parse_toml(text, source);
  const SpecReader r(source);
  r.reject_unknown(root, "", {"name", "title", "description", "kind", "figures", "sweep"});
  ExperimentSpec spec;
  spec.name = r.string(root, "", "name");
  if (!valid_name(spec.name)) {
    r.fail(root.get("name"), "name",
           fmt::format("= '{}' must be lower-case letters, digits, '_' or '-'", spec.name));
  }
  spec.title = r.string(root, "", "title");
  spec.description = r.optional_string(root, "", "description").value_or("");
  spec.kind = r.string(root, "", "kind");
  const ExperimentKind& kind = builtin_experiment_kinds().find(spec.kind);  // unknown: lists the valid
  if (const toml::node* f = root.get("figures")) {
    spec.figures = r.strings(*f, "figures");
    for (const std::string& figure : spec.figures) {
      const auto& valid = kind.figures();
      if (std::find(valid.begin(), valid.end(), figure) == valid.end()) {
        r.fail(f, "figures",
               fmt::format("names '{}', which kind '{}' does not draw; valid: {}", figure, spec.kind,
                           fmt::join(valid, ", ")));
      }
    }
  }
  if (const toml::node* s = root.get("sweep")) {
    const auto* t = s->as_table();
    if (t == nullptr) r.fail(s, "sweep", "must be a table ([sweep])");
    r.sweep(*t, spec);
  }
  // A model given as a file (an exported model, zoo/exported_model.hpp) resolves
  // against the spec's folder, as sweep.traces do.
  for (SweepModel& m : spec.sweep.models) {
    const std::filesystem::path file(m.name);
    if (zoo::is_model_file(m.name) && file.is_relative())
      m.name = (base_dir / file).lexically_normal().string();
  }
  spec.source = std::string(source);
  spec.base_dir = base_dir;
  spec.text = std::string(text);
  return spec;
}

ExperimentSpec read_spec(const std::string& path_or_name) {
  const std::filesystem::path path(path_or_name);
  std::error_code ec;
  const bool is_file = std::filesystem::is_regular_file(path, ec);
  if (is_file || path.extension() == ".toml" || path_or_name.find('/') != std::string::npos) {
    if (!is_file) {
      throw Error(fmt::format(
          "cannot read experiment spec '{}': {}", path_or_name,
          std::filesystem::is_directory(path, ec) ? "a directory, not a spec file (.toml)" : "no such file"));
    }
    return parse_spec(support::read_file_bytes(path, "experiment spec"), path_or_name,
                      path.parent_path().empty() ? "." : path.parent_path());
  }
  std::vector<std::string_view> names;
  for (const ShippedSpec& s : shipped_specs()) {
    if (s.name == path_or_name) {
      return parse_spec(s.toml, fmt::format("<builtin>/{}.toml", s.name), MUTWO_EXPERIMENTS_DIR);
    }
    names.push_back(s.name);
  }
  throw UnknownNameError(fmt::format("unknown experiment '{}': not a file, nor a shipped spec; shipped: {}",
                                     path_or_name, fmt::join(names, ", ")));
}

}  // namespace mutwo::experiments

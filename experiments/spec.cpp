#include "experiments/spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/experiment_kind.hpp"
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

// Reads one spec: every error names the source, the line and the key.
class SpecReader : public support::TomlReader {
 public:
  using TomlReader::TomlReader;

  SweepModel model(const toml::node& n, size_t index) const {
    const std::string prefix = fmt::format("sweep.models[{}].", index);
    const auto* t = n.as_table();
    if (t == nullptr)
      fail(&n, prefix.substr(0, prefix.size() - 1), "must be a table { name = ..., batch_sizes = [...] }");
    reject_unknown(*t, prefix, {"name", "batch_sizes", "seq_len", "image_size"});
    SweepModel m;
    m.name = string(*t, prefix, "name");
    if (const toml::node* b = t->get("batch_sizes"))
      m.batch_sizes = integers(*b, prefix + "batch_sizes", 1, 1 << 20);
    if (const toml::node* s = t->get("seq_len")) m.seq_len = integer(*s, prefix + "seq_len", 1, 1 << 20);
    if (const toml::node* s = t->get("image_size"))
      m.image_size = integer(*s, prefix + "image_size", 1, 1 << 16);
    return m;
  }

  void sweep(const toml::table& t, ExperimentSpec& spec) const {
    const ExperimentKind& kind = builtin_experiment_kinds().find(spec.kind);
    std::vector<std::string_view> known(kind.sweep_keys().begin(), kind.sweep_keys().end());
    reject_unknown(t, "sweep.", known);
    Sweep& s = spec.sweep;
    for (const auto& [k, node] : t) {
      const std::string key = fmt::format("sweep.{}", k.str());
      const std::string_view name = k.str();
      spec.sweep_keys_given.emplace_back(name);
      if (name == "models") {
        const toml::array& a = array(node, key);
        for (size_t i = 0; i < a.size(); ++i) s.models.push_back(model(*a.get(i), i));
        for (size_t i = 0; i < s.models.size(); ++i) {
          for (size_t j = 0; j < i; ++j) {
            if (s.models[i].name == s.models[j].name)
              fail(a.get(i), key, fmt::format("names '{}' twice", s.models[i].name));
          }
        }
      } else if (name == "model_counts") {
        for (int64_t v : integers(node, key, 1, 1024)) s.model_counts.push_back(static_cast<int32_t>(v));
      } else if (name == "gpus") {
        s.gpus = strings(node, key);
      } else if (name == "host_link_gbps") {
        s.host_link_gbps = positives(node, key, 10000.0);
      } else if (name == "memory_limits") {
        s.memory_limits = strings(node, key);
      } else if (name == "memory_fractions") {
        s.memory_fractions = positives(node, key, 1.0);
      } else if (name == "strategies") {
        s.strategies = strings(node, key);
      } else if (name == "policies") {
        s.policies = strings(node, key);
      } else if (name == "lean_ops") {
        s.lean_ops = strings(node, key);
      } else if (name == "dtype" || name == "optimizer" || name == "cost_source" || name == "device" ||
                 name == "precision" || name == "host_mode") {
        const auto* v = node.as_string();
        if (v == nullptr) fail(&node, key, fmt::format("must be a string, not {}", type_name(node)));
        (name == "dtype"       ? s.dtype
         : name == "optimizer" ? s.optimizer
         : name == "device"    ? s.device
         : name == "precision" ? s.precision
         : name == "host_mode" ? s.host_mode
                               : s.cost_source) = v->get();
      } else if (name == "iterations") {
        s.iterations = static_cast<int32_t>(integer(node, key, 1, 1 << 20));
      } else if (name == "warmup") {
        s.warmup = static_cast<int32_t>(integer(node, key, 0, 1 << 20));
      } else if (name == "logs") {
        s.logs = strings(node, key);
      } else if (name == "traces") {
        s.traces = strings(node, key);
      } else if (name == "heuristics") {
        s.heuristics = strings(node, key);
      } else if (name == "cost_sources") {
        s.cost_sources = strings(node, key);
      } else if (name == "host_modes") {
        s.host_modes = strings(node, key);
      } else if (name == "published") {
        const auto* v = node.as_string();
        if (v == nullptr) fail(&node, key, fmt::format("must be a string, not {}", type_name(node)));
        s.published = v->get();
      } else if (name == "servers") {
        s.servers = strings(node, key);
      } else if (name == "schemes") {
        s.schemes = strings(node, key);
      } else if (name == "gpu_counts") {
        for (int64_t v : integers(node, key, 1, 1024)) s.gpu_counts.push_back(static_cast<int32_t>(v));
      } else if (name == "micro_batches") {
        for (int64_t v : integers(node, key, 1, 1024)) s.micro_batches.push_back(static_cast<int32_t>(v));
      } else if (name == "packs") {
        for (int64_t v : integers(node, key, 1, 4096)) s.packs.push_back(static_cast<int32_t>(v));
      } else if (name == "budget_ratios") {
        s.budget_ratios = positives(node, key, std::numeric_limits<double>::max());
      } else if (name == "overhead_limit") {
        s.overhead_limit = number(node, key);
        if (!(s.overhead_limit > 1)) fail(&node, key, fmt::format("= {} must be > 1", s.overhead_limit));
      } else {
        // A kind that lists a key this reader does not know is a bug in that kind.
        fail(&node, key, "is listed by the kind but has no reader");
      }
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
    if (!is_file) throw Error(fmt::format("cannot read experiment spec '{}': no such file", path_or_name));
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

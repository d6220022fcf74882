// Kind `published`: end-to-end fidelity against published measured training throughputs of real
// implementations (docs/published_throughput.csv, each row cited). Each row's configuration (zoo
// model, batch, sequence / image size, precision, optimizer, catalog GPU) is simulated as one plain
// training step, per cost source and host mode, and the predicted samples/s is reported beside the
// published one; a row that accumulates gradients over N micro-batches pays its optimizer-phase ops
// once per N; a row whose loader pads each batch to its longest sequence is priced at every length its
// batches are padded to, each weighted by its share of batches (experiments/padded_lengths.hpp).
// Validation only: nothing is fitted to these numbers.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/calibration_profile.hpp"
#include "costmodel/cost_setup.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/op_cost_model.hpp"
#include "experiments/content_hash.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/padded_lengths.hpp"
#include "experiments/published_csv.hpp"
#include "experiments/results_db.hpp"
#include "ir/dtype.hpp"
#include "ir/precision.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/host_mode.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {
namespace {

std::filesystem::path published_path(const ExperimentSpec& spec) {
  const std::filesystem::path p(spec.sweep.published);
  return p.is_absolute() ? p : spec.base_dir / p;
}

std::vector<std::string> cost_sources(const ExperimentSpec& spec) {
  return spec.sweep.cost_sources.empty() ? std::vector<std::string>{costmodel::kDefaultCostSource}
                                         : spec.sweep.cost_sources;
}

std::vector<std::string> host_modes(const ExperimentSpec& spec) {
  return spec.sweep.host_modes.empty() ? std::vector<std::string>{"eager"} : spec.sweep.host_modes;
}

// A source that reads calibration profiles prices a row only where a profile calibrates its GPU
// (shipped or fitted on the same chip); elsewhere the row has no such prediction.
bool source_covers(const std::string& source, const std::string& gpu) {
  if (!costmodel::builtin_cost_sources().find(source).reads_calibration_profiles) return true;
  return costmodel::find_calibration_profile(costmodel::find_device(gpu)).has_value();
}

// The zoo model's sequence / image size: the row's, else the model's default (0 where it has none).
int64_t size_or_default(int64_t given, int64_t model_default) {
  return model_default == 0 ? 0 : (given > 0 ? given : model_default);
}

// A row's length histogram, its path relative to the published CSV's folder.
std::filesystem::path histogram_path(const ExperimentSpec& spec, const std::string& file) {
  const std::filesystem::path p(file);
  return p.is_absolute() ? p : published_path(spec).parent_path() / p;
}

// The lengths the row's batches are padded to, with their shares: its seq_len alone without a histogram.
std::vector<PaddedLength> row_lengths(const ExperimentSpec& spec, const nlohmann::json& config) {
  const int64_t seq_len = config.at("seq_len").get<int64_t>();
  if (!config.contains("length_histogram")) return {{seq_len, 1.0}};
  const LengthHistogram h =
      read_length_histogram(histogram_path(spec, config.at("length_histogram").get<std::string>()).string());
  return padded_lengths(
      h, {config.at("batch_size").get<int64_t>(), config.at("length_bin_tokens").get<int64_t>(),
          config.at("length_align_tokens").get<int64_t>()});
}

class PublishedKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "published"; }
  std::string_view description() const override {
    return "predicted against published measured training throughputs (a cited CSV), per cost source and "
           "host mode";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {"published", "cost_sources", "host_modes"};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {"predicted_vs_published"};
    return f;
  }

  void validate(const ExperimentSpec& spec) const override {
    require_sweep_keys(spec, {"published"});
    const std::filesystem::path path = published_path(spec);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw Error(fmt::format("{}: 'sweep.published' = '{}': no such file ({})", spec.source,
                              spec.sweep.published, path.string()));
    }
    auto named = [&](std::string_view key, const std::string& value, auto&& check) {
      try {
        check();
      } catch (const UnknownNameError& e) {
        throw UnknownNameError(fmt::format("{}: {} = '{}': {}", spec.source, key, value, e.what()));
      }
    };
    for (const std::string& s : cost_sources(spec)) {
      named("'sweep.cost_sources'", s, [&] {
        const costmodel::CostSourceInfo& info = costmodel::builtin_cost_sources().find(s);
        if (info.requires_measured_traces) {
          throw UnknownNameError(
              fmt::format("cost source '{}' needs measured traces, which published rows lack", s));
        }
      });
    }
    for (const std::string& h : host_modes(spec))
      named("'sweep.host_modes'", h, [&] { sim::parse_host_mode(h); });
    const std::string file = path.string();
    for (const PublishedThroughput& r : read_published_csv(file)) {
      const std::string where = fmt::format("{} (row '{}')", file, r.id);
      named(where + " zoo_model", r.zoo_model, [&] { zoo::find_model(r.zoo_model); });
      named(where + " gpu", r.gpu, [&] { costmodel::find_device(r.gpu); });
      named(where + " precision", r.precision, [&] { ir::parse_precision(r.precision); });
      named(where + " optimizer", r.optimizer, [&] { transforms::parse_optimizer(r.optimizer); });
      if (r.length_histogram.empty()) continue;
      if (zoo::find_model(r.zoo_model).default_seq_len == 0) {
        throw Error(fmt::format("{}: length_histogram '{}': zoo model '{}' takes no sequence length", where,
                                r.length_histogram, r.zoo_model));
      }
      const LengthHistogram h = read_length_histogram(histogram_path(spec, r.length_histogram).string());
      if (h.longest_tokens() > r.seq_len) {
        throw Error(
            fmt::format("{}: length_histogram '{}' holds sequences of {} tokens, more than its seq_len = {}",
                        where, r.length_histogram, h.longest_tokens(), r.seq_len));
      }
    }
  }

  // Rows whose GPU a cost source does not cover are left out: an upper bound.
  std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const override {
    const size_t rows = read_published_csv(published_path(spec).string()).size();
    return {{"published rows", static_cast<int64_t>(rows)},
            {"cost_sources", static_cast<int64_t>(cost_sources(spec).size())},
            {"host_modes", static_cast<int64_t>(host_modes(spec).size())}};
  }

  // One task per published row: its schedule is built once for every cost source and host mode.
  std::vector<Task> expand(const ExperimentSpec& spec) const override {
    std::vector<Task> tasks;
    for (const PublishedThroughput& r : read_published_csv(published_path(spec).string())) {
      const zoo::ModelInfo& info = zoo::find_model(r.zoo_model);
      Task t;
      t.label = fmt::format("{}: {} batch {}, {}, {}", r.id, r.zoo_model, r.batch_size, r.precision, r.gpu);
      // A changed histogram is a new configuration, as a changed DTR log is (an edited file kept the old
      // rows "already stored"). Read once per row, not per source and host mode.
      const std::string histogram_hash =
          r.length_histogram.empty() ? std::string()
                                     : content_hash(support::read_file_bytes(
                                           histogram_path(spec, r.length_histogram), "length histogram"));
      for (const std::string& source : cost_sources(spec)) {
        if (!source_covers(source, r.gpu)) continue;
        for (const std::string& host : host_modes(spec)) {
          t.configs.push_back({{"experiment", spec.name},
                               {"kind", spec.kind},
                               {"published_id", r.id},
                               {"model", r.zoo_model},
                               {"batch_size", r.batch_size},
                               {"seq_len", size_or_default(r.seq_len, info.default_seq_len)},
                               {"image_size", size_or_default(r.image_size, info.default_image_size)},
                               {"precision", r.precision},
                               {"optimizer", r.optimizer},
                               {"accumulation_steps", r.accumulation_steps},
                               {"gpu", r.gpu},
                               {"cost_source", source},
                               {"host_mode", host},
                               {"published_samples_per_s", r.samples_per_s},
                               {"gpus_in_run", r.gpus_in_run}});
          if (!r.length_histogram.empty()) {
            nlohmann::json& c = t.configs.back();
            c["length_histogram"] = r.length_histogram;
            c["length_histogram_hash"] = histogram_hash;
            c["length_bin_tokens"] = r.length_bin_tokens;
            c["length_align_tokens"] = r.length_align_tokens;
          }
        }
      }
      if (!t.configs.empty()) tasks.push_back(std::move(t));
    }
    return tasks;
  }

  std::vector<ResultRow> run(const ExperimentSpec& spec, const Task& task) const override {
    const nlohmann::json& first = task.configs.front();
    policies::ModelArray array;
    array.model = first.at("model").get<std::string>();
    array.config.batch_size = first.at("batch_size").get<int64_t>();
    array.config.seq_len = first.at("seq_len").get<int64_t>();
    array.config.image_size = first.at("image_size").get<int64_t>();
    array.config.dtype = ir::parse_dtype("fp32");
    array.config.precision = ir::parse_precision(first.at("precision").get<std::string>());
    array.optimizer.kind = transforms::parse_optimizer(first.at("optimizer").get<std::string>());
    // One schedule per length the row's batches are padded to (its seq_len alone without a histogram).
    const std::vector<PaddedLength> lengths = row_lengths(spec, first);
    std::vector<ir::Schedule> schedules;
    schedules.reserve(lengths.size());
    for (const PaddedLength& l : lengths) {
      policies::ModelArray at = array;
      if (at.config.seq_len > 0) at.config.seq_len = l.tokens;
      schedules.push_back(policies::build_plain_schedule(policies::sub_array_steps(at, {1})));
    }
    const int64_t samples = ir::samples_per_step(schedules.front());
    double mean_tokens = 0;
    for (const PaddedLength& l : lengths) mean_tokens += l.batch_share * static_cast<double>(l.tokens);

    std::vector<ResultRow> rows;
    for (const nlohmann::json& c : task.configs) {
      const std::string source = c.at("cost_source").get<std::string>();
      const std::string host = c.at("host_mode").get<std::string>();
      costmodel::CostSetup setup;
      setup.gpu = c.at("gpu").get<std::string>();
      setup.cost_source = source;
      const std::unique_ptr<costmodel::OpCostModel> cost = costmodel::make_cost_model(setup);
      sim::SimOptions options;
      options.host_mode = sim::parse_host_mode(host);
      // The published run fitted its GPU: price the whole step, and report whether mutwo's peak fits.
      options.continue_past_limit = true;
      // A run that accumulates gradients over N micro-batches steps its optimizer once per N: a
      // micro-batch costs the step less its optimizer-phase ops (the update, AMP's unscale), which it
      // pays 1/N of (the add of each micro-batch's gradients into the accumulated ones is not priced).
      // Over padded lengths each figure is the batches' mean; the prediction kept is the longest's.
      const int64_t accumulation = c.at("accumulation_steps").get<int64_t>();
      sim::Prediction p;
      double step_ns = 0, optimizer_ns = 0, micro_batch_ns = 0, gpu_busy_ns = 0, host_busy_ns = 0,
             host_bound_idle_ns = 0;
      bool oom = false;
      for (size_t i = 0; i < lengths.size(); ++i) {
        const ir::Schedule& schedule = schedules[i];
        p = sim::simulate(schedule, *cost, options);
        int64_t length_optimizer_ns = 0;
        if (accumulation > 1) {
          const std::vector<int64_t> durations = costmodel::op_durations_ns(*cost, schedule.graph);
          for (const ir::Op& op : schedule.graph.ops) {
            if (op.phase == ir::Phase::optimizer)
              length_optimizer_ns += durations[static_cast<size_t>(op.id)];
          }
          length_optimizer_ns = std::min(length_optimizer_ns, p.step_time_ns);
        }
        const double share = lengths[i].batch_share;
        const auto as = [](int64_t v) { return static_cast<double>(v); };
        step_ns += share * as(p.step_time_ns);
        optimizer_ns += share * as(length_optimizer_ns);
        micro_batch_ns += share * (as(p.step_time_ns - length_optimizer_ns) +
                                   as(length_optimizer_ns) / static_cast<double>(accumulation));
        gpu_busy_ns += share * as(p.busy_ns.empty() ? 0 : p.busy_ns.front());
        host_busy_ns += share * as(p.host_busy_ns);
        host_bound_idle_ns += share * as(p.host_bound_idle_ns);
        oom = oom || p.oom;
      }

      const double published = c.at("published_samples_per_s").get<double>();
      const double predicted = static_cast<double>(samples) * 1e9 / micro_batch_ns;
      ResultRow out;
      out.run.kind = "simulate";
      out.run.model = array.model;
      out.run.models = 1;
      out.run.partition = "1";
      out.run.policy = "none";
      out.run.batch_size = array.config.batch_size;
      out.run.seq_len = array.config.seq_len;
      out.run.image_size = array.config.image_size;
      out.run.dtype = "fp32";
      out.run.optimizer = c.at("optimizer").get<std::string>();
      out.run.gpu = setup.gpu;
      out.run.memory_limit_bytes = p.memory_limit_bytes;
      out.run.cost_source = source;
      out.run.notes =
          fmt::format("published {}: precision {}, host {}", c.at("published_id").get<std::string>(),
                      c.at("precision").get<std::string>(), host);
      out.prediction = prediction_record(p, samples);
      if (lengths.size() > 1) {
        out.run.notes += fmt::format(
            "; {} padded lengths, mean {:.1f} tokens: step time their batches' mean, "
            "peak the longest's",
            lengths.size(), mean_tokens);
        out.prediction->step_time_ns = std::llround(step_ns);
        out.prediction->oom = oom;
      }
      out.row.experiment = spec.name;
      out.row.series = fmt::format("{}, host {}", source, host);
      out.row.feasible = !oom;  // mutwo's peak fits the GPU, as the published run did
      const auto as = [](int64_t v) { return static_cast<double>(v); };
      out.row.metrics = {{"published_samples_per_s", published},
                         {"predicted_samples_per_s", predicted},
                         {"error_pct", 100.0 * (predicted - published) / published},
                         {"step_time_ns", step_ns},
                         {"accumulation_steps", as(accumulation)},
                         {"optimizer_ns", optimizer_ns},
                         {"micro_batch_ns", micro_batch_ns},
                         {"gpu_busy_ns", gpu_busy_ns},
                         {"host_busy_ns", host_busy_ns},
                         {"host_bound_idle_ns", host_bound_idle_ns},
                         {"peak_bytes", as(p.peak_bytes)},
                         {"memory_limit_bytes", as(p.memory_limit_bytes)},
                         {"samples_per_step", as(samples)},
                         {"mean_seq_len", mean_tokens},
                         {"padded_lengths", as(static_cast<int64_t>(lengths.size()))}};
      rows.push_back(std::move(out));
    }
    return rows;
  }

  CsvTable table(const ExperimentSpec&, const std::vector<StoredExperimentRow>& rows,
                 const ResultsDb&) const override {
    return metrics_table(rows,
                         {"published_id", "model", "batch_size", "seq_len", "image_size", "precision",
                          "optimizer", "gpu", "gpus_in_run", "cost_source", "host_mode"},
                         {}, {});
  }
};

}  // namespace

namespace {

void register_published_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<PublishedKind>());
}

[[maybe_unused]] const bool kRegistered = Plugins<ExperimentKindRegistry>::add(50, register_published_kind);

}  // namespace

}  // namespace mutwo::experiments

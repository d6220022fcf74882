// Kind `server_schemes`: Harmony's schemes (policies/server_schemes.hpp) for one model on a server
// (Li et al., HotOS 2021): per model, batch, server and layer-pack count, every scheme x GPU count N
// x micro-batch count M simulated on the server (sim/server_simulator.hpp). Per row: the swap volume
// of W, dW, K and X and the peer volume as simulated, each beside the table's formula (the
// `expected_` metrics) and in units of W, dW, K, X; then step time, samples/s, the most stalled
// GPU's compute stall, the highest GPU's peak and whether it fits, and the host link's utilisation.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/server_catalog.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"
#include "experiments/sweep_keys.hpp"
#include "policies/layer_packs.hpp"
#include "policies/server_schemes.hpp"
#include "sim/server_simulator.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::experiments {
namespace {

using ir::Payload;

class ServerSchemesKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "server_schemes"; }
  std::string_view description() const override {
    return "Harmony's schemes on a multi-GPU server: swap and peer volumes per data batch (simulated and by "
           "formula), step time and stall";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {"models", "servers", "schemes", "gpu_counts", "micro_batches",
                                                       "packs", "dtype", "precision", "optimizer", "cost_source"};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {"scheme_volumes", "scheme_step_time"};
    return f;
  }

  void validate(const ExperimentSpec& spec) const override {
    require_sweep_keys(spec, {"models", "servers", "gpu_counts", "micro_batches"});
    const Sweep& s = spec.sweep;
    auto named = [&](std::string_view key, const std::string& value, auto&& check) {
      check_sweep_name(spec, key, value, check);
    };
    for (const SweepModel& m : s.models) named("models", m.name, [&] { zoo::find_model(m.name); });
    for (const std::string& v : s.servers) named("servers", v, [&] { costmodel::builtin_servers().find(v); });
    for (const std::string& v : s.schemes) named("schemes", v, [&] { policies::builtin_server_schemes().find(v); });
    named("dtype", s.dtype, [&] { ir::parse_dtype(s.dtype); });
    named("precision", s.precision, [&] { ir::parse_precision(s.precision); });
    named("optimizer", s.optimizer, [&] { transforms::parse_optimizer(s.optimizer); });
    named("cost_source", s.cost_source, [&] { costmodel::builtin_cost_sources().find(s.cost_source); });
    if (costmodel::builtin_cost_sources().find(s.cost_source).requires_measured_traces) {
      throw Error(fmt::format("{}: 'sweep.cost_source' = '{}' needs measured traces, which server_schemes does not "
                              "take", spec.source, s.cost_source));
    }
    // Each model at each batch is built once here, as its configurations build it: a sequence past
    // its positions failed at its first configuration, after the database was made.
    for (const SweepModel& m : s.models) {
      const zoo::ModelInfo& info = zoo::find_model(m.name);
      for (const int64_t batch :
           m.batch_sizes.empty() ? std::vector<int64_t>{info.default_batch_size} : m.batch_sizes) {
        ArrayPoint point;
        point.model = m.name;
        point.batch_size = batch;
        point.seq_len = m.seq_len > 0 ? m.seq_len : info.default_seq_len;
        point.image_size = m.image_size > 0 ? m.image_size : info.default_image_size;
        point.dtype = s.dtype;
        point.precision = s.precision;
        try {
          (void)zoo::build_model(point.model, point.model_config());
        } catch (const Error& e) {
          throw Error(
              fmt::format("{}: 'sweep.models' = '{}' at batch {}: {}", spec.source, m.name, batch, e.what()));
        }
      }
    }
    for (const std::string& server : s.servers) {
      const int32_t gpus = costmodel::find_server(server).gpu_count;
      for (const int32_t n : s.gpu_counts) {
        if (n > gpus) {
          throw Error(fmt::format("{}: 'sweep.gpu_counts' = {} exceeds server '{}' ({} GPUs)", spec.source, n, server,
                                  gpus));
        }
      }
    }
  }

  std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const override {
    const Sweep& s = spec.sweep;
    int64_t pairs = 0;  // a model without batch sizes runs at its default one
    for (const SweepModel& m : s.models)
      pairs += m.batch_sizes.empty() ? 1 : static_cast<int64_t>(m.batch_sizes.size());
    const size_t schemes =
        s.schemes.empty() ? policies::builtin_server_schemes().names().size() : s.schemes.size();
    return {{"model/batch pairs", pairs},
            {"servers", static_cast<int64_t>(s.servers.size())},
            {"packs", s.packs.empty() ? 1 : static_cast<int64_t>(s.packs.size())},
            {"schemes", static_cast<int64_t>(schemes)},
            {"gpu_counts", static_cast<int64_t>(s.gpu_counts.size())},
            {"micro_batches", static_cast<int64_t>(s.micro_batches.size())}};
  }

  std::vector<Task> expand(const ExperimentSpec& spec) const override {
    const Sweep& s = spec.sweep;
    std::vector<std::string> schemes = s.schemes;
    if (schemes.empty()) schemes = policies::builtin_server_schemes().names();
    const std::vector<int32_t> packs = s.packs.empty() ? std::vector<int32_t>{8} : s.packs;
    std::vector<Task> tasks;
    for (const SweepModel& m : s.models) {
      const zoo::ModelInfo& info = zoo::find_model(m.name);
      const std::vector<int64_t> batches = m.batch_sizes.empty() ? std::vector<int64_t>{info.default_batch_size} : m.batch_sizes;
      for (const int64_t batch : batches) {
        for (const std::string& server : s.servers) {
          for (const int32_t p : packs) {
            Task t;
            t.label = fmt::format("{}, batch {}, {}, {} packs", m.name, batch, server, p);
            for (const std::string& scheme : schemes) {
              for (const int32_t n : s.gpu_counts) {
                for (const int32_t mb : s.micro_batches) {
                  // The experiment and kind key the row as every kind's do: without them a second spec
                  // of the same sweep found the first one's rows "already stored" and ran nothing.
                  nlohmann::json c = {{"experiment", spec.name}, {"kind", spec.kind}};
                  c["model"] = m.name;
                  c["batch_size"] = batch;
                  c["seq_len"] = m.seq_len > 0 ? m.seq_len : info.default_seq_len;
                  c["image_size"] = m.image_size > 0 ? m.image_size : info.default_image_size;
                  c["server"] = server;
                  c["gpu"] = costmodel::find_server(server).gpu;
                  c["packs"] = p;
                  c["scheme"] = scheme;
                  c["gpus"] = n;
                  c["micro_batches"] = mb;
                  c["dtype"] = s.dtype;
                  c["precision"] = s.precision;
                  c["optimizer"] = s.optimizer;
                  c["cost_source"] = s.cost_source;
                  t.configs.push_back(std::move(c));
                }
              }
            }
            tasks.push_back(std::move(t));
          }
        }
      }
    }
    return tasks;
  }

  std::vector<ResultRow> run(const ExperimentSpec& spec, const Task& task) const override {
    const nlohmann::json& c0 = task.configs.front();
    ArrayPoint point;
    point.model = c0["model"];
    point.batch_size = c0["batch_size"];
    point.seq_len = c0["seq_len"];
    point.image_size = c0["image_size"];
    point.dtype = c0["dtype"];
    point.precision = c0["precision"];
    point.optimizer = c0["optimizer"];
    point.gpu = c0["gpu"];
    point.cost_source = c0["cost_source"];
    const std::unique_ptr<costmodel::OpCostModel> cost = array_cost_model(point);
    const costmodel::ServerSpec server = costmodel::find_server(c0["server"].get<std::string>());
    const ir::Graph step = transforms::build_training_step(
        zoo::build_model(point.model, point.model_config()), point.optimizer_config());
    const policies::PackedModel packed = policies::pack_training_step(step, *cost, c0["packs"].get<int32_t>());
    std::vector<ResultRow> rows;
    for (const nlohmann::json& c : task.configs) {
      const std::string scheme = c["scheme"];
      const policies::SchemeConfig sc{c["gpus"].get<int32_t>(), c["micro_batches"].get<int32_t>()};
      ResultRow out;
      out.run = array_run_record(point);
      out.run.policy = scheme;
      out.run.partition = fmt::format("N={},M={}", sc.gpus, sc.micro_batches);
      out.run.memory_limit_bytes = costmodel::find_device(server.gpu).memory_bytes;
      out.run.notes = server.name;
      out.row.experiment = spec.name;
      out.row.series = scheme;
      auto add = [&](const char* name, double value) { out.row.metrics.push_back({name, value}); };
      const policies::ServerSchemeInfo& info = policies::builtin_server_schemes().find(scheme);
      if (!info.data_parallel && sc.gpus > static_cast<int32_t>(packed.packs.size())) {
        out.row.feasible = false;
        out.run.notes += fmt::format("; {} GPUs need as many packs ({})", sc.gpus, packed.packs.size());
        rows.push_back(std::move(out));
        continue;
      }
      const ir::ServerSchedule schedule = policies::build_server_schedule(scheme, packed, server, sc);
      const sim::ServerPrediction p = sim::simulate_server(schedule, server);
      const policies::SchemeVolumes v = policies::expected_volumes(scheme, packed, sc);
      out.row.feasible = !p.oom;
      if (p.oom) out.run.notes += "; " + p.oom_message;
      const auto swap = [&](Payload x) { return static_cast<double>(p.swap_bytes[static_cast<size_t>(x)]); };
      double peer = 0;
      for (const int64_t b : p.peer_bytes) peer += static_cast<double>(b);
      const auto w = static_cast<double>(packed.weight_bytes());
      const auto dw = static_cast<double>(packed.gradient_bytes());
      const auto k = static_cast<double>(packed.optimizer_bytes());
      const auto x = static_cast<double>(packed.stash_bytes());
      add("swap_weights_bytes", swap(Payload::weights));
      add("swap_gradients_bytes", swap(Payload::weight_gradients));
      add("swap_optimizer_bytes", swap(Payload::optimizer_state));
      add("swap_stash_bytes", swap(Payload::stashed_activations));
      add("peer_bytes", peer);
      add("expected_swap_weights_bytes", static_cast<double>(v.swap_weights));
      add("expected_swap_gradients_bytes", static_cast<double>(v.swap_gradients));
      add("expected_swap_optimizer_bytes", static_cast<double>(v.swap_optimizer));
      add("expected_swap_stash_bytes", static_cast<double>(v.swap_stash));
      add("expected_peer_bytes", static_cast<double>(v.peer_bytes));
      add("swap_weights_over_w", swap(Payload::weights) / w);
      add("swap_gradients_over_dw", swap(Payload::weight_gradients) / dw);
      add("swap_optimizer_over_k", swap(Payload::optimizer_state) / k);
      add("swap_stash_over_x", x > 0 ? swap(Payload::stashed_activations) / x : 0);
      add("weight_bytes", w);
      add("stash_bytes", x);
      add("step_time_ns", static_cast<double>(p.step_time_ns));
      add("samples_per_step", static_cast<double>(schedule.samples_per_step));
      add("samples_per_s", static_cast<double>(schedule.samples_per_step) * 1e9 / static_cast<double>(p.step_time_ns));
      add("compute_stall_ns", static_cast<double>(p.compute_stall_ns));
      int64_t peak = 0;
      for (const auto& g : p.gpus) peak = std::max(peak, g.peak_bytes);
      add("peak_bytes", static_cast<double>(peak));
      // The busiest link (resource 0, host memory, aside): the root link on a single-root server.
      const double host_link = p.resource_utilisation.size() > 1
                                   ? *std::max_element(p.resource_utilisation.begin() + 1, p.resource_utilisation.end())
                                   : 0.0;
      add("busiest_link_utilisation", host_link);
      rows.push_back(std::move(out));
    }
    return rows;
  }

  CsvTable table(const ExperimentSpec& spec, const std::vector<StoredExperimentRow>& rows,
                 const ResultsDb&) const override {
    CsvTable t;
    const std::vector<std::string> columns =
        sweep_columns(spec, {"models", "servers", "packs", "schemes", "gpu_counts", "micro_batches"});
    t.header = columns;
    t.header.insert(t.header.end(),
                    {"feasible", "swap_W", "swap_dW", "swap_K", "swap_X", "peer_GB", "expected_match",
                     "step_time_ms", "samples_per_s", "stall_ms", "peak_GiB", "busiest_link_utilisation"});
    for (const StoredExperimentRow& r : rows) {
      const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
      auto metric = [&](const char* name) { return r.row.metric(name).value_or(0); };
      bool match = true;
      for (const char* m : {"swap_weights_bytes", "swap_gradients_bytes", "swap_optimizer_bytes", "swap_stash_bytes",
                            "peer_bytes"}) {
        match = match && r.row.metric(m) == r.row.metric(std::string("expected_") + m);
      }
      std::vector<std::string> cells = config_cells(c, columns);
      cells.insert(
          cells.end(),
          {r.row.feasible ? "yes" : "no", number_cell(metric("swap_weights_over_w")),
           number_cell(metric("swap_gradients_over_dw")), number_cell(metric("swap_optimizer_over_k")),
           number_cell(metric("swap_stash_over_x")), number_cell(metric("peer_bytes") / 1e9),
           match ? "yes" : "no", number_cell(metric("step_time_ns") / 1e6),
           number_cell(metric("samples_per_s")), number_cell(metric("compute_stall_ns") / 1e6),
           number_cell(metric("peak_bytes") / static_cast<double>(int64_t{1} << 30)),
           number_cell(metric("busiest_link_utilisation"))});
      t.rows.push_back(std::move(cells));
    }
    return t;
  }
};

}  // namespace

namespace {

void register_server_schemes_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<ServerSchemesKind>());
}

[[maybe_unused]] const bool kRegistered =
    Plugins<ExperimentKindRegistry>::add(70, register_server_schemes_kind);

}  // namespace

}  // namespace mutwo::experiments

// The experiment kinds' rows, run through the runner: dtr rows equal to simrd's answers, a failing
// configuration that stops the run and keeps what was written, CSV quoting, measured sweeps one at a
// time, exported models in specs, and lean layers.
// The runner itself (specs, expansion, shards, resumption) is tests/test_experiments.cpp.
#include "experiments/content_hash.hpp"
#include "support/text_file.hpp"
#include "tests/support/test_experiments_fixtures.hpp"

TEST_CASE("dtr rows equal DTR's simulator simrd on U-Net (simrd_results.json)") {
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const ExperimentSpec spec = read_spec(kFixtures + "tiny_dtr.toml");
  run_experiment(spec, db, jobs(2));
  const std::vector<StoredExperimentRow> rows = db.experiment_rows("tiny_dtr");
  REQUIRE(rows.size() == 4);
  // simrd, U-Net (6), DTR at 0.5: budget 4207882320, ok, overhead 1.1587467656209238, clock 504377313.
  const StoredExperimentRow& dtr = row_where(rows, {{"budget_ratio", 0.5}}, "dtr");
  CHECK(dtr.row.feasible);
  CHECK(dtr.row.metric("budget_bytes") == 4207882320.0);
  CHECK(dtr.row.metric("clock_ns") == 504377313.0);
  CHECK(*dtr.row.metric("overhead") == doctest::Approx(1.1587467656209238).epsilon(1e-12));
  CHECK(dtr.run.run.model == "unet");
  CHECK(dtr.run.run.notes == "ok");
  // LRU at 0.5: remat_limit_exceeded (no overhead); at 1.0: ok, overhead 1.0082936067944321.
  const StoredExperimentRow& lru = row_where(rows, {{"budget_ratio", 0.5}}, "lru");
  CHECK_FALSE(lru.row.feasible);
  CHECK_FALSE(lru.row.metric("overhead").has_value());
  CHECK(lru.run.run.notes == "remat_limit_exceeded");
  CHECK(*row_where(rows, {{"budget_ratio", 1.0}}, "lru").row.metric("overhead") ==
        doctest::Approx(1.0082936067944321).epsilon(1e-12));
}

TEST_CASE("a configuration that fails stops the run, names itself, and leaves the rows written before") {
  TempDir dir("experiments");
  {
    std::ofstream bad(dir / "bad.log");
    bad << "this is not a DTR log\n";
  }
  const std::string unet =
      std::string(MUTWO_TEST_FIXTURES) + "/dtr/unet-6-8000000000.0-2020-10-1-10-57-18-default.log.gz";
  const ExperimentSpec spec =
      parse_spec("name = \"broken\"\ntitle = \"T\"\nkind = \"dtr\"\n[sweep]\nlogs = [\"" + unet +
                     "\", \"bad.log\"]\nheuristics = [\"dtr\"]\nbudget_ratios = [1.0]\n",
                 "broken.toml", dir.path());
  ResultsDb db = ResultsDb::open(dir / "r.db");
  CHECK_THROWS_WITH_AS(run_experiment(spec, db, jobs(1)),
                       doctest::Contains("experiment 'broken': configuration 'bad.log, dtr' failed: "),
                       Error);
  CHECK(db.runs().size() == 1);  // U-Net's row, written before the bad log was reached
}

TEST_CASE("CSV cells with commas, quotes or newlines are quoted, quotes doubled") {
  CsvTable t;
  t.header = {"partition", "note"};
  t.rows = {{"bert-base:4+4, vit-b16:2", "say \"hi\""}, {"a", "two\nlines"}, {"", " edge"}};
  CHECK(csv_text(t) ==
        "partition,note\n\"bert-base:4+4, vit-b16:2\",\"say \"\"hi\"\"\"\na,\"two\nlines\"\n,\" edge\"\n");
}

TEST_CASE("a measured sweep runs one configuration at a time whatever --jobs says; simulations do not") {
  const ExperimentSpec measured =
      read_spec(std::string(MUTWO_TEST_FIXTURES) + "/experiments/tiny_measured.toml");
  CHECK(builtin_experiment_kinds().find("measured").runs_one_at_a_time(measured));
  const ExperimentSpec throughput = read_spec("mutwo_throughput");
  CHECK_FALSE(builtin_experiment_kinds().find("strategies").runs_one_at_a_time(throughput));
}

TEST_CASE("a spec's model may be a user's exported model, a file relative to the spec's folder") {
  // tests/fixtures/exported/tiny_resnet.json (scripts/export_model.py, batch 4): named from a spec in
  // tests/fixtures/, it resolves there whatever the working directory; its batch is the exported one.
  const std::string text =
      "name = \"user_model\"\ntitle = \"T\"\nkind = \"strategies\"\nfigures = [\"breakdown\"]\n[sweep]\n"
      "models = [{ name = \"exported/tiny_resnet.json\" }]\nmodel_counts = [2]\ngpus = [\"a100-40gb\"]\n"
      "strategies = [\"hfta\", \"sequential\"]\n";
  const ExperimentSpec spec = parse_spec(text, "user_model.toml", MUTWO_TEST_FIXTURES);
  REQUIRE(spec.sweep.models.size() == 1);
  CHECK(
      spec.sweep.models[0].name ==
      (std::filesystem::path(MUTWO_TEST_FIXTURES) / "exported/tiny_resnet.json").lexically_normal().string());
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const RunnerReport report = run_experiment(spec, db, jobs(1));
  CHECK(report.progress.rows_written == 2);
  const std::vector<StoredExperimentRow> rows = db.experiment_rows("user_model");
  REQUIRE(rows.size() == 2);
  for (const StoredExperimentRow& r : rows) {
    CHECK(r.row.feasible);
    CHECK(nlohmann::json::parse(r.row.config_json).at("batch_size") == 4);
  }
  // A zoo name is left as it is.
  CHECK(spec_text(strategies_spec()).sweep.models[0].name == "bert-mini");
}

TEST_CASE("a spec's GPU may be a device file relative to the spec's folder, each GPU once") {
  // The L4's own file under another name: read from the spec's folder whatever the working
  // directory, its "device" limit the file's memory, its rows those of the catalog L4.
  TempDir dir("experiments");
  std::string l4 =
      support::read_text_file(std::string(MUTWO_TEST_FIXTURES) + "/../../costmodel/devices/l4.toml");
  l4.replace(l4.find("name = \"l4\""), 11, "name = \"my-l4\"");
  std::ofstream(dir / "my-l4.toml") << l4;
  auto spec_for = [&](const std::string& gpus) {
    return parse_spec(
        "name = \"gpu_file\"\ntitle = \"T\"\nkind = \"strategies\"\n[sweep]\n"
        "models = [{ name = \"bert-mini\", batch_sizes = [4] }]\nmodel_counts = [2]\ngpus = [" +
            gpus + "]\nstrategies = [\"hfta\", \"sequential\"]\n",
        "gpu_file.toml", dir.path());
  };
  const ExperimentSpec spec = spec_for("\"l4\", \"my-l4.toml\"");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  CHECK(run_experiment(spec, db, jobs(1)).progress.rows_written == 4);
  std::map<std::string, std::vector<double>> step_ns_by_gpu;
  for (const StoredExperimentRow& r : db.experiment_rows("gpu_file")) {
    const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
    CHECK(c.at("memory_limit_bytes") == int64_t{24} << 30);  // the L4's 24 GB (GiB in the catalog)
    step_ns_by_gpu[c.at("gpu")].push_back(r.row.metric("step_time_ns").value());
  }
  REQUIRE(step_ns_by_gpu.size() == 2);
  CHECK(step_ns_by_gpu.at("my-l4.toml") == step_ns_by_gpu.at("l4"));
  // One GPU by two names ran every configuration twice; a file that is not a device names itself.
  CHECK_THROWS_WITH_AS(validate_experiment(spec_for("\"my-l4.toml\", \"./my-l4.toml\"")),
                       "gpu_file.toml: 'sweep.gpus' = './my-l4.toml' is the GPU 'my-l4', given already as "
                       "'my-l4.toml'; give each GPU once",
                       Error);
  std::ofstream(dir / "bad.toml") << "name = 5\n";
  CHECK_THROWS_WITH_AS(validate_experiment(spec_for("\"bad.toml\"")),
                       doctest::Contains("gpu_file.toml: 'sweep.gpus' = 'bad.toml': "), FormatError);
}

TEST_CASE("an edited device file, model file or trace is a new configuration; catalog rows keep theirs") {
  // Each was keyed by its path: after an edit the rows stayed "already stored", priced by the old
  // file (an edited DTR log or length histogram was a new configuration already).
  TempDir dir("experiments");
  const std::string fixtures(MUTWO_TEST_FIXTURES);
  std::string l4 = support::read_text_file(fixtures + "/../../costmodel/devices/l4.toml");
  l4.replace(l4.find("name = \"l4\""), 11, "name = \"my-l4\"");
  std::ofstream(dir / "my-l4.toml") << l4;
  std::filesystem::copy_file(fixtures + "/exported/tiny_resnet.json", dir / "m.json");
  std::filesystem::copy_file(fixtures + "/traces/tiny_relu_measured.json", dir / "t.json");
  auto spec_for = [&](const std::string& model, const std::string& gpus, const std::string& rest) {
    return parse_spec(
        "name = \"edited\"\ntitle = \"T\"\nkind = \"strategies\"\n[sweep]\nmodels = [{ name = \"" + model +
            "\", batch_sizes = [4] }]\nmodel_counts = [2]\ngpus = [" + gpus +
            "]\nstrategies = [\"sequential\"]\n" + rest,
        "edited.toml", dir.path());
  };
  const ExperimentSpec by_gpu = spec_for("bert-mini", "\"l4\", \"my-l4.toml\"", "");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  CHECK(run_experiment(by_gpu, db, jobs(1)).progress.rows_written == 2);
  CHECK(plan_experiment(by_gpu, &db, {}).rows_stored == 2);
  const auto hashes = [](const ExperimentSpec& spec) {
    std::vector<std::string> out;
    for (const Task& t : plan_experiment(spec, nullptr, {}).tasks) {
      for (const nlohmann::json& c : t.configs) out.push_back(config_hash(c));
    }
    return out;
  };
  const std::vector<std::string> gpu_before = hashes(by_gpu);
  std::ofstream(dir / "my-l4.toml", std::ios::app) << "# edited\n";
  const std::vector<std::string> gpu_after = hashes(by_gpu);
  REQUIRE(gpu_after.size() == 2);
  CHECK(gpu_after[0] == gpu_before[0]);  // the catalog's L4
  CHECK(gpu_after[1] != gpu_before[1]);
  CHECK(plan_experiment(by_gpu, &db, {}).rows_stored == 1);  // the edited file's row runs again

  const ExperimentSpec by_model = spec_for("m.json", "\"a100-40gb\"", "");
  const std::vector<std::string> model_before = hashes(by_model);
  std::ofstream(dir / "m.json", std::ios::app) << "\n";
  CHECK(hashes(by_model) != model_before);

  const ExperimentSpec by_trace =
      spec_for("bert-mini", "\"a100-40gb\"", "cost_source = \"measured\"\ntraces = [\"t.json\"]\n");
  const std::vector<std::string> trace_before = hashes(by_trace);
  std::ofstream(dir / "t.json", std::ios::app) << "\n";
  CHECK(hashes(by_trace) != trace_before);
}

TEST_CASE("a model or GPU no configuration can build is refused before the database is made") {
  // Each failed at its first configuration, after the database was made and, in a long sweep, hours in.
  auto spec_for = [](const std::string& model, const std::string& rest) {
    return parse_spec("name = \"unbuildable\"\ntitle = \"T\"\nkind = \"strategies\"\n[sweep]\nmodels = [" +
                          model + "]\nmodel_counts = [2]\nstrategies = [\"sequential\"]\n" + rest,
                      "unbuildable.toml", ".");
  };
  const std::string mini = "{ name = \"bert-mini\", batch_sizes = [4] }";
  CHECK_THROWS_WITH_AS(
      validate_experiment(spec_for(mini + ", { name = \"bert-base\", batch_sizes = [8], "
                                          "seq_len = 100000 }",
                                   "gpus = [\"a100-40gb\"]\n")),
      "unbuildable.toml: 'sweep.models' = 'bert-base' at batch 8: model 'bert-base': sequence "
      "length 100000 exceeds max_position_embeddings 512",
      Error);
  CHECK_THROWS_WITH_AS(
      validate_experiment(spec_for(mini, "gpus = [\"t4\", \"a100-40gb\"]\ncost_source = \"calibrated\"\n")),
      doctest::Contains(
          "unbuildable.toml: 'sweep.gpus' = 'a100-40gb': cost source 'calibrated': no calibration "
          "profile for device 'a100-40gb'"),
      Error);
  CHECK_NOTHROW(validate_experiment(spec_for(mini, "gpus = [\"t4\"]\ncost_source = \"calibrated\"\n")));
}

TEST_CASE("a count with more partitions than a search plans is refused by the kinds that search") {
  // 46 models have p(46) = 105,558 sub-array partitions, past policies::kMaxSearchPartitions; p(45) =
  // 89,134 is not. The search refused it at the first such configuration, after the database was made.
  auto spec_for = [](const std::string& kind, int count) {
    return parse_spec("name = \"wide\"\ntitle = \"T\"\nkind = \"" + kind +
                          "\"\n[sweep]\nmodels = [{ name = \"bert-mini\", batch_sizes = [4] }]\n"
                          "model_counts = [2, " +
                          std::to_string(count) + "]\ngpus = [\"a100-40gb\"]\n" +
                          (kind == "strategies" ? "strategies = [\"sequential\"]\n" : ""),
                      "wide.toml", ".");
  };
  for (const std::string kind : {"strategies", "max_models"}) {
    CAPTURE(kind);
    CHECK_THROWS_WITH_AS(validate_experiment(spec_for(kind, 46)),
                         ("wide.toml: 'sweep.model_counts' = 46: kind '" + kind +
                          "' searches each array's sub-array partitions, and 46 models have more than the "
                          "100000 a search plans; a count of at most 45 is searched whole")
                             .c_str(),
                         Error);
    CHECK_NOTHROW(validate_experiment(spec_for(kind, 45)));
  }
}

TEST_CASE("lean_ops in CI size: Tempo's layers fit larger batches; swap and recompute fit larger still") {
  // The shipped lean_ops spec's shape on bert-mini under a 1.7 MiB limit: per lean option, the
  // largest batch sequential (the plain step) fits, and mutwo's (its swaps and recomputation).
  const ExperimentSpec spec = spec_text(
      "name = \"lean_ci\"\ntitle = \"T\"\nkind = \"strategies\"\nfigures = "
      "[\"throughput_vs_batch\"]\n[sweep]\n"
      "models = [{ name = \"bert-mini\", batch_sizes = [8, 16, 24, 32, 48, 64, 96, 128] }]\nmodel_counts = "
      "[1]\n"
      "gpus = [\"a100-40gb\"]\nmemory_limits = [\"1.7MiB\"]\nstrategies = [\"sequential\", \"mutwo\"]\n"
      "lean_ops = [\"none\", \"tempo\"]\n");
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const RunnerReport report = run_experiment(spec, db, jobs(2));
  CHECK(report.progress.rows_written == 8 * 2 * 2);
  std::map<std::pair<std::string, std::string>, int64_t> largest;
  for (const StoredExperimentRow& r : db.experiment_rows("lean_ci")) {
    const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
    const std::string lean = c.value("lean_ops", "none");
    if (!r.row.feasible) continue;
    int64_t& top = largest[{r.row.series, lean}];
    top = std::max<int64_t>(top, c.at("batch_size").get<int64_t>());
  }
  // Plainly 24 (1.63 MiB at batch 24, 2.00 at 32), with Tempo's layers 32 (1.63 MiB); the search's
  // swaps and recomputation reach 96 with or without them (the largest it tried that fits: 128 does not).
  CHECK(largest[{"sequential", "none"}] == 24);
  CHECK(largest[{"sequential", "tempo"}] == 32);
  CHECK(largest[{"mutwo", "none"}] == 96);
  CHECK(largest[{"mutwo", "tempo"}] == 96);
  // The CSV says which rows are lean (none where the configuration stores no lean_ops).
  const CsvTable table = experiment_table(spec, db);
  const auto column = std::find(table.header.begin(), table.header.end(), "lean_ops");
  REQUIRE(column != table.header.end());
  std::set<std::string> values;
  for (const auto& row : table.rows) values.insert(row[static_cast<size_t>(column - table.header.begin())]);
  CHECK(values == std::set<std::string>{"none", "tempo"});
}

TEST_CASE(
    "harmony (the shipped spec, whole): simulated volumes equal the table; Harmony beats per-GPU swapping") {
  const ExperimentSpec spec = read_spec("harmony");
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const RunnerReport report = run_experiment(spec, db, jobs(2));
  // 2 models x 7 schemes x N in {2, 4} x M in {1, 4}.
  CHECK(report.progress.rows_written == 2 * 7 * 2 * 2);
  const CsvTable table = experiment_table(spec, db);
  const auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(table.header.begin(), table.header.end(), name) -
                               table.header.begin());
  };
  for (const auto& row : table.rows) CHECK(row[col("expected_match")] == "yes");
  const auto rows = db.experiment_rows("harmony");
  for (const char* model : {"bert-large", "gpt2-xl"}) {
    for (const int n : {2, 4}) {
      for (const int m : {1, 4}) {
        CAPTURE(model);
        CAPTURE(n);
        CAPTURE(m);
        const nlohmann::json where = {{"model", model}, {"gpus", n}, {"micro_batches", m}};
        auto rate = [&](const char* s) {
          return row_where(rows, where, s).row.metric("samples_per_s").value_or(0);
        };
        CHECK(row_where(rows, where, "harmony-dp").row.feasible);
        CHECK(row_where(rows, where, "harmony-pp").row.feasible);
        CHECK(rate("harmony-dp") > rate("dp-swap"));
        CHECK(rate("harmony-pp") > rate("pp-swap"));
        CHECK(rate("harmony-dp-p2p") > rate("harmony-dp"));
      }
    }
  }
  // GPT-2 XL's state (1.56B parameters x 16 bytes with Adam, 25 GB) does not fit one 11 GB GPU
  // replicated: plain data parallelism is out, per-GPU swapping and Harmony's schemes are not.
  CHECK_FALSE(row_where(rows, {{"model", "gpt2-xl"}, {"gpus", 4}, {"micro_batches", 1}}, "dp").row.feasible);
}

TEST_CASE("every kind counts its sweep without expanding it: the count is the rows it expands to") {
  for (const char* name :
       {"tiny_strategies", "tiny_policies", "tiny_dtr", "tiny_max_models", "tiny_measured"}) {
    CAPTURE(name);
    const ExperimentSpec spec = read_spec(kFixtures + name + ".toml");
    const int64_t rows = plan_experiment(spec, nullptr, {}).rows;
    CHECK(rows > 0);
    CHECK(sweep_size(spec) == rows);
  }
  // A measured spec without a sweep runs nothing and counts nothing.
  CHECK(sweep_size(read_spec("predicted_vs_measured")) == 0);
  // server_schemes: 1024 packs x every scheme x 1024 micro-batches is over the limit.
  std::string counts;
  for (int i = 1; i <= 1024; ++i) counts += (i == 1 ? "" : ", ") + std::to_string(i);
  const ExperimentSpec wide = parse_spec(
      "name = \"wide\"\ntitle = \"T\"\nkind = \"server_schemes\"\n[sweep]\nmodels = [{ name = \"bert-mini\" "
      "}]\n"
      "servers = [\"dgx-a100\"]\ngpu_counts = [1]\nmicro_batches = [" +
          counts + "]\npacks = [" + counts + "]\n",
      "wide.toml", ".");
  const std::optional<int64_t> size = sweep_size(wide);
  REQUIRE(size);
  CHECK(*size > kMaxSweepConfigurations);
  CHECK_THROWS_WITH_AS(
      validate_experiment(wide),
      doctest::Contains(
          ("wide.toml: sweep has " + std::to_string(*size) + " configurations (1024 packs x ").c_str()),
      Error);
}

TEST_CASE("two server_schemes specs of one sweep each run their own rows in one database") {
  // Their configurations named no experiment: the second found the first's rows "already stored",
  // ran nothing and wrote an empty table.
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  for (const std::string name : {"ss_one", "ss_two"}) {
    const ExperimentSpec spec = parse_spec(
        "name = \"" + name +
            "\"\ntitle = \"T\"\nkind = \"server_schemes\"\n[sweep]\nmodels = [{ name = \"bert-mini\", "
            "batch_sizes = [4] }]\nservers = [\"4x-gtx1080ti\"]\nschemes = [\"dp\"]\ngpu_counts = [2]\n"
            "micro_batches = [1]\npacks = [2]\n",
        name + ".toml", ".");
    CAPTURE(name);
    CHECK(run_experiment(spec, db, jobs(1)).progress.rows_written == 1);
    CHECK(experiment_table(spec, db).rows.size() == 1);
  }
}

TEST_CASE("a measured sweep's device is checked before the database is made") {
  const std::string text =
      support::read_text_file(std::string(MUTWO_TEST_FIXTURES) + "/experiments/tiny_measured.toml");
  for (const auto& [device, message] : std::vector<std::pair<std::string, std::string>>{
           {"gpu", "'sweep.device' = 'gpu': unknown device 'gpu'; valid: cpu, cuda, cuda:N"},
           {"cuda:-1",
            "'sweep.device' = 'cuda:-1': device 'cuda:-1': expected cuda:N with N a device index"}}) {
    std::string edited = text;
    edited.replace(edited.find("device = \"cpu\""), 14, "device = \"" + device + "\"");
    const ExperimentSpec spec = parse_spec(edited, "m.toml", ".");
    CHECK_THROWS_WITH_AS(validate_experiment(spec), ("m.toml: " + message).c_str(), Error);
  }
}

TEST_CASE("a spec whose name the database holds under another kind is refused before it runs") {
  // A dtr experiment and then a policies one named alike both ran; the table held both kinds' rows.
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  ExperimentSpec first = read_spec(std::string(MUTWO_TEST_FIXTURES) + "/experiments/tiny_strategies.toml");
  first.name = "same";
  run_experiment(first, db, jobs(2));
  ExperimentSpec second = read_spec(std::string(MUTWO_TEST_FIXTURES) + "/experiments/tiny_policies.toml");
  second.name = "same";
  CHECK_THROWS_WITH_AS(run_experiment(second, db, jobs(1)),
                       doctest::Contains("experiment 'same' is of kind 'strategies' in "), Error);
  CHECK_THROWS_WITH_AS(plan_experiment(second, &db, {}),
                       doctest::Contains("and this spec's kind is 'policies': give the spec another name, or "
                                         "use another database"),
                       Error);
  CHECK(db.experiment("same")->kind == "strategies");
}

TEST_CASE("settings a sweep's model cannot take or build are refused when the spec is checked") {
  // Each went unread (a sequence length on a CNN) or failed at its configuration, after the database was
  // made and earlier configurations had run.
  const auto refusal = [](const std::string& text) {
    try {
      validate_experiment(parse_spec(text, "s.toml", "."));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refusal(
            "name = \"p\"\ntitle = \"T\"\nkind = \"policies\"\n[sweep]\nmodels = [{ name = \"resnet-mini\", "
            "seq_len = 128 }]\nmodel_counts = [1]\ngpus = [\"a100-40gb\"]\npolicies = [\"none\"]\n"
            "memory_fractions = [1.0]\n") ==
        "s.toml: 'sweep.models' = 'resnet-mini': seq_len = 128, but the model takes no sequence length");
  CHECK(
      refusal("name = \"ss\"\ntitle = \"T\"\nkind = \"server_schemes\"\n[sweep]\nmodels = [{ name = "
              "\"bert-mini\", batch_sizes = [4], seq_len = 4096 }]\nservers = [\"4x-gtx1080ti\"]\nschemes = "
              "[\"dp\"]\ngpu_counts = [2]\nmicro_batches = [1]\npacks = [2]\n") ==
      "s.toml: 'sweep.models' = 'bert-mini' at batch 4: model 'bert-mini': sequence length 4096 exceeds "
      "max_position_embeddings 16");
  const std::string dtr = "name = \"d\"\ntitle = \"T\"\nkind = \"dtr\"\n[sweep]\nlogs = [\"x.log\"]\n";
  CHECK(refusal(dtr + "overhead_limit = 101\n")
            .find("'sweep.overhead_limit' = 101 must be > 1 and at most 100") != std::string::npos);
  CHECK(refusal(dtr + "budget_ratios = [0.5, 1e9]\n").find("'sweep.budget_ratios'") != std::string::npos);
}

"""`import mutwo` against the `mutwo` program: each function returns what the matching command's
--json prints for the same inputs, and mutwo's errors arrive as mutwo.Error subclasses with
mutwo's message."""
import pathlib

import pytest

import mutwo


def test_models_are_the_zoo_with_published_parameter_counts(cli_json):
    rows = mutwo.models()
    assert rows == cli_json("models")
    by_name = {r["name"]: r for r in rows}
    assert by_name["resnet50"]["parameters"] == 25_557_032  # torchvision's count
    # BERT-Base with its pre-training heads: 109,482,240 + MLM 624,188 (tests/test_models_transformer.cpp)
    assert by_name["bert-base"]["parameters"] == 110_106_428
    assert mutwo.models(mini=True) == cli_json("models", "--mini")


def test_devices_and_a_device_file(fixtures, tmp_path):
    names = [d["name"] for d in mutwo.devices()]
    assert "a100-40gb" in names and "h100-sxm-80gb" in names
    a100 = mutwo.device("a100-40gb")
    assert a100["memory_gbps"] == 1555 and a100["sm_count"] == 108 and a100["fp32_tflops"] == 19.5
    with pytest.raises(mutwo.UnknownNameError, match="unknown device 'a200'; valid: a10, "):
        mutwo.device("a200")
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nsm_count = -1\n')
    with pytest.raises(mutwo.FormatError, match="bad.toml"):
        mutwo.device(str(bad))


def test_simulate_equals_the_command_line(cli_json):
    p = mutwo.simulate("resnet18", models=4, partition=[2, 2], batch=8, gpu="h100-sxm-80gb")
    cli = cli_json("simulate", "--model", "resnet18", "--models", 4, "--partition", "2,2", "--batch", 8, "--gpu",
                   "h100-sxm-80gb")
    assert dict(p) == cli
    assert p.step_time_ns == cli["prediction"]["step_time_ns"] and p.peak_bytes == cli["prediction"]["peak_bytes"]
    assert [s["width"] for s in p.schedule["sub_arrays"]] == [2, 2]


def test_simulate_a_plan_under_a_memory_limit_equals_the_command_line(cli_json):
    p = mutwo.simulate("bert-mini", models=4, memory="4MiB", policy="capuchin", host_mode="none", cost_source="analytic")
    cli = cli_json("simulate", "--model", "bert-mini", "--models", 4, "--memory", "4MiB", "--policy", "capuchin",
                   "--host-mode", "none", "--cost-source", "analytic")
    assert dict(p) == cli
    assert p.peak_bytes <= 4 * 2**20 and not p.oom


def test_simulate_padded_lengths_equals_the_command_line(fixtures, cli_json):
    lengths = str(fixtures / "published" / "tiny_lengths.csv")
    p = mutwo.simulate("bert-mini", batch=2, seq_len=16, length_histogram=lengths, length_bin_tokens=8,
                       length_align_tokens=4, cost_source="analytic", host_mode="none")
    cli = cli_json("simulate", "--model", "bert-mini", "--batch", 2, "--seq-len", 16, "--length-histogram", lengths,
                   "--length-bin-tokens", 8, "--length-align-tokens", 4, "--cost-source", "analytic", "--host-mode",
                   "none")
    assert dict(p) == cli
    # tiny_lengths.csv in bins of 8, aligned to 4, batches of 2: 4, 8, 12 and 16 tokens (tests/test_padded_lengths.cpp)
    steps = p["padded_lengths"]["steps"]
    assert [s["tokens"] for s in steps] == [4, 8, 12, 16]
    assert [s["batch_share"] for s in steps] == pytest.approx([1 / 16, 3 / 16, 1 / 12, 2 / 3])
    # The report is the longest batch's step (the GPU alone: longer sequences, longer steps); the mean
    # weighs each length's step by its share.
    assert p.step_time_ns == steps[-1]["step_time_ns"] and steps[0]["step_time_ns"] < steps[-1]["step_time_ns"]
    mean = sum(s["batch_share"] * s["step_time_ns"] for s in steps)
    assert p["padded_lengths"]["mean_step_ns"] == pytest.approx(mean)
    assert p["padded_lengths"]["throughput_samples_per_s"] == pytest.approx(2e9 / mean)
    with pytest.raises(mutwo.Error, match="model 'resnet18' takes no sequence length"):
        mutwo.simulate("resnet18", length_histogram=lengths)


def test_simulate_a_trace_equals_the_command_line(fixtures, cli_json):
    unet = fixtures / "dtr" / "unet-6-8000000000.0-2020-10-1-10-57-18-default.log.gz"
    with pytest.warns(UserWarning, match="46 view outputs share their base's storage"):
        p = mutwo.simulate(trace=unet)
    assert dict(p) == cli_json("simulate", "--trace", unet)
    # DTR's U-Net step at its logged durations: the sum of its TIMEs.
    assert p.step_time_ns == 435_278_292 and p.cost_source == "measured"
    # An execution trace and the profiler trace of its step, priced analytically on an H100.
    et, profile = (fixtures / "execution_trace" / f"resnet18_{part}.json.gz" for part in ("et", "profile"))
    p = mutwo.simulate(trace=[et, profile], gpu="h100-sxm-80gb", cost_source="analytic")
    assert dict(p) == cli_json("simulate", "--trace", et, "--trace", profile, "--gpu", "h100-sxm-80gb",
                               "--cost-source", "analytic")
    assert p["device"]["name"] == "h100-sxm-80gb" and len(p.timeline()["traceEvents"]) > 0
    with pytest.raises(mutwo.Error, match="not a trace mutwo reads"):
        mutwo.simulate(trace=fixtures / "dtr" / "README.md")
    with pytest.raises(mutwo.Error, match="a model or a trace, not both"):
        mutwo.simulate("resnet18", trace=unet)


def test_timeline_is_a_chrome_trace_of_the_same_step():
    p = mutwo.simulate("bert-mini", models=2)
    events = p.timeline()["traceEvents"]
    assert events and all("ph" in e for e in events)
    assert "timeline" in p  # computed once


def test_search_rows_equal_the_command_line_and_progress_is_reported(cli_json):
    seen = []
    rows = mutwo.search("bert-mini:4", memory="8MiB", top=3, progress=lambda v, n: seen.append((v, n)))
    cli = cli_json("search", "--model", "bert-mini:4", "--memory", "8MiB", "--top", 3)
    assert rows == cli["rows"] and rows.report == cli
    # The policies' plans on one thread or three: the same rows.
    assert mutwo.search("bert-mini:4", memory="8MiB", top=3, jobs=1).report == cli
    assert cli_json("search", "--model", "bert-mini:4", "--memory", "8MiB", "--top", 3, "--jobs", 3) == cli
    assert seen and seen[0][0] == 0 and all(n == seen[0][1] for _, n in seen)
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(rows)
    assert list(frame["strategy"])[:1] == [cli["rows"][0]["strategy"]]


def test_server_search_equals_the_command_line(cli_json):
    assert [s["name"] for s in mutwo.servers()] == ["4x-gtx1080ti", "8x-a100-pcie", "dgx-a100", "8x-h100-sxm"]
    assert mutwo.servers()[0]["gpu"] == "gtx1080ti" and mutwo.servers()[0]["gpu_count"] == 4
    # An array spread over the GPUs: two models per GTX 1080 Ti.
    rows = mutwo.search("bert-mini:8", server="4x-gtx1080ti", memory="1GiB")
    assert rows.report == cli_json("search", "--model", "bert-mini:8", "--server", "4x-gtx1080ti", "--memory", "1GiB")
    assert rows[0]["placement"] == "4 GPUs: bert-mini:2 | bert-mini:2 | bert-mini:2 | bert-mini:2"
    # One model: data- and pipeline-parallel schemes over micro-batch and pack counts.
    rows = mutwo.search("bert-mini", server="4x-gtx1080ti", batch=32, schemes=["dp", "pp"], micro_batches=[2, 4])
    assert rows.report == cli_json("search", "--model", "bert-mini", "--server", "4x-gtx1080ti", "--batch", 32,
                                   "--schemes", "dp,pp", "--micro-batches", "2,4")
    assert {r["strategy"] for r in rows} == {"dp", "pp"} and {r["micro_batches"] for r in rows} <= {2, 4}
    with pytest.raises(mutwo.Error, match="h100-sxm-80gb conflicts with --server dgx-a100, whose GPUs are a100-40gb"):
        mutwo.search("bert-mini:8", server="dgx-a100", gpu="h100-sxm-80gb")
    with pytest.raises(mutwo.UnknownNameError, match="unknown server 'dgx-z'"):
        mutwo.search("bert-mini:8", server="dgx-z")


def test_a_progress_callback_that_raises_stops_the_search():
    def stop(visited, partitions):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        mutwo.search("bert-mini:4", progress=stop)


def test_a_limit_no_plan_meets_raises_limit_error():
    with pytest.raises(mutwo.LimitError, match="no plan fits in 1024 bytes; the smallest limit any plan met is"):
        mutwo.search("bert-mini:2", memory=1024)
    rows = mutwo.search("bert-mini:2", memory=1024, strict=False)
    assert rows and not any(r["feasible"] for r in rows)


def test_replay_equals_the_command_line(fixtures, cli_json):
    trace = fixtures / "kineto" / "a100_event_sync.json.gz"
    r = mutwo.replay(trace, what_if_gpus=["h100-sxm-80gb"])
    assert r == cli_json("replay-trace", trace, "--what-if-gpu", "h100-sxm-80gb")
    assert r["replay"]["replayed_step_ns"] == r["replay"]["profiled_step_ns"] == 3_154_000


def test_results_equal_compare(results_db, cli_json):
    r = mutwo.results(results_db)
    assert r == cli_json("compare", "--db", results_db)
    assert r["summary"]["step_time"]["median_abs_rel_error"] == 0.25
    assert mutwo.results(results_db, run_ids=[2, 5])["summary"]["compared"] == 2


def test_run_executes_on_the_cpu_beside_the_commands_prediction(cli_json, tmp_path):
    db = tmp_path / "runs.db"
    r = mutwo.run("resnet-mini", models=2, iterations=2, warmup=1, db=db)
    cli = cli_json("run", "--model", "resnet-mini", "--models", 2, "--iters", 2, "--warmup", 1, "--no-db")
    assert r["prediction"] == cli["prediction"] and r["schedule"] == cli["schedule"]
    m = r["measurement"]
    # The same seeds: the same two models train to the same losses; the accounted peak is the simulated one.
    assert m["first_losses"] == cli["measurement"]["first_losses"] and m["losses"] == cli["measurement"]["losses"]
    assert m["peak_bytes"] == r["prediction"]["peak_bytes"] == 1_699_840
    assert len(m["step_times_ns"]) == 2 and m["peak_source"] == "accounted"
    assert r["run_id"] == 1 and r["database"] == str(db)
    row = mutwo.results(db)["rows"][0]
    assert row["predicted_step_ns"] == r["prediction"]["step_time_ns"]
    assert row["measured_step_ns"] == m["step_time_ns"]


def test_profile_writes_a_measured_trace_that_simulate_and_search_replay(cli_json, tmp_path):
    trace = tmp_path / "mini.measured.json"
    p = mutwo.profile("resnet-mini", trace, models=2, iterations=2, warmup=1, top=3)
    cli = cli_json("profile", "--model", "resnet-mini", "--models", 2, "--iters", 2, "--warmup", 1, "--top", 3,
                   "-o", tmp_path / "cli.measured.json")
    # The same step and fields; the times are this machine's, measured twice.
    assert p.keys() == cli.keys() and p["graph"] == cli["graph"] == "resnet-mini x2" and p["ops"] == cli["ops"]
    assert p["device"] == "cpu" and len(p["top"]) == 3 and p["trace"] == str(trace)
    assert p["sum_op_ns"] == p["forward_ns"] + p["backward_ns"] + p["optimizer_ns"] > 0
    # Priced by its own op times: the simulated step of the same array equals the command's replay.
    sim = mutwo.simulate("resnet-mini", models=2, cost_source="measured", traces=[trace])
    assert dict(sim) == cli_json("simulate", "--model", "resnet-mini", "--models", 2, "--cost-source", "measured",
                                 "--trace", trace)
    # A CPU profile names no catalog GPU, so the default one is simulated with the CPU's op times.
    assert sim["cost_source"] == "measured" and sim["device"]["name"] == "a100-40gb"
    rows = mutwo.search("resnet-mini:2", cost_source="measured", traces=[trace], gpu="a100-40gb")
    assert rows.report == cli_json("search", "--model", "resnet-mini:2", "--cost-source", "measured", "--trace",
                                   trace, "--gpu", "a100-40gb")
    with pytest.raises(mutwo.Error, match="needs at least one measured trace"):
        mutwo.simulate("resnet-mini", cost_source="measured")


def test_a_run_whose_policy_finds_no_plan_raises_limit_error(tmp_path):
    with pytest.raises(mutwo.LimitError, match="checkpoint"):
        mutwo.run("resnet-mini", models=2, policy="checkpoint", memory="1MiB", iterations=1, warmup=0,
                  db=tmp_path / "runs.db")
    assert not (tmp_path / "runs.db").exists()  # nothing half-written


def test_trace_gives_the_step_graph():
    g = mutwo.trace("resnet18", models=2, batch=4)
    assert g.name == "resnet18 x2" and g.width == 2
    assert g.parameters == 2 * 11_689_512  # torchvision's resnet18, twice
    kinds = {op["kind"] for op in g.ops()}
    assert {"conv2d", "conv2d_backward", "cross_entropy_backward", "adam_step"} <= kinds
    assert '"format": "mutwo-trace"' in g.to_json()
    # simulate(graph) is the step of its model and copies, fused in one sub-array.
    assert dict(mutwo.simulate(g)) == dict(mutwo.simulate("resnet18", models=2, batch=4))


@pytest.mark.parametrize("call, error, message", [
    (lambda: mutwo.simulate("resnet19"), mutwo.UnknownNameError, "unknown model 'resnet19'; valid: bert-base"),
    (lambda: mutwo.simulate("resnet18", gpu="a200"), mutwo.UnknownNameError, "unknown device 'a200'"),
    (lambda: mutwo.simulate("resnet18", policy="nope", memory="1GiB"), mutwo.UnknownNameError, "unknown policy 'nope'"),
    (lambda: mutwo.simulate("resnet18", precision="fp8"), mutwo.UnknownNameError, "--precision 'fp8': unknown precision"),
    (lambda: mutwo.simulate("resnet18", memory="lots"), mutwo.Error, "lots"),
    (lambda: mutwo.search("bert-mini:0"), mutwo.Error, "count '0' must be a whole number from 1 to 1024"),
    (lambda: mutwo.replay("/nonexistent/trace.json"), mutwo.Error, "/nonexistent/trace.json"),
])
def test_errors_carry_mutwos_message(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace("'", "'")):
        call()


def test_a_malformed_trace_is_a_format_error(fixtures):
    with pytest.raises(mutwo.FormatError, match="README.md: invalid JSON at byte 1"):
        mutwo.replay(fixtures / "kineto" / "README.md")


def test_a_file_that_is_no_database_is_a_database_error(fixtures):
    with pytest.raises(mutwo.DatabaseError, match="not-a-database.txt"):
        mutwo.results(fixtures / "compare" / "not-a-database.txt")


def test_an_experiment_runs_into_a_database_resumes_and_gives_its_table(fixtures, tmp_path, cli_json):
    spec = fixtures / "experiments" / "tiny_policies.toml"  # 3 policies (tasks) x 3 memory fractions (rows)
    seen = []
    first = mutwo.experiment(spec, db=tmp_path / "a.db", progress=seen.append)
    assert first["tasks"] == 3 and first["tasks_run"] == 3 and first["rows_written"] == 9
    assert not first["interrupted"] and seen[-1]["tasks_done"] == 3
    assert len(first["table"]) == 9 and {"policy", "memory_fraction"} <= set(first["table"][0])
    again = mutwo.experiment(spec, db=tmp_path / "a.db")  # every configuration already stored
    assert again["tasks_skipped"] == 3 and again["tasks_run"] == 0 and again["table"] == first["table"]
    cli = cli_json("experiment", spec, "--db", tmp_path / "b.db", "--out", tmp_path)
    assert {k: cli[k] for k in ("tasks", "tasks_run", "rows_written")} == \
        {k: first[k] for k in ("tasks", "tasks_run", "rows_written")}


def test_a_refused_spec_creates_no_database(fixtures, tmp_path):
    # As `mutwo experiment`: the spec is checked before the database file is created.
    with pytest.raises(mutwo.Error, match="'sweep.memory_limits' = '0' is 0 bytes"):
        mutwo.experiment(fixtures / "experiments" / "zero_limit.toml", db=tmp_path / "z.db")
    assert not (tmp_path / "z.db").exists()


def test_a_progress_callback_that_raises_stops_the_experiment(fixtures, tmp_path):
    def stop(progress):
        if progress["tasks_done"] >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        mutwo.experiment(fixtures / "experiments" / "tiny_policies.toml", db=tmp_path / "c.db", jobs=1, progress=stop)
    resumed = mutwo.experiment(fixtures / "experiments" / "tiny_policies.toml", db=tmp_path / "c.db", jobs=1)
    assert resumed["tasks_skipped"] >= 1 and resumed["tasks_skipped"] + resumed["tasks_run"] == 3


def test_a_search_releases_the_gil():
    # A Python thread counts while the search runs in C++. With the GIL held it would get at most a
    # switch interval (5 ms) of the search; released, it counts at about the rate it has while the
    # main thread sleeps (which releases the GIL), measured here first.
    import threading
    import time

    counted, running = [0], [True]

    def count():
        while running[0]:
            counted[0] += 1

    thread = threading.Thread(target=count)
    thread.start()
    try:
        before, start = counted[0], time.perf_counter()
        time.sleep(0.2)
        rate = (counted[0] - before) / (time.perf_counter() - start)
        before, start = counted[0], time.perf_counter()
        mutwo.search("bert-mini:12", strict=False)
        seconds = time.perf_counter() - start
        during = counted[0] - before
    finally:
        running[0] = False
        thread.join()
    assert seconds > 0.05  # long enough to tell a 5 ms slice from the whole search
    assert during > 0.25 * rate * seconds


@pytest.mark.parametrize("args", [["simulate", "--model", "bert-mini", "--gpu", ""],
                                  ["simulate", "--model", "bert-mini", "--memory", ""],
                                  ["trace", "--model", "bert-mini", "-o", ""]])
def test_the_cli_refuses_an_empty_flag_value(args):
    # "" is also "not given": each of these used to run on the default device, memory or file name.
    import os
    import subprocess
    cli = os.environ.get("MUTWO_CLI", str(pathlib.Path(__file__).resolve().parents[2] / "build" / "cli" / "mutwo"))
    done = subprocess.run([cli, *args], capture_output=True, text=True)
    assert done.returncode == 2 and "must not be empty" in done.stderr


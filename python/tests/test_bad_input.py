"""Bad arguments from Python get an exception naming the argument and the value, where the command's
flags (cli/) refuse the same input: never a hang, a crash, a file named 'None', or the default taken
silently."""
import os
import signal
import threading
import time

import pytest

import mutwo


def test_a_number_or_a_flag_takes_its_defaults_type():
    # pybind11 took True as 1 (one model, batch 1) and None or 2 as a flag; numpy's ints and bools
    # still pass.
    import numpy
    for kwargs, message in [(dict(models=True), "models = True: give an int"),
                            (dict(models=numpy.bool_(True)), "models = True: give an int"),
                            (dict(batch=2.0), "batch = 2.0: give an int"),
                            (dict(wrap=None), "wrap = None: give True or False"),
                            (dict(state_offload=1), "state_offload = 1: give True or False")]:
        with pytest.raises(TypeError, match=message):
            mutwo.simulate("bert-mini", **kwargs)
    with pytest.raises(TypeError, match="kernel_speedup = True: give a number"):
        mutwo.replay("missing.json", kernel_speedup=True)
    with pytest.raises(TypeError, match="all_steps = 1: give True or False"):
        mutwo.replay("missing.json", all_steps=1)
    with pytest.raises(TypeError, match="jobs = False: give an int"):
        mutwo.experiment("mutwo_throughput", db="unused.db", jobs=False)
    assert mutwo.simulate("bert-mini", models=numpy.int64(2), wrap=numpy.bool_(False)).step_time_ns == \
        mutwo.simulate("bert-mini", models=2).step_time_ns


def test_a_memory_limit_is_bytes_or_a_size_not_a_bool_nor_past_64_bits():
    # True is an int to Python: it was a 1-byte limit. 2**70 failed as "Unable to cast Python instance".
    for memory in (True, 2**70, 1.5e9):
        with pytest.raises(mutwo.Error, match=f"memory = {memory!r}: "):
            mutwo.simulate("bert-mini", memory=memory)


@pytest.mark.parametrize("call", [lambda: mutwo.simulate("bert-mini", models=5000),
                                  lambda: mutwo.trace("bert-mini", models=5000),
                                  lambda: mutwo.run("bert-mini", models=1025, iterations=1, warmup=0)])
def test_an_array_holds_1_to_1024_models_as_on_the_command_line(call):
    # 5000 copies ran (run: 4 GB of tensors); 100000 hung building the graph.
    with pytest.raises(mutwo.Error, match=r"models = \d+: must be from 1 to 1024"):
        call()


@pytest.mark.parametrize("kwargs, message", [
    (dict(order="zz", policy="none"), "unknown sub-array order 'zz'"),
    (dict(optimizer_on="zz", state_offload=True), "unknown optimizer place 'zz'"),
    (dict(gpu=""), "gpu = '': give a value"),
    (dict(cost_source=""), "cost_source = '': give a value"),
    (dict(policy=""), "policy = '': give a value"),
])
def test_a_misspelt_or_empty_simulate_option_is_refused_not_ignored(kwargs, message):
    with pytest.raises(mutwo.Error, match=message):
        mutwo.simulate("bert-mini", **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(length_bin_tokens=2**63 - 1), "bin_tokens = 9223372036854775807; expected at most 1048576"),  # was SIGSEGV
    (dict(length_align_tokens=2**63 - 1), "align_tokens = 9223372036854775807; expected at most 1048576"),  # 0 tokens
])
def test_padded_lengths_refuse_bins_past_2_to_the_20_tokens(fixtures, kwargs, message):
    lengths = fixtures / "published" / "tiny_lengths.csv"
    with pytest.raises(mutwo.Error, match=message):
        mutwo.simulate("bert-mini", batch=2, seq_len=16, length_histogram=lengths, **kwargs)


def test_a_replayed_trace_refuses_model_array_settings_and_zero_iterations(fixtures):
    trace = fixtures / "traces" / "tiny_relu_measured.json"
    # Each was read by nobody: the trace is simulated as it ran.
    with pytest.raises(mutwo.Error, match="length_histogram = 'x' sets a model array"):
        mutwo.simulate(trace=trace, length_histogram="x")
    with pytest.raises(mutwo.Error, match="batch = 4 sets a model array"):
        mutwo.simulate(trace=trace, batch=4)
    with pytest.raises(mutwo.Error, match="iterations = 0: must be from 1 to 1000"):  # was one iteration
        mutwo.simulate(trace=trace, iterations=0)
    assert mutwo.simulate(trace=trace, iterations=2)["prediction"]["iterations"] == 2


def test_the_loader_settings_need_a_length_histogram():
    # length_bin_tokens=-5 without a histogram was read by nothing and accepted.
    with pytest.raises(mutwo.Error, match="length_bin_tokens = -5 is read only with a length_histogram"):
        mutwo.simulate("bert-mini", batch=2, length_bin_tokens=-5)
    with pytest.raises(mutwo.Error, match="length_align_tokens = 4 is read only with a length_histogram"):
        mutwo.simulate("bert-mini", batch=2, length_align_tokens=4)


@pytest.mark.parametrize("call, error, message", [
    (lambda: mutwo.search([]), mutwo.Error, r"models = \[\]: give at least one model"),  # searched mobilenet:8
    (lambda: mutwo.search(None), TypeError, "models = None"),
    (lambda: mutwo.search("bert-mini:2", progress=3), TypeError, "progress = 3: give a callable or None"),
    (lambda: mutwo.search("bert-mini:2", schemes=["dp"]), mutwo.Error, "give server= too"),
    (lambda: mutwo.search("bert-mini:2", server=""), mutwo.Error, "server = '': give a value"),
    (lambda: mutwo.search("bert-mini", server="4x-gtx1080ti", micro_batches=[100000]), mutwo.Error,
     "micro_batches = 100000: must be from 1 to 1024"),  # hung
    (lambda: mutwo.search("bert-mini", server="4x-gtx1080ti", packs=[10**6]), mutwo.Error,
     "packs = 1000000: must be from 1 to 4096"),
    (lambda: mutwo.search("bert-mini:2", jobs=-1), mutwo.Error, "jobs = -1: must be from 0 to 4096"),
])
def test_bad_search_arguments_are_refused_before_the_search(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_one_name_where_a_list_goes_is_a_list_of_it_not_of_its_letters():
    # policies="capuchin" was ["c", "a", ...]: "unknown policy 'c'".
    assert mutwo.search("bert-mini:2", policies="capuchin") == mutwo.search("bert-mini:2", policies=["capuchin"])
    rows = mutwo.search("bert-mini", server="4x-gtx1080ti", schemes="dp", micro_batches=2)
    assert {(r["strategy"], r["micro_batches"]) for r in rows} == {("dp", 2)}


def test_a_list_names_each_policy_scheme_and_run_once(results_db):
    # Each was run twice and printed twice; a run counted twice in the error summary.
    with pytest.raises(mutwo.Error, match="search: policy 'none' is given twice"):
        mutwo.search("bert-mini:2", policies=["none", "capuchin", "none"])
    with pytest.raises(mutwo.Error, match="server search: micro-batch count 2 is given twice"):
        mutwo.search("bert-mini", server="4x-gtx1080ti", schemes="dp", micro_batches=[2, 2])
    with pytest.raises(mutwo.Error, match="run id 2 is given twice"):
        mutwo.results(results_db, run_ids=[2, 5, 2])
    with pytest.raises(TypeError, match="run_ids: True is not a run id"):  # compared run 1
        mutwo.results(results_db, run_ids=True)
    with pytest.raises(mutwo.Error, match="--what-if-gpu 'h100-sxm-80gb' is the GPU 'h100-sxm-80gb', given already"):
        mutwo.replay("no-such-trace.json", what_if_gpus=["h100-sxm-80gb", "a100-40gb", "h100-sxm-80gb"])


def test_replay_refuses_an_unknown_pricing_source_and_no_path(fixtures):
    trace = fixtures / "kineto" / "a100_event_sync.json.gz"
    with pytest.raises(mutwo.UnknownNameError, match="unknown kernel pricing source 'zz'"):  # was ignored
        mutwo.replay(trace, what_if_source="zz", what_if_gpus=["h100-sxm-80gb"])
    with pytest.raises(TypeError, match="trace_path = None"):  # read a file named 'None'
        mutwo.replay(None)


def test_profile_refuses_top_0_and_a_gpu_without_a_database(tmp_path):
    with pytest.raises(mutwo.Error, match="top = 0: must be >= 1"):  # listed no op
        mutwo.profile("resnet-mini", tmp_path / "p.json", top=0)
    with pytest.raises(mutwo.Error, match="gpu = 'zz' prices the ops stored in db="):  # the name went unread
        mutwo.profile("resnet-mini", tmp_path / "p.json", gpu="zz")
    with pytest.raises(TypeError, match="output = None"):  # wrote a trace named 'None' in the working folder
        mutwo.profile("resnet-mini", None)
    assert not list(tmp_path.iterdir())


def test_an_experiment_needs_a_database_file_and_jobs_from_0(fixtures, tmp_path):
    spec = fixtures / "experiments" / "tiny_policies.toml"
    for db in ("", ":memory:"):  # SQLite's temporary database: 30 s of retries, then a WAL error
        start = time.perf_counter()
        with pytest.raises(mutwo.Error, match=f"'{db}': give"):
            mutwo.experiment(spec, db=db)
        assert time.perf_counter() - start < 5
    with pytest.raises(TypeError, match="db = None"):  # wrote a database named 'None'
        mutwo.experiment(spec, db=None)
    with pytest.raises(mutwo.Error, match="jobs = -1: must be >= 0"):
        mutwo.experiment(spec, db=tmp_path / "a.db", jobs=-1)
    with pytest.raises(TypeError, match="progress = 3: give a callable or None"):
        mutwo.experiment(spec, db=tmp_path / "a.db", progress=3)
    assert not list(tmp_path.iterdir())


def _interrupted_after(seconds, call):
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
    return time.perf_counter() - start


def test_ctrl_c_stops_a_search_without_a_progress_callback():
    # The search runs without the GIL: SIGINT was handled only once it had finished (bert-mini:40
    # searches for about 10 s).
    assert _interrupted_after(0.2, lambda: mutwo.search("bert-mini:40", strict=False)) < 3


def test_ctrl_c_stops_an_experiment_at_the_next_task(tmp_path):
    # 32 tasks of ~15 ms; SIGINT once the database exists (the run has begun) stops it between tasks,
    # as the command stops on SIGINT. It used to run every task, then raise.
    spec = tmp_path / "long.toml"
    spec.write_text('name = "long"\ntitle = "Long"\nkind = "policies"\n[sweep]\n'
                    'models = [{ name = "bert-base", batch_sizes = [8] }]\n'
                    f'model_counts = {list(range(1, 17))}\ngpus = ["a100-40gb"]\n'
                    'policies = ["mutwo", "capuchin"]\nmemory_fractions = [0.5, 1.0]\n')
    db = tmp_path / "runs.db"

    def interrupt():
        while not db.exists():
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupt)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            mutwo.experiment(spec, db=db, jobs=1)
    finally:
        thread.join()
    resumed = mutwo.experiment(spec, db=db, jobs=1)
    assert resumed["tasks_run"] > 0 and resumed["tasks_skipped"] + resumed["tasks_run"] == 32


def test_ctrl_c_stops_a_run_and_a_profile_before_their_next_step(tmp_path):
    # The executor runs without the GIL: SIGINT was handled only once every step had run (8
    # resnet-mini: 10,000 steps of about 20 ms on a CPU; the profile's 2,000 steps of about 0.2 s).
    # Now it stops before the next step, and nothing is stored or written.
    db, trace = tmp_path / "runs.db", tmp_path / "p.json"
    assert _interrupted_after(1.0, lambda: mutwo.run("resnet-mini", models=8, iterations=10000, warmup=0,
                                                     db=db)) < 20
    assert _interrupted_after(1.0, lambda: mutwo.profile("resnet-mini", trace, models=8, warmup=1000,
                                                         iterations=1000)) < 20
    assert not db.exists() and not trace.exists()


def test_from_torch_refuses_a_path_as_name_an_empty_batch_and_no_module(tmp_path):
    torch = pytest.importorskip("torch")
    module = torch.nn.Sequential(torch.nn.Linear(4, 3))
    with pytest.raises(ValueError, match="name = '../x': a model name, without a path separator"):
        mutwo.from_torch(module, torch.randn(2, 4), name="../x")  # was written outside the model folder
    with pytest.raises(mutwo.UnsupportedModelError, match="at least one sample"):
        mutwo.from_torch(module, torch.randn(0, 4))
    with pytest.raises(TypeError, match="module = 3: give a torch.nn.Module"):  # AttributeError 'train'
        mutwo.from_torch(3, torch.randn(2, 4))
    m = mutwo.from_torch(module, torch.randn(2, 4))
    with pytest.raises(ValueError, match="copies = True"):
        m.times(True)


def test_models_refuses_a_negative_batch_as_the_command_line_does():
    # models(batch=-1) listed every model at its own batch, as if 0 had been given.
    with pytest.raises(mutwo.Error, match="batch = -1: must be >= 1, or 0 for each model's own"):
        mutwo.models(batch=-1)
    assert mutwo.models(batch=3)[0]["batch_size"] == 3

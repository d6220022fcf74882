"""The Python wrappers' own arguments: a setting read only with another one is refused as the command's
flags refuse it, a bool, a dict or a float is never coerced to an int or a list, and numpy's ints are
ints. Each call named here used to be accepted and the value ignored or changed."""
import pytest

import mutwo

KINETO = "kineto/a100_event_sync.json.gz"


@pytest.mark.parametrize("call, message", [
    # as the command's "--optimizer-on requires --state-offload", "--order requires --policy", ...
    (lambda t: mutwo.simulate("bert-mini", optimizer_on="host"),
     "simulate: optimizer_on = 'host' requires state_offload=True"),
    (lambda t: mutwo.run("bert-mini", optimizer_on="device", iterations=1, warmup=0),
     "run: optimizer_on = 'device' requires state_offload=True"),
    (lambda t: mutwo.simulate("bert-mini", order="multiplexed"), "simulate: order = 'multiplexed' requires policy="),
    (lambda t: mutwo.simulate("bert-mini", trace_format="kineto"),
     "simulate: trace_format = 'kineto' requires trace="),
    (lambda t: mutwo.replay(t / KINETO, what_if_source="analytic"),
     "replay: what_if_source = 'analytic' requires what_if_gpus"),
    (lambda t: mutwo.replay(t / KINETO, step=3, all_steps=True),
     "replay: step = 3 and all_steps = True: give one"),
    (lambda t: mutwo.simulate("bert-mini", example_inputs=3),
     "example_inputs = 3 is read only for a torch.nn.Module model, not a str"),
    (lambda t: mutwo.trace("bert-mini", example_inputs=[1, 2]), "example_inputs = \\[1, 2\\] is read only"),
])
def test_a_setting_without_the_one_it_needs_is_refused_not_ignored(fixtures, call, message):
    with pytest.raises(mutwo.Error, match=message):
        call(fixtures)


def test_the_defaults_and_the_settings_with_what_they_need_are_accepted(fixtures):
    plain = mutwo.simulate("bert-mini", models=2)
    # Each default given explicitly is the plain step: a default is never refused.
    assert mutwo.simulate("bert-mini", models=2, optimizer_on="best", order="best", trace_format="",
                          example_inputs=None).step_time_ns == plain.step_time_ns
    assert mutwo.simulate("bert-mini", state_offload=True, optimizer_on="host").step_time_ns > 0
    assert mutwo.simulate("bert-mini", models=2, partition=[1, 1], policy="none",
                          order="multiplexed").step_time_ns > 0
    trace = fixtures / KINETO
    assert mutwo.replay(trace, what_if_gpus=["h100-sxm-80gb"], what_if_source="analytic")["replay"]
    assert mutwo.replay(trace, what_if_source="waves")["replay"]


@pytest.mark.parametrize("call, message", [
    # True is 1 to Python: batch 1, 1 iteration, step 1, sub-arrays of 1.
    (lambda t: mutwo.models(mini=True, batch=True), "batch = True: give an int"),
    (lambda t: mutwo.models(mini=1), "mini = 1: give True or False"),
    (lambda t: mutwo.simulate("bert-mini", iterations=True), "iterations = True: give an int or None"),
    (lambda t: mutwo.simulate("bert-mini", iterations=2.0), "iterations = 2.0: give an int or None"),
    (lambda t: mutwo.replay(t / KINETO, step=True), "step = True: give an int or None"),
    (lambda t: mutwo.simulate("bert-mini", models=2, partition=[True, True]),
     r"partition = \[True, True\]: True is not an int"),
    (lambda t: mutwo.simulate("bert-mini", models=2, partition=[2.0]), r"partition = \[2.0\]: 2.0 is not an int"),
    (lambda t: mutwo.search("bert-mini", server="4x-gtx1080ti", micro_batches=[True]),
     r"micro_batches = \[True\]: True is not an int"),
    (lambda t: mutwo.search("bert-mini", server="4x-gtx1080ti", packs=[False]), r"packs = \[False\]: False is not"),
    # A dict was its keys: partition={2: "x"} was [2], policies={"none": 1} was ["none"].
    (lambda t: mutwo.simulate("bert-mini", models=2, partition={2: "x"}),
     "partition = {2: 'x'}: give a list, not a dict"),
    (lambda t: mutwo.search("bert-mini:2", policies={"none": 1}), "policies = {'none': 1}: give a list, not a dict"),
    (lambda t: mutwo.replay(t / KINETO, what_if_gpus={"a100-40gb": 1}), "what_if_gpus = {'a100-40gb': 1}: give a list"),
    # A set's order is arbitrary, and a partition's order is its sub-arrays'.
    (lambda t: mutwo.simulate("bert-mini", models=3, partition={1, 2}), "partition = {1, 2}: give a list, not a set"),
])
def test_a_bool_float_or_dict_is_not_coerced(fixtures, call, message):
    with pytest.raises(TypeError, match=message):
        call(fixtures)


def test_results_refuse_a_dict_of_run_ids(results_db):
    with pytest.raises(TypeError, match="run_ids = {1: 2}: give a list, not a dict"):  # compared run 1
        mutwo.results(results_db, run_ids={1: 2})
    assert mutwo.results(results_db, run_ids={1}) == mutwo.results(results_db, run_ids=[1])  # order is not read


def test_numpy_ints_are_ints_for_memory_lists_and_steps():
    numpy = pytest.importorskip("numpy")
    # memory=numpy.int64(10**9) was "give bytes (an int)"; numpy's bool is still no number of bytes.
    limited = mutwo.simulate("bert-mini", memory=10**9, policy="none")
    assert mutwo.simulate("bert-mini", memory=numpy.int64(10**9), policy="none") == limited
    with pytest.raises(mutwo.Error, match="memory = True: "):
        mutwo.simulate("bert-mini", memory=numpy.bool_(True))
    assert mutwo.simulate("bert-mini", models=2, partition=[numpy.int64(1), numpy.int32(1)]).step_time_ns == \
        mutwo.simulate("bert-mini", models=2, partition=[1, 1]).step_time_ns
    assert mutwo.simulate("bert-mini", iterations=numpy.int64(2))["prediction"]["iterations"] == 2
    assert mutwo.models(batch=numpy.int64(3))[0]["batch_size"] == 3


def test_an_experiment_spec_that_is_a_folder_is_named_a_folder(tmp_path):
    # "/tmp" was "cannot read experiment spec '/tmp': no such file".
    for spec in (tmp_path, str(tmp_path), str(tmp_path) + "/"):
        with pytest.raises(mutwo.Error, match=f"cannot read experiment spec '{tmp_path}/?': a directory, not a spec"):
            mutwo.experiment(spec, db=tmp_path / "runs.db")
    assert not (tmp_path / "runs.db").exists()


def test_a_measured_experiment_runs_in_a_fresh_process(fixtures, tmp_path):
    # experiment() did not point the loader at the built executor as run() and profile() do: a measured
    # spec failed ("cannot be loaded from '/usr/bin/libmutwo_exec.so'") in a process that had called
    # neither, and left an empty database.
    import os
    import subprocess
    import sys
    db = tmp_path / "m.db"
    code = ("import mutwo; r = mutwo.experiment(%r, db=%r); print(r['rows_written'])"
            % (str(fixtures / "experiments" / "tiny_measured.toml"), str(db)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"

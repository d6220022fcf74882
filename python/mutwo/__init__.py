"""mutwo from Python: the simulator, the search and the results on the model zoo or a torch.nn.Module.

    import mutwo
    mutwo.models()                                   # the zoo, as dicts
    p = mutwo.simulate("resnet18", models=4, batch=32, gpu="a100-40gb", memory="16GiB")
    p.step_time_ns, p.peak_bytes, p.timeline()       # the fields of `mutwo simulate --json`
    rows = mutwo.search(["bert-base:8"], batch=16, gpu="h100-sxm-80gb", memory="40GiB")
    pandas.DataFrame(rows)                           # the rows of `mutwo search --json`
    m = mutwo.from_torch(torchvision.models.densenet121(), torch.randn(32, 3, 224, 224))
    mutwo.search([m.times(8)], gpu="a100-40gb", memory="20GiB")
    r = mutwo.run(m, models=2, device="cuda", db="results.db")   # measured next to the prediction

Everything is computed by mutwo's C++ libraries in this process (the extension `_mutwo`, over the
same api/ the `mutwo` program prints from), so each call returns what the matching command's
--json prints. Errors raise mutwo.Error (FormatError for a malformed file, UnknownNameError for an
unknown model, GPU, policy or option value, LimitError when no plan fits the memory limit,
DatabaseError for a results database that cannot be read) carrying mutwo's message.
"""
import collections.abc
import functools
import inspect
import numbers
import os
import sys
import warnings

from ._mutwo import (DatabaseError, Error, FormatError, Graph, LimitError, UnknownNameError, device, devices,
                     servers)
from . import _mutwo
from .model import Model, from_torch

for _error in (Error, FormatError, UnknownNameError, LimitError, DatabaseError):
    _error.__module__ = __name__  # mutwo.Error, not mutwo._mutwo.Error, in tracebacks

__all__ = ["DatabaseError", "Error", "FormatError", "Graph", "LimitError", "Model", "Prediction", "SearchRows",
           "UnknownNameError", "UnsupportedModelError", "device", "devices", "experiment", "from_torch", "models", "replay",
           "profile", "results", "run", "search", "servers", "simulate", "trace"]


class Prediction(dict):
    """What `mutwo simulate --json` prints, as a dict; its prediction's fields read as attributes
    (p.step_time_ns, p.peak_bytes, p.oom), and timeline() gives the step's Chrome-trace timeline."""

    def __init__(self, fields, rerun):
        super().__init__(fields)
        self._rerun = rerun

    def __getattr__(self, name):
        for part in (self, self.get("prediction", {})):
            if name in part:
                return part[name]
        raise AttributeError(name)

    def timeline(self):
        """The simulated step as Chrome-trace events (Perfetto, chrome://tracing): a dict."""
        if "timeline" not in self:
            self["timeline"] = self._rerun()["timeline"]
        return self["timeline"]


class SearchRows(list):
    """The rows of `mutwo search --json` (a list of dicts: pandas.DataFrame(rows)); the whole report
    (device, memory limit, stats, lean effects) is .report."""

    def __init__(self, report):
        super().__init__(report["rows"])
        self.report = report


def _short(value):
    """repr() of an argument for a message: a tensor's repr runs to pages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _items(value, name, ordered=False):
    """A list argument: None is none, and one name, path or number is a list of it (list("dp") was
    ["d", "p"]). A dict is refused (list() took its keys: partition={2: "x"} was [2]), and a set
    where the order is read (a partition's sub-arrays, a trace pair)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike, int, float)):
        return [value]
    if isinstance(value, collections.abc.Mapping) or (ordered and isinstance(value, collections.abc.Set)):
        raise TypeError(f"{name} = {_short(value)}: give a list, not a {type(value).__name__}")
    return list(value)


def _ints(value, name, ordered=False):
    """A list argument of whole numbers: True was 1 to the C++ side (partition=[True, True] was [1, 1])."""
    items = _items(value, name, ordered)
    for item in items:
        if _is_bool(item) or not isinstance(item, numbers.Integral):
            raise TypeError(f"{name} = {_short(value)}: {item!r} is not an int")
    return [int(item) for item in items]


def _int_or_none(value, name):
    """An int argument whose default is None (so _typed_as_defaults cannot read its type)."""
    if value is not None and (_is_bool(value) or not isinstance(value, numbers.Integral)):
        raise TypeError(f"{name} = {value!r}: give an int or None")
    return None if value is None else int(value)


def _memory(value):
    """A memory limit: numpy's ints are bytes too (the C++ side takes Python's int or a size string)."""
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        return int(value)
    return value


def _needs(call, name, value, default, needed, given):
    """A setting read only with another one is refused unless that one is given, as the command's
    flags are ("--optimizer-on requires --state-offload"): never taken and ignored."""
    if value != default and not given:
        raise Error(f"{call}: {name} = {value!r} requires {needed}")


def _path(value, name):
    """A file argument: str() of None was the file 'None', and "" the current folder or no file."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} = {value!r}: give a path (a str or os.PathLike)")
    if str(value) == "":
        raise Error(f"{name} = '': give a path")
    return str(value)


def _not_empty(**values):
    """Where None is the default, "" is refused: it was taken silently for the default."""
    for name, value in values.items():
        if isinstance(value, str) and value == "":
            raise Error(f"{name} = '': give a value, or None for the default")


def _is_bool(value):
    return isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"))


def _typed_as_defaults(function):
    """An argument whose default is an int, a float or a bool takes that type (numpy's too): True was
    1 model, batch 1 or seed 1 to the C++ side, and all_steps=2 or wrap=None passed as a flag."""
    signature = inspect.signature(function)
    wanted = {bool: (None, "True or False"), int: (numbers.Integral, "an int"), float: (numbers.Real, "a number")}

    @functools.wraps(function)
    def checked(*args, **kwargs):
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            kind = type(signature.parameters[name].default)
            if kind not in wanted:
                continue
            number, what = wanted[kind]
            if _is_bool(value) != (kind is bool) or (number is not None and not isinstance(value, number)):
                raise TypeError(f"{name} = {value!r}: give {what}")
        return function(*args, **kwargs)

    return checked


def _model_name(model, example_inputs):
    """A zoo name, a model file, a Model, or a torch.nn.Module (exported with example_inputs)."""
    torch = sys.modules.get("torch")
    is_module = torch is not None and isinstance(model, torch.nn.Module)
    if example_inputs is not None and not is_module:  # nothing is traced: they went unread
        raise Error(f"example_inputs = {_short(example_inputs)} is read only for a torch.nn.Module model, "
                    f"not a {type(model).__name__}")
    if isinstance(model, Model):
        return model.path
    if isinstance(model, str):
        return model
    if is_module:
        if example_inputs is None:
            raise Error("a torch.nn.Module needs example_inputs= (a tensor, batch first) to be traced")
        return from_torch(model, example_inputs).path
    raise Error(f"model: a zoo name, a model file, a mutwo.Model or a torch.nn.Module, not {type(model).__name__}")


@_typed_as_defaults
def models(mini=False, batch=0, dtype="fp32"):
    """The model zoo (the test-scale models with `mini`) at `batch` (0: each model's own), as `mutwo
    models --json` lists it: a list of dicts."""
    return _mutwo.models(mini=mini, batch=batch, dtype=dtype)


@_typed_as_defaults
def trace(model, *, models=1, batch=0, seq_len=0, image_size=0, dtype="fp32", precision="fp32", optimizer="adam",
          example_inputs=None):
    """One training step's graph (k models fused, with autodiff and the optimizer), as `mutwo trace`
    writes it: a mutwo.Graph (ops(), parameters, forward_flops, activation_bytes, to_json())."""
    name = _model_name(model, example_inputs)
    graph = _mutwo.trace(name, models=models, batch=batch, seq_len=seq_len, image_size=image_size, dtype=dtype,
                         precision=precision, optimizer=optimizer)
    # What made it, so that simulate(graph) plans the same array (one fused sub-array of `models`).
    graph.recipe = dict(model=name, models=models, batch=batch, seq_len=seq_len, image_size=image_size, dtype=dtype,
                        precision=precision, optimizer=optimizer)
    return graph


@_typed_as_defaults
def simulate(model=None, *, models=1, partition=None, batch=0, seq_len=0, image_size=0, dtype="fp32",
             precision="fp32", optimizer="adam", lean_ops="none", gpu=None, memory=None, cost_source=None, policy=None,
             order="best", state_offload=False, optimizer_on="best", host_mode=None, iterations=None, wrap=False,
             example_inputs=None, trace=None, trace_format="", traces=None, length_histogram=None,
             length_bin_tokens=64, length_align_tokens=8):
    """One training step of `models` copies of `model` (fused per `partition`, planned by `policy`
    at the memory limit when one is given) predicted on `gpu` (default the A100-40GB): a Prediction,
    the fields of `mutwo simulate --json` with the same settings. `model` may also be a Graph from
    trace(): its model, copies, batch, precision and optimizer are simulated as one fused sub-array
    (the model settings given here are not read; gpu, memory, policy and the host options are).
    `traces` are the measured traces a cost source reads (`cost_source="measured"` with what
    mutwo.profile() wrote); with them and no `gpu`, the GPU they were measured on is simulated.

    With `trace` instead of a model (a path, or an execution trace and the profiler trace of its
    step as a pair), the step that trace recorded is replayed as it ran, as `mutwo simulate --trace`
    does: priced by its own measured durations (cost_source "measured", the default there) on the
    GPU it ran on unless `gpu` names another, one iteration, the trace's host side (or none where it
    measured none); the Prediction also holds profiled_step_ns and replay_error.

    With `length_histogram` (a CSV "length,sequences"), each batch is padded only to its longest
    sequence, as a length-binned loader (NVIDIA's LDDL) pads it with bins of `length_bin_tokens` and
    lengths rounded up to `length_align_tokens`: the plain step is simulated at every padded length,
    the Prediction is the longest's and its "padded_lengths" holds each length's share and step and
    their mean, as `mutwo simulate --length-histogram` prints."""
    _not_empty(gpu=gpu, cost_source=cost_source, policy=policy, host_mode=host_mode, length_histogram=length_histogram)
    iterations = _int_or_none(iterations, "iterations")
    memory = _memory(memory)
    if length_histogram is None:  # the loader's settings, read by nothing else
        for name, value, default in (("length_bin_tokens", length_bin_tokens, 64),
                                     ("length_align_tokens", length_align_tokens, 8)):
            if value != default:
                raise Error(f"simulate: {name} = {value!r} is read only with a length_histogram")
    if trace is not None:
        if model is not None:
            raise Error("simulate: give a model or a trace, not both")
        # The trace is the step: settings of a model array would go unread.
        array = dict(models=(models, 1), partition=(partition, None), batch=(batch, 0), seq_len=(seq_len, 0),
                     image_size=(image_size, 0), dtype=(dtype, "fp32"), precision=(precision, "fp32"),
                     optimizer=(optimizer, "adam"), lean_ops=(lean_ops, "none"), order=(order, "best"),
                     state_offload=(state_offload, False), optimizer_on=(optimizer_on, "best"),
                     example_inputs=(example_inputs, None), traces=(traces, None),
                     length_histogram=(length_histogram, None))
        for name, (value, default) in array.items():
            if value is not default and (default is None or value != default):
                raise Error(f"simulate: {name} = {value!r} sets a model array; a trace= is simulated as it ran")
        if iterations == 0:  # 0 is _mutwo's "not given"
            raise Error("iterations = 0: must be from 1 to 1000")
        traces = [_path(t, "trace") for t in _items(trace, "trace", ordered=True)]
        kwargs = dict(format=trace_format, gpu=gpu, memory=memory, cost_source=cost_source or "measured",
                      policy=policy or "", host_mode=host_mode or "", iterations=iterations or 0, wrap=wrap)
        def rerun():
            with warnings.catch_warnings():  # the importers' assumptions were shown on the first run
                warnings.simplefilter("ignore")
                return _mutwo.simulate_trace(traces, timeline=True, **kwargs)
        return Prediction(_mutwo.simulate_trace(traces, **kwargs), rerun)
    if model is None:
        raise Error("simulate: give a model (a zoo name, a model file, a Model, a Graph, a torch.nn.Module) or trace=")
    _needs("simulate", "trace_format", trace_format, "", "trace=", False)  # the format of a trace=
    _needs("simulate", "order", order, "best", "policy=", policy is not None)
    _needs("simulate", "optimizer_on", optimizer_on, "best", "state_offload=True", state_offload)
    if isinstance(model, Graph):
        r = model.recipe
        model, models, partition = r["model"], r["models"], [r["models"]]
        batch, seq_len, image_size = r["batch"], r["seq_len"], r["image_size"]
        dtype, precision, optimizer = r["dtype"], r["precision"], r["optimizer"]
    name = _model_name(model, example_inputs)
    kwargs = dict(models=models, partition=_ints(partition, "partition", ordered=True), batch=batch, seq_len=seq_len,
                  image_size=image_size, dtype=dtype, precision=precision, optimizer=optimizer, lean_ops=lean_ops,
                  gpu=gpu, memory=memory, cost_source=cost_source or "waves",
                  traces=[_path(t, "traces") for t in _items(traces, "traces")],
                  policy=policy or "", order=order,
                  state_offload=state_offload, optimizer_on=optimizer_on, host_mode=host_mode or "eager",
                  iterations=3 if iterations is None else iterations, wrap=wrap,
                  length_histogram=str(length_histogram or ""), length_bin_tokens=length_bin_tokens,
                  length_align_tokens=length_align_tokens)
    fields = _mutwo.simulate(name, **kwargs)
    return Prediction(fields, lambda: _mutwo.simulate(name, timeline=True, **kwargs))


@_typed_as_defaults
def search(models, *, batch=0, seq_len=0, image_size=0, dtype="fp32", precision="fp32", lean_ops="none",
           host_mode="eager", optimizer="adam", policies=None, top=10, gpu=None, memory=None,
           cost_source="waves", progress=None, strict=True, server=None, schemes=None, micro_batches=None,
           packs=None, traces=None, jobs=0):
    """Every strategy (sequential, HFTA, HFTA with Capuchin, mutwo's partitions and policies) on the
    model array `models` ("bert-base:8", a Model, or a list of them) at the memory limit on `gpu`
    (default the A100-40GB): SearchRows, the rows of `mutwo search --json`, best first. The search
    runs without the GIL; `progress(visited, partitions)` is called before each partition. With
    `strict`, raises LimitError when no plan fits (the message gives the smallest limit any plan
    met); without, returns the infeasible rows.

    With `server` (a name from mutwo.servers(): "dgx-a100", "8x-h100-sxm", ...), the array is placed over the server's GPUs (one model: the data- and
    pipeline-parallel `schemes` over `micro_batches` and layer `packs`), as `mutwo search --server
    --json` prints it; `memory` is then per GPU, and `gpu`, if given, must be the server's. `jobs`
    threads plan each partition's policies (0: one per hardware thread); the rows are the same on any
    number."""
    _not_empty(gpu=gpu, server=server)
    if isinstance(models, (str, Model)):
        models = [models]
    elif models is None:
        raise TypeError("models = None: give a model array such as \"bert-base:8\" or a list of them")
    names = [m.spec() if isinstance(m, Model) else m for m in models]
    report = _mutwo.search(names, batch=batch, seq_len=seq_len, image_size=image_size, dtype=dtype,
                           precision=precision, lean_ops=lean_ops, host_mode=host_mode, optimizer=optimizer,
                           policies=_items(policies, "policies"), top=top, gpu=gpu, memory=_memory(memory),
                           cost_source=cost_source, traces=[_path(t, "traces") for t in _items(traces, "traces")],
                           progress=progress, server=server or "", schemes=_items(schemes, "schemes"),
                           micro_batches=_ints(micro_batches, "micro_batches"), packs=_ints(packs, "packs"),
                           jobs=jobs)
    if strict and not report["feasible"]:
        if server:
            raise LimitError(f"no placement fits in {report['memory_limit_bytes']} bytes per GPU on server "
                             f"'{server}'")
        raise LimitError(f"no plan fits in {report['memory_limit_bytes']} bytes; the smallest limit any plan met is "
                         f"{report['smallest_limit_bytes']} bytes")
    return SearchRows(report)


@_typed_as_defaults
def replay(trace_path, *, step=None, all_steps=False, kernel_speedup=2.0, what_if_gpus=(), what_if_source="waves",
           trace_gpu=""):
    """A PyTorch profiler trace replayed at the CUDA-runtime level with its what-ifs: the fields of
    `mutwo replay-trace --json` (replay, its breakdown and what-ifs; steps)."""
    step = _int_or_none(step, "step")
    if step is not None and all_steps:  # the command's --step takes a number or "all", never both
        raise Error(f"replay: step = {step} and all_steps = True: give one (all_steps replays every step)")
    what_if_gpus = _items(what_if_gpus, "what_if_gpus")
    _needs("replay", "what_if_source", what_if_source, "waves", "what_if_gpus", bool(what_if_gpus))
    return _mutwo.replay(_path(trace_path, "trace_path"), step=step, all=all_steps, kernel_speedup=kernel_speedup,
                         what_if_gpus=what_if_gpus, what_if_source=what_if_source, trace_gpu=trace_gpu)


@_typed_as_defaults
def run(model, *, models=1, partition=None, batch=0, seq_len=0, image_size=0, dtype="fp32", precision="fp32",
        optimizer="adam", lean_ops="none", gpu=None, memory=None, cost_source="waves", traces=None, policy="none",
        order="best",
        allow_oom=False, state_offload=False, optimizer_on="best", device="cpu", memory_cap="", seed=0, iterations=20,
        warmup=3, sync_each_step=False, wrap=False, cuda_graph=False, host_mode="", db=None, example_inputs=None):
    """`models` copies of `model` (fused per `partition`, planned by `policy` at the memory limit)
    executed on LibTorch (`device`: "cpu", "cuda", "cuda:N") and timed, next to the simulator's
    prediction of the same schedule on `gpu` (default: the CUDA device's catalog GPU, else the
    A100-40GB): the fields of `mutwo run --json` (prediction, measurement with its step times, peak
    and losses; run_id when stored in the results database `db`). Runs without the GIL. A policy
    with no plan under the limit raises LimitError; a step that ran out of memory is returned with
    measurement["oom"] set, as the command prints it before it fails."""
    _not_empty(gpu=gpu, device=device)
    _needs("run", "optimizer_on", optimizer_on, "best", "state_offload=True", state_offload)
    name = _model_name(model, example_inputs)
    return _mutwo.run(name, models=models, partition=_ints(partition, "partition", ordered=True), batch=batch,
                      seq_len=seq_len, image_size=image_size, dtype=dtype, precision=precision, optimizer=optimizer,
                      lean_ops=lean_ops, gpu=gpu, memory=_memory(memory), cost_source=cost_source,
                      traces=[_path(t, "traces") for t in _items(traces, "traces")],
                      policy=policy, order=order, allow_oom=allow_oom,
                      state_offload=state_offload, optimizer_on=optimizer_on, device=device, memory_cap=memory_cap,
                      seed=seed, iterations=iterations, warmup=warmup, sync_each_step=sync_each_step, wrap=wrap,
                      cuda_graph=cuda_graph, host_mode=host_mode, db=_path(db, "db") if db is not None else "")


@_typed_as_defaults
def profile(model, output, *, models=1, partition=None, batch=0, seq_len=0, image_size=0, dtype="fp32",
            precision="fp32", optimizer="adam", lean_ops="none", device="cpu", seed=0, warmup=1, iterations=3,
            host_times=False, db=None, gpu=None, top=8, example_inputs=None):
    """Every op of the array's training step timed on LibTorch (`device`: "cpu", "cuda"; the median
    of `iterations` steps after `warmup`, as μ-TWO profiles) and written to `output` as a measured
    trace, which simulate(..., cost_source="measured", traces=[output]) and search replay: the
    fields of `mutwo profile --json` (time per phase, the `top` slowest ops; run_id when the op
    times are stored in `db`, beside `gpu`'s analytic predictions). Runs without the GIL."""
    _not_empty(gpu=gpu, device=device)
    name = _model_name(model, example_inputs)
    return _mutwo.profile(name, models=models, partition=_ints(partition, "partition", ordered=True), batch=batch,
                          seq_len=seq_len, image_size=image_size, dtype=dtype, precision=precision, optimizer=optimizer,
                          lean_ops=lean_ops, output=_path(output, "output"), device=device, seed=seed, warmup=warmup,
                          iterations=iterations, host_times=host_times, db=_path(db, "db") if db is not None else "",
                          gpu=gpu or "", top=top)


@_typed_as_defaults
def experiment(spec, *, db="results.db", jobs=0, progress=None):
    """An experiment spec (a shipped name such as "mutwo_throughput", or a .toml path) run into the
    results database `db`, configurations already stored skipped: the fields of `mutwo experiment
    --json` and `table`, the spec's table as dicts (one per row, cells as its CSV holds them). Runs
    without the GIL; `progress(dict)` after each task written, and an exception it raises stops the
    run once the running tasks are written."""
    return _mutwo.experiment(_path(spec, "spec"), db=_path(db, "db"), jobs=jobs, progress=progress)


def results(db_path, run_ids=()):
    """Predicted against measured step time and peak memory from a results database: the fields of
    `mutwo compare --json` (rows, summary)."""
    ids = _items(run_ids, "run_ids")
    for i in ids:  # True is the int 1 to Python: it compared run 1 (compare --run takes whole numbers)
        if _is_bool(i) or not isinstance(i, numbers.Integral):
            raise TypeError(f"run_ids: {i!r} is not a run id (a whole number)")
    return _mutwo.results(_path(db_path, "db_path"), run_ids=[int(i) for i in ids])


def __getattr__(name):
    if name == "UnsupportedModelError":  # defined with torch: loaded on first use
        from .torch_import import UnsupportedModelError
        return UnsupportedModelError
    raise AttributeError(f"module 'mutwo' has no attribute '{name}'")

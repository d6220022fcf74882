"""A torch.nn.Module traced for torch_import.py's Exporter: torch.fx's graph of it as it trains, with
ShapeProp's shapes on each node, after checking that it is an fp32 model (mutwo applies precision
itself). Tracing is serialised (torch.fx patches torch process-wide while it traces), torch's
errors become mutwo's naming their cause, and the module is left in the modes it was given.
"""
import copy
import dis
import inspect
import threading
import traceback

import torch
import torch.fx
import torch.fx.passes.shape_prop
import torch.nn as nn
from torch.fx.passes.shape_prop import ShapeProp

from ._mutwo import Error


class UnsupportedModelError(Error):
    """A model mutwo cannot export faithfully (the message names the cause): a node mutwo has no op kind
    for, a tensor that is not fp32, a forward torch.fx cannot trace."""


Unsupported = UnsupportedModelError

# Precision is mutwo's setting, applied to the fp32 graph: a model exported in fp16 was written as fp32
# (twice its bytes), and an exported model refuses dtype= (zoo/exported_model.cpp).
FP32_ONLY = ("mutwo exports the fp32 model and applies precision itself: export it in fp32 (module.float(), fp32 "
             "example_inputs) and pass precision=\"amp-fp16\", \"amp-bf16\" or \"bf16\" to trace(), simulate(), "
             "search() or run()")


def is_float(dtype):
    return dtype.is_floating_point or dtype.is_complex


def check_fp32(model, example_input):
    """Every parameter, floating buffer and floating input in fp32 (integer ones, such as batch norm's
    num_batches_tracked or token ids, are not activations mutwo sizes as fp32)."""
    for kind, named in (("parameter", model.named_parameters()), ("buffer", model.named_buffers())):
        for name, t in named:
            if t.dtype != torch.float32 and (kind == "parameter" or is_float(t.dtype)):
                raise Unsupported(f"{kind} '{name}' is {t.dtype}; {FP32_ONLY}")
    if is_float(example_input.dtype) and example_input.dtype != torch.float32:
        raise Unsupported(f"example_inputs are {example_input.dtype}; {FP32_ONLY}")


def _unpack_aware_iter(self):
    """torch.fx's Proxy.__iter__ of PyTorch 1.13 finds the calling instruction at f_lasti // 2, which
    is wrong on Python 3.11 (inline caches): `n, c, h, w = x.shape` then fails to trace. Match the
    instruction by its byte offset instead (right on every Python)."""
    frame = inspect.currentframe().f_back
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset == frame.f_lasti and inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
    return _original_iter(self)


_original_iter = torch.fx.proxy.Proxy.__iter__
torch.fx.proxy.Proxy.__iter__ = _unpack_aware_iter


class Tracer(torch.fx.Tracer):
    """Keeps nn.MultiheadAttention whole: its Python shape checks cannot be traced symbolically."""

    def is_leaf_module(self, m, qualified_name):
        return isinstance(m, nn.MultiheadAttention) or super().is_leaf_module(m, qualified_name)


# torch.fx's tracer patches torch's functions and nn.Module.__call__ process-wide while it traces:
# two threads tracing at once recorded each other's calls ("module is not installed as a submodule").
_trace_lock = threading.Lock()


def traced(model, example_input):
    """`model` traced with torch.fx as it trains (dropout, batch norm's batch statistics), its shapes
    on each node: a GraphModule sharing the model's submodules. Raises Unsupported for a parameter,
    buffer or input that is not fp32 and for a model torch.fx cannot trace, Error when the model
    cannot run on `example_input`. The module's train and eval modes are left as they were."""
    with _trace_lock:
        check_fp32(model, example_input)
        modes = [(m, m.training) for m in model.modules()]
        try:
            model.train()
            try:
                graph = Tracer().trace(model)
            except Exception as e:  # TraceError (control flow on values), len() of a proxy, ...
                raise Unsupported(f"torch.fx cannot trace the model: {type(e).__name__}: {e} (mutwo needs a "
                                  "forward without control flow on the input's values)") from e
            gm = torch.fx.GraphModule(model, graph)
            propagate_shapes(gm, example_input)
            return gm
        finally:
            for m, training in modes:
                m.training = training


class _QuietTraceback:
    """`traceback` as ShapeProp sees it, without print_exc: ShapeProp printed each failing node's
    traceback to stderr before raising, and the Error raised here carries the original, chained."""

    def __getattr__(self, name):
        return getattr(traceback, name)

    @staticmethod
    def print_exc(*args, **kwargs):
        pass


class _NodeShapeProp(ShapeProp):
    """ShapeProp remembering the node it ran last: the one that failed, for the error."""

    node = None

    def run_node(self, n):
        self.node = n
        return super().run_node(n)


def propagate_shapes(gm, example_input):
    """ShapeProp's shapes on each node. On a copy of the module on the meta device first (shapes
    without the arithmetic: ViT-B/16 in 0.2 s instead of 16 s on two cores); where an op has no meta
    kernel, on the module itself with real tensors. Called under _trace_lock, which also covers the
    silenced printing (shape_prop's module-wide `traceback`)."""
    shape_prop = torch.fx.passes.shape_prop
    shape_prop.traceback = _QuietTraceback()
    try:
        propagate_shapes_quietly(gm, example_input)
    finally:
        shape_prop.traceback = traceback


def meta_twin(gm):
    """A copy of the graph module on the meta device: the user's module keeps its weights."""
    return copy.deepcopy(gm).to("meta")


def propagate_shapes_quietly(gm, example_input):
    try:
        twin_gm = meta_twin(gm)
        _NodeShapeProp(twin_gm).propagate(example_input.to("meta"))
    except (RuntimeError, NotImplementedError, TypeError):
        prop = _NodeShapeProp(gm)
        # Real tensors in train mode update batch norm's running statistics: the user's module keeps its own.
        buffers = [(b, b.clone()) for b in gm.buffers()]
        try:
            prop.propagate(example_input)
        except Exception as e:
            cause = e.__cause__ or e.__context__ or e  # ShapeProp's RuntimeError wraps the op's own error
            where = f"node '{prop.node.name}'" if prop.node is not None else "the model"
            raise Error(f"example_inputs of shape {list(example_input.shape)} do not run through the model: "
                        f"{where} raised {type(cause).__name__}: {cause}") from e
        finally:
            with torch.no_grad():
                for b, saved in buffers:
                    b.copy_(saved)
        return
    for node, twin in zip(gm.graph.nodes, twin_gm.graph.nodes):
        if "tensor_meta" in twin.meta:
            node.meta["tensor_meta"] = twin.meta["tensor_meta"]
        if "type" in twin.meta:
            node.meta["type"] = twin.meta["type"]

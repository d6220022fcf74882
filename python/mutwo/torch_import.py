"""A torch.nn.Module as a mutwo forward graph: what `mutwo.from_torch` and scripts/export_model.py do.

The model is traced with torch.fx (symbolic_trace) and its shapes propagated on example inputs
(ShapeProp on a copy on the meta device, or real tensors on the CPU where an op has no meta kernel;
the batch and image size are fixed in the graph); a
cross-entropy loss over its [batch, classes] output is appended, with int64 labels [batch]. Each
node maps to one mutwo op kind (ir/op_kind.hpp) with its inputs, attributes and extra outputs as
mutwo's kinds define them (batch norm's saved mean and inverse std, max pooling's indices,
dropout's mask, the loss's log-probabilities); FLOPs and bytes are left 0 and re-derived by mutwo
from the kinds' rules. A node without a mutwo kind (or an attribute mutwo does not model: pooling
dilation, an adaptive pool whose output size does not divide its input) stops the export naming the
node, so a graph is never silently wrong. The model is fp32 (its parameters, buffers, inputs and each
computed tensor; mutwo applies precision itself), and an in-place op (y.add_(z), nn.ReLU(inplace=True))
is written out of place, the ops after it reading its result for y. torch_trace.py traces the model.

Convolutional nets beyond ResNet: torch.cat on the channels of feature maps is concat_channels
(DenseNet, GoogLeNet), its torch.chunk pieces slice_channels and ShuffleNet's channel shuffle
channel_shuffle; avg pooling (with ceil_mode, count_include_pad) is avg_pool2d, and an adaptive
average pool to an output size that divides its input is the same avg_pool2d (kernel = stride =
input / output; VGG's and AlexNet's pools to the size they already have are 1x1 pools); ConvNeXt's
permutes between NCHW and NHWC are mutwo's permute, its layer norms over channels (nn.LayerNorm after
a permute, torchvision's LayerNorm2d) layer norms of the NHWC tensor, and its layer scale a mul by a
[C,1,1] parameter.

Transformers: nn.MultiheadAttention (self-attention, batch_first, no masks) is kept whole by the
tracer and written as mutwo's attention ops: q/k/v linears from its packed in_proj (named
"<module>.in_proj.q.weight" ...), attn_scores, softmax, [dropout], attn_context and out_proj, as
the zoo writes torchvision's ViT; a class token concatenated before the patch tokens of a
convolution (reshape, permute, expand, cat) is mutwo's class_token_concat; x[:, 0] is
select_token. Dropout with p = 0 is the identity (PyTorch returns its input).

Works with Debian's python3-torch (1.13) and PyTorch 2.x (torch.fx and ShapeProp are in both).
This module imports torch; `import mutwo` does not (it loads this file on first use).
"""
import json
import math
import operator

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

# UnsupportedModelError is imported from here (mutwo.UnsupportedModelError, model.py, user code).
from .torch_trace import FP32_ONLY, Unsupported, UnsupportedModelError, is_float, traced  # noqa: F401
from .torch_views import ViewPatterns

DTYPES = {torch.float32: ("fp32", 4), torch.int64: ("int64", 8), torch.bool: ("bool", 1)}


class Exporter(ViewPatterns):
    def __init__(self, gm, name, batch):
        self.gm = gm
        self.name = name
        self.batch = batch
        self.tensors = []
        self.ops = []
        self.env = {}  # fx node -> tensor id
        self.views = {}  # fx node -> ("patches", conv output id) or ("class_token", weight id): ViT's token views
        self.pairs = {}  # fx node of a leaf nn.MultiheadAttention -> its output tensor id

    def tensor(self, name, shape, role, dtype=torch.float32):
        if dtype not in DTYPES:
            raise Unsupported(f"tensor '{name}' has dtype {dtype}; mutwo's kinds take fp32, int64 and bool")
        dtype_name, size = DTYPES[dtype]
        shape = [int(d) for d in shape]
        count = 1
        for d in shape:
            count *= d
        self.tensors.append({"id": len(self.tensors), "name": name, "shape": shape, "dtype": dtype_name,
                             "role": role, "bytes": count * size, "width": 1})
        return len(self.tensors) - 1

    def op(self, name, kind, inputs, outputs, attrs=None):
        self.ops.append({"id": len(self.ops), "name": name, "kind": kind, "phase": "forward", "inputs": inputs,
                         "outputs": outputs, "attrs": attrs or {}, "flops": 0, "bytes_read": 0,
                         "bytes_written": 0, "workspace_bytes": 0, "forward_of": -1, "recomputable": True,
                         "width": 1})

    def out(self, node, suffix="", shape=None, dtype=torch.float32, role="activation"):
        meta = node.meta.get("tensor_meta")
        if shape is None:
            if meta is None or not hasattr(meta, "shape"):
                raise Unsupported(f"node '{node.name}' has no single tensor output")
            shape = meta.shape
        # The node's own output is written as the dtype its mutwo kind computes: one the trace gave
        # another dtype (int64 added to int64, a mean in fp64) would be sized wrongly.
        if not suffix and getattr(meta, "dtype", dtype) != dtype:
            raise Unsupported(f"node '{node.name}' computes {meta.dtype}; mutwo's op kind computes {dtype} here")
        return self.tensor(node.name + suffix, shape, role, dtype)

    def weight(self, node, param_name, param):
        return self.tensor(f"{node.target}.{param_name}", param.shape, "weight", param.dtype)

    def arg(self, node, i=0):
        a = node.args[i]
        if not isinstance(a, torch.fx.Node) or a not in self.env:
            raise Unsupported(f"node '{node.name}': argument {i} ({a!r}) is not a tensor of the graph")
        return self.env[a]

    @staticmethod
    def pair(v):
        return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]

    def module(self, node):
        m = self.gm.get_submodule(node.target)
        if isinstance(m, nn.MultiheadAttention):
            return self.attention(node, m)  # called with keyword arguments
        x = self.arg(node)
        if isinstance(m, nn.Linear):
            ins = [x, self.weight(node, "weight", m.weight)]
            if m.bias is not None:
                ins.append(self.weight(node, "bias", m.bias))
            self.env[node] = self.out(node)
            self.op(node.name, "linear", ins, [self.env[node]])
        elif isinstance(m, nn.Conv2d):
            if m.padding_mode != "zeros" or isinstance(m.padding, str):
                raise Unsupported(f"conv '{node.target}': padding {m.padding!r} ({m.padding_mode}); mutwo's "
                                  "conv2d takes numeric zero padding")
            ins = [x, self.weight(node, "weight", m.weight)]
            if m.bias is not None:
                ins.append(self.weight(node, "bias", m.bias))
            self.env[node] = self.out(node)
            attrs = {"stride": self.pair(m.stride), "padding": self.pair(m.padding)}
            if m.groups != 1:
                attrs["groups"] = int(m.groups)  # depthwise and grouped convolutions
            if self.pair(m.dilation) != [1, 1]:
                attrs["dilation"] = self.pair(m.dilation)
            self.op(node.name, "conv2d", ins, [self.env[node]], attrs)
        elif isinstance(m, nn.BatchNorm2d):
            if not m.affine:
                raise Unsupported(f"batch norm '{node.target}' without affine parameters")
            ins = [x, self.weight(node, "weight", m.weight), self.weight(node, "bias", m.bias)]
            c = m.num_features
            outs = [self.out(node), self.out(node, ".save_mean", [c]), self.out(node, ".save_invstd", [c])]
            self.env[node] = outs[0]
            self.op(node.name, "batchnorm2d", ins, outs, {"eps": float(m.eps)})
        elif isinstance(m, nn.LayerNorm):
            if len(m.normalized_shape) != 1 or not m.elementwise_affine:
                raise Unsupported(f"layer norm '{node.target}': mutwo's normalises the last dim with affine "
                                  "parameters")
            self.layer_norm(node, x, self.weight(node, "weight", m.weight), self.weight(node, "bias", m.bias),
                            m.eps)
        elif isinstance(m, (nn.ReLU, nn.ReLU6, nn.GELU, nn.Tanh, nn.Sigmoid, nn.Hardswish, nn.Hardsigmoid, nn.SiLU)):
            kind = {nn.ReLU: "relu", nn.ReLU6: "relu6", nn.GELU: "gelu", nn.Tanh: "tanh", nn.Sigmoid: "sigmoid",
                    nn.Hardswish: "hardswish", nn.Hardsigmoid: "hardsigmoid", nn.SiLU: "silu"}[type(m)]
            attrs = {"approximate": 1 if getattr(m, "approximate", "none") == "tanh" else 0} if kind == "gelu" else {}
            self.env[node] = self.out(node)
            self.op(node.name, kind, [x], [self.env[node]], attrs)
        elif isinstance(m, nn.Dropout) and m.p == 0:
            self.env[node] = x  # PyTorch returns the input itself
        elif isinstance(m, nn.Dropout):
            self.env[node] = self.out(node)
            mask = self.out(node, ".mask", dtype=torch.bool)
            self.op(node.name, "dropout", [x], [self.env[node], mask], {"p": float(m.p)})
        elif isinstance(m, nn.MaxPool2d):
            self.max_pool(node, x, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode)
        elif isinstance(m, nn.AvgPool2d):
            self.avg_pool(node, x, m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad,
                          m.divisor_override)
        elif isinstance(m, nn.AdaptiveAvgPool2d):
            self.adaptive_avg_pool(node, x, m.output_size)
        elif isinstance(m, nn.Flatten):
            self.flatten(node, x)
        elif isinstance(m, nn.Identity):
            self.env[node] = x
        else:
            raise Unsupported(f"module '{node.target}' ({type(m).__name__}) has no mutwo op kind")

    def layer_norm(self, node, x, weight, bias, eps):
        rows = list(node.meta["tensor_meta"].shape[:-1]) + [1]  # keepdim, as aten::native_layer_norm
        outs = [self.out(node), self.out(node, ".mean", rows), self.out(node, ".rstd", rows)]
        self.env[node] = outs[0]
        self.op(node.name, "layernorm", [x, weight, bias], outs, {"eps": float(eps)})

    def max_pool(self, node, x, kernel, stride, padding, dilation, ceil_mode):
        if self.pair(dilation) != [1, 1]:
            raise Unsupported(f"max pool '{node.name}': dilation {dilation} is not modelled")
        self.env[node] = self.out(node)
        indices = self.out(node, ".indices", dtype=torch.int64)
        attrs = {"kernel": self.pair(kernel), "stride": self.pair(stride or kernel), "padding": self.pair(padding)}
        if ceil_mode:
            attrs["ceil_mode"] = 1
        self.op(node.name, "max_pool2d", [x], [self.env[node], indices], attrs)

    def avg_pool(self, node, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override=None):
        if divisor_override is not None:
            raise Unsupported(f"avg pool '{node.name}': divisor_override {divisor_override} is not modelled")
        self.env[node] = self.out(node)
        attrs = {"kernel": self.pair(kernel), "stride": self.pair(stride or kernel), "padding": self.pair(padding)}
        if ceil_mode:
            attrs["ceil_mode"] = 1
        if not count_include_pad:
            attrs["count_include_pad"] = 0
        self.op(node.name, "avg_pool2d", [x], [self.env[node]], attrs)

    def adaptive_avg_pool(self, node, x, output_size):
        """To 1x1: adaptive_avg_pool2d. To a size that divides the input: the same windows as avg_pool2d
        with kernel = stride = input / output (what ATen's adaptive pool computes then)."""
        size = self.tensors[x]["shape"][2:]
        out = [s if o is None else int(o) for s, o in zip(size, self.pair(output_size) if not isinstance(
            output_size, (tuple, list)) else output_size)]
        if out == [1, 1]:
            self.env[node] = self.out(node)
            self.op(node.name, "adaptive_avg_pool2d", [x], [self.env[node]])
        elif all(s % o == 0 for s, o in zip(size, out)):
            window = [s // o for s, o in zip(size, out)]
            self.avg_pool(node, x, window, window, 0, False, True)
        else:
            raise Unsupported(f"adaptive pool '{node.name}' of {size} to {out}: mutwo pools to 1x1 or to a size "
                              "that divides the input")

    def attention(self, node, m):
        """Self-attention as the zoo writes torchvision's: q/k/v linears from the packed in_proj."""
        q, k, v = (node.kwargs.get(name, node.args[i] if len(node.args) > i else None)
                   for i, name in enumerate(("query", "key", "value")))
        masks = [node.kwargs.get(n) for n in ("key_padding_mask", "attn_mask")] + list(node.args[3:])
        if not (q is k is v) or any(a is not None and a is not False for a in masks[:2]) or not m.batch_first \
                or m.in_proj_weight is None or m.in_proj_bias is None or m.bias_k is not None:
            raise Unsupported(f"attention '{node.target}': mutwo's attention ops take batch-first self-attention "
                              "with a packed, biased in_proj and no masks")
        x = self.env[q]
        h = m.embed_dim
        shape = self.tensors[x]["shape"]
        proj = []
        for part in ("q", "k", "v"):
            name = f"{node.target}.in_proj.{part}"
            w = self.tensor(f"{name}.weight", [h, h], "weight")
            b = self.tensor(f"{name}.bias", [h], "weight")
            y = self.tensor(name, shape, "activation")
            self.op(name, "linear", [x, w, b], [y])
            proj.append(y)
        batch, tokens = shape[0], shape[1]
        scores = self.tensor(f"{node.target}.scores", [batch, m.num_heads, tokens, tokens], "activation")
        self.op(f"{node.target}.scores", "attn_scores", proj[:2], [scores],
                {"heads": int(m.num_heads), "causal": 0, "scale": 1.0 / math.sqrt(h // m.num_heads)})
        probs = self.tensor(f"{node.target}.softmax", [batch, m.num_heads, tokens, tokens], "activation")
        self.op(f"{node.target}.softmax", "softmax", [scores], [probs])
        if m.dropout > 0:
            dropped = self.tensor(f"{node.target}.dropout", [batch, m.num_heads, tokens, tokens], "activation")
            mask = self.tensor(f"{node.target}.dropout.mask", [batch, m.num_heads, tokens, tokens], "activation",
                               torch.bool)
            self.op(f"{node.target}.dropout", "dropout", [probs], [dropped, mask], {"p": float(m.dropout)})
            probs = dropped
        context = self.tensor(f"{node.target}.context", shape, "activation")
        self.op(f"{node.target}.context", "attn_context", [probs, proj[2]], [context])
        w = self.tensor(f"{node.target}.out_proj.weight", [h, h], "weight")
        b = self.tensor(f"{node.target}.out_proj.bias", [h], "weight")
        out = self.tensor(f"{node.target}.out_proj", shape, "activation")
        self.op(f"{node.target}.out_proj", "linear", [context, w, b], [out])
        self.pairs[node] = out  # forward returns (output, weights); need_weights=False: weights are None

    def flatten(self, node, x):
        shape = self.tensors[x]["shape"]
        if node.op == "call_module":
            m = self.gm.get_submodule(node.target)
            start, end = m.start_dim, m.end_dim
        else:
            a = self.call_args(node, ("input", "start_dim", "end_dim"))
            start, end = a.get("start_dim", 1), a.get("end_dim", -1)
        if len(shape) != 4 or start != 1 or end not in (-1, 3):  # end_dim 2 kept W apart: not mutwo's flatten
            raise Unsupported(f"flatten '{node.name}' of {shape} from dim {start} to {end}: mutwo's flatten takes "
                              "[B, C, H, W] from dim 1 to the last")
        self.env[node] = self.out(node)
        self.op(node.name, "flatten", [x], [self.env[node]])

    @staticmethod
    def call_args(node, names):
        """A call's positional and keyword arguments by parameter name."""
        return dict(zip(names, node.args), **node.kwargs)

    def overwritten(self, node):
        """The fx node whose tensor `node` overwrites in place (y.add_(z), F.relu(y, inplace=True),
        nn.ReLU(inplace=True)), or None. The tracer keeps using that node for y afterwards, so the
        exporter, which writes each op out of place, rebinds y to the op's result."""
        t = node.target
        if node.op == "call_method" and t.endswith("_") and not t.endswith("__"):
            overwrites = True
        elif node.op == "call_function" and t in (operator.iadd, operator.imul):
            overwrites = True
        elif node.op == "call_function" and t in (F.relu, F.relu6, F.hardswish, F.hardsigmoid, F.silu):
            overwrites = bool(self.call_args(node, ("input", "inplace")).get("inplace", False))
        elif node.op == "call_module":
            overwrites = bool(getattr(self.gm.get_submodule(t), "inplace", False))
        else:
            overwrites = False
        x = node.args[0] if node.args else None
        return x if overwrites and isinstance(x, torch.fx.Node) else None

    def commutative(self, node):
        """The two tensor operands of add/mul, the one broadcast second (mutwo's add and mul broadcast b)."""
        a, b = self.env[node.args[0]], self.env[node.args[1]]
        size = lambda t: self.tensors[t]["bytes"]
        return [a, b] if size(a) >= size(b) else [b, a]

    def function(self, node):
        t = node.target
        if self.token_view(node) or self.channel_view(node):
            return
        if getattr(t, "__name__", "") == "stochastic_depth" and getattr(t, "__module__", "").startswith("torchvision"):
            # torchvision.ops.stochastic_depth(input, p, mode, training): written as dropout with its p,
            # the same expected scale and bandwidth; its mask is per element where PyTorch draws one
            # per sample ("row") or per batch, so the mask's bytes are counted high (1 byte per element).
            args = dict(zip(("input", "p", "mode", "training"), node.args), **node.kwargs)
            p = float(args.get("p", 0.0))
            if p == 0.0 or not args.get("training", True):
                self.env[node] = self.arg(node)  # the input itself
                return
            self.env[node] = self.out(node)
            mask = self.out(node, ".mask", dtype=torch.bool)
            self.op(node.name, "dropout", [self.arg(node)], [self.env[node], mask], {"p": p})
            return
        if t is operator.getitem and node.args[0] in self.pairs:
            if node.args[1] == 0:
                self.env[node] = self.pairs[node.args[0]]
            return  # [1]: the attention weights, None
        if t is operator.getitem and node.args[0] in self.env and node.args[1] == (slice(None), 0):
            self.env[node] = self.out(node)  # x[:, 0] of [B, T, C]
            self.op(node.name, "select_token", [self.env[node.args[0]]], [self.env[node]], {"index": 0})
            return
        meta = node.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            return  # not a tensor (x.shape, its items, asserts): nothing to compute on the GPU
        if "out" in node.kwargs:  # the result lands in another tensor, which the graph does not rebind
            raise Unsupported(f"{node.op} '{node.name}' ({getattr(t, '__name__', t)}) with out=: not modelled")
        if t in (operator.add, operator.iadd, torch.add, "add", "add_"):  # in place written out of place
            a, b = node.args[0], node.args[1]
            if not (isinstance(a, torch.fx.Node) and isinstance(b, torch.fx.Node)) or len(node.args) > 2:
                raise Unsupported(f"add '{node.name}' of a constant")
            alpha = node.kwargs.get("alpha", 1)
            if alpha != 1:  # a + alpha * b was written as a + b
                raise Unsupported(f"add '{node.name}' with alpha = {alpha!r}: mutwo's add is a + b (alpha 1)")
            self.env[node] = self.out(node)
            self.op(node.name, "add", self.commutative(node), [self.env[node]])
        elif t in (operator.mul, torch.mul, "mul") and all(isinstance(a, torch.fx.Node) for a in node.args[:2]):
            if len(node.args) > 2 or node.kwargs:
                raise Unsupported(f"mul '{node.name}' with arguments {node.args[2:]} {node.kwargs}: mutwo's mul is "
                                  "a * b")
            self.env[node] = self.out(node)
            self.op(node.name, "mul", self.commutative(node), [self.env[node]])
        elif t in (torch.relu, F.relu, "relu"):
            self.env[node] = self.out(node)
            self.op(node.name, "relu", [self.arg(node)], [self.env[node]])
        elif t in (torch.flatten, "flatten"):
            self.flatten(node, self.arg(node))
        elif t is F.adaptive_avg_pool2d:
            self.adaptive_avg_pool(node, self.arg(node), self.call_args(node, ("input", "output_size"))["output_size"])
        elif t is F.max_pool2d:
            a = self.call_args(node, ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"))
            self.max_pool(node, self.arg(node), a["kernel_size"], a.get("stride"), a.get("padding", 0),
                          a.get("dilation", 1), a.get("ceil_mode", False))
        elif t is F.avg_pool2d:
            a = self.call_args(node, ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                      "divisor_override"))
            self.avg_pool(node, self.arg(node), a["kernel_size"], a.get("stride"), a.get("padding", 0),
                          a.get("ceil_mode", False), a.get("count_include_pad", True), a.get("divisor_override"))
        elif t is F.layer_norm:
            a = self.call_args(node, ("input", "normalized_shape", "weight", "bias", "eps"))
            shape = list(a["normalized_shape"])
            x = self.arg(node)
            if len(shape) != 1 or shape[0] != self.tensors[x]["shape"][-1] or \
                    not all(isinstance(a.get(n), torch.fx.Node) for n in ("weight", "bias")):
                raise Unsupported(f"layer norm '{node.name}' over {shape}: mutwo's normalises the last dim with "
                                  "affine parameters")
            self.layer_norm(node, x, self.env[a["weight"]], self.env[a["bias"]], a.get("eps", 1e-5))
        elif t in (torch.mean, "mean") and len(self.tensors[self.arg(node)]["shape"]) == 4 and sorted(
                d % 4 for d in self.call_args(node, ("input", "dim", "keepdim")).get("dim", [])) == [2, 3]:
            # x.mean([2, 3]) of [B, C, H, W] (MNASNet's head): global average pooling, then flatten
            # unless keepdim; the flatten is mutwo's [B, C, 1, 1] -> [B, C] view.
            x = self.arg(node)
            if self.call_args(node, ("input", "dim", "keepdim")).get("keepdim", False):
                self.env[node] = self.out(node)
                self.op(node.name, "adaptive_avg_pool2d", [x], [self.env[node]])
                return
            shape = self.tensors[x]["shape"]
            pooled = self.out(node, ".pool", shape=shape[:2] + [1, 1])
            self.op(node.name + ".pool", "adaptive_avg_pool2d", [x], [pooled])
            self.env[node] = self.out(node)
            self.op(node.name, "flatten", [pooled], [self.env[node]])
        elif t in (torch.permute, "permute"):
            dims = [int(d) for d in (node.args[1] if len(node.args) == 2 and isinstance(node.args[1], (list, tuple))
                                     else node.args[1:])]
            x = self.arg(node)
            if len(self.tensors[x]["shape"]) != 4 or dims not in ([0, 2, 3, 1], [0, 3, 1, 2]):
                raise Unsupported(f"permute '{node.name}' of {self.tensors[x]['shape']} by {dims}: mutwo permutes "
                                  "[B, C, H, W] to [B, H, W, C] and back")
            self.env[node] = self.out(node)
            self.op(node.name, "permute", [x], [self.env[node]], {"dims": dims})
        elif t in (torch.cat, "cat") and self.call_args(node, ("tensors", "dim")).get("dim", 0) in (1, -3) and \
                all(isinstance(a, torch.fx.Node) and a in self.env and len(self.tensors[self.env[a]]["shape"]) == 4
                    for a in node.args[0]):
            self.env[node] = self.out(node)
            self.op(node.name, "concat_channels", [self.env[a] for a in node.args[0]], [self.env[node]])
        elif t in (F.hardsigmoid, F.hardswish, F.relu6, torch.sigmoid, torch.tanh, F.silu):
            kind = {F.hardsigmoid: "hardsigmoid", F.hardswish: "hardswish", F.relu6: "relu6", F.silu: "silu",
                    torch.sigmoid: "sigmoid", torch.tanh: "tanh"}[t]
            self.env[node] = self.out(node)
            self.op(node.name, kind, [self.arg(node)], [self.env[node]])
        else:
            raise Unsupported(f"{node.op} '{node.name}' ({getattr(t, '__name__', t)}) has no mutwo op kind")

    def run(self):
        logits = None
        for node in self.gm.graph.nodes:
            meta = node.meta.get("tensor_meta")
            dtype = getattr(meta, "dtype", None)
            if dtype is not None and is_float(dtype) and dtype != torch.float32:
                raise Unsupported(f"node '{node.name}' computes {dtype}; {FP32_ONLY}")
            if node.op == "placeholder":  # an integer input (token ids) keeps its dtype
                self.env[node] = self.out(node, role="input", dtype=dtype or torch.float32)
            elif node.op == "call_module":
                self.module(node)
            elif node.op in ("call_function", "call_method"):
                self.function(node)
            elif node.op == "get_attr":
                try:
                    param = self.gm.get_parameter(node.target)
                except AttributeError:
                    raise Unsupported(f"get_attr '{node.target}' is a buffer or constant, not a parameter")
                self.env[node] = self.tensor(node.target, param.shape, "weight", param.dtype)
            elif node.op == "output":
                logits = self.arg(node)
            else:
                raise Unsupported(f"{node.op} '{node.name}' has no mutwo op kind")
            x = self.overwritten(node)
            if x is not None and x in self.env and node in self.env:
                self.env[x] = self.env[node]  # later reads of x see the in-place result
        shape = self.tensors[logits]["shape"]
        if len(shape) != 2 or shape[0] != self.batch:
            raise Unsupported(f"the model's output is {shape}; the appended cross entropy needs [batch, classes]")
        labels = self.tensor("labels", [self.batch], "label", torch.int64)
        loss = self.tensor("loss", [], "loss")
        log_probs = self.tensor("loss.log_probs", shape, "activation")
        self.op("loss", "cross_entropy", [logits, labels], [loss, log_probs])
        return {"format": "mutwo-trace", "version": 1,
                "graph": {"name": self.name, "width": 1, "batch_size": self.batch, "tensors": self.tensors,
                          "ops": self.ops}}


def write_reference(model, gm, doc, shape, path):
    """PyTorch's step on the exported weights: loss and gradients (float64 lists, flattened)."""
    torch.manual_seed(1)
    model.train()  # as exported (export_graph leaves the module in the mode it was given)
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    x = torch.randn(*shape)
    classes = doc["graph"]["tensors"][doc["graph"]["ops"][-1]["inputs"][0]]["shape"][1]
    labels = torch.randint(0, classes, (shape[0],))
    model.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    params = dict(model.named_parameters())
    flat = lambda t: [float(f"{v:.9g}") for v in t.detach().double().reshape(-1).tolist()]  # fp32 exactly
    ref = {"inputs": {placeholders[0]: flat(x), "labels": [int(v) for v in labels]},
           "weights": {name: flat(p) for name, p in params.items()},
           "loss": float(loss),
           "grads": {name: flat(p.grad) for name, p in params.items()}}
    with open(path, "w") as f:
        json.dump(ref, f)
    print(f"{path}: loss {float(loss):.6f}, {len(params)} parameters' gradients")


def export_graph(model, example_input, name):
    """The mutwo forward graph (the exported-model document) of `model` on `example_input` (one
    tensor, batch first), and the traced GraphModule. Raises Unsupported naming the first node mutwo
    has no kind for (or what torch_trace.traced refuses); Error when the model cannot run on
    `example_input`. The module's train and eval modes are left as they were."""
    gm = traced(model, example_input)
    return gm, Exporter(gm, name, int(example_input.shape[0])).run()

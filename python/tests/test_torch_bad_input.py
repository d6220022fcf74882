"""mutwo.from_torch on modules and arguments it cannot export faithfully: each is refused naming the
cause (never a graph silently sized or wired wrongly, never torch's own error or stderr output), and
the caller's module is left as it was given."""
import threading

import pytest

import mutwo

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


def linear_10():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 10))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_a_model_not_in_fp32_is_refused_not_recorded_as_fp32(dtype):
    # An fp16 Linear(64, 10) was written as fp32: 2600 parameter bytes for its 1300.
    with pytest.raises(mutwo.UnsupportedModelError,
                       match=rf"parameter '0.weight' is {dtype}; mutwo exports the fp32 model .* precision="):
        mutwo.from_torch(linear_10().to(dtype), torch.randn(8, 64).to(dtype))
    with pytest.raises(mutwo.UnsupportedModelError, match=f"example_inputs are {dtype}; mutwo exports"):
        mutwo.from_torch(linear_10(), torch.randn(8, 64).to(dtype))
    # 650 parameters x 4 bytes in fp32; mutwo's own precision halves them.
    m = mutwo.from_torch(linear_10(), torch.randn(8, 64))
    assert mutwo.trace(m).parameter_bytes == 2600
    assert mutwo.trace(m, precision="bf16").parameter_bytes == 1300


class Scaled(nn.Module):
    def __init__(self, buffer_dtype=torch.float32):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.register_buffer("scale", torch.ones(1, dtype=buffer_dtype))

    def forward(self, x):
        return self.fc(x)


class MeanInFp64(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return torch.mean(self.conv(x), [2, 3], dtype=torch.float64)


def test_a_buffer_or_a_traced_tensor_not_in_fp32_is_refused():
    with pytest.raises(mutwo.UnsupportedModelError, match="buffer 'scale' is torch.float64"):
        mutwo.from_torch(Scaled(torch.float64), torch.randn(2, 8))
    # An integer buffer (batch norm's num_batches_tracked) is no activation: accepted.
    assert mutwo.from_torch(Scaled(torch.int64), torch.randn(2, 8)).parameters == 36
    with pytest.raises(mutwo.UnsupportedModelError, match="node 'mean' computes torch.float64"):
        mutwo.from_torch(MeanInFp64(), torch.randn(2, 3, 8, 8))


def test_integer_token_ids_are_not_refused_as_a_dtype():
    # Token ids are int64 inputs: the export stops at the embedding mutwo has no kind for, not at the dtype.
    net = nn.Sequential(nn.Embedding(100, 8), nn.Flatten(), nn.Linear(32, 3))
    with pytest.raises(mutwo.UnsupportedModelError, match="module '0' \\(Embedding\\) has no mutwo op kind"):
        mutwo.from_torch(net, torch.randint(0, 100, (2, 4)))


class TwoBranches(nn.Module):
    def __init__(self, how):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b, self.how = nn.Linear(8, 4), nn.Linear(8, 4), how

    def forward(self, x):
        y = self.a(x)
        if self.how == "add_":
            y.add_(self.b(x))
            return y
        if self.how == "relu_":
            F.relu(y, inplace=True)
            return y
        if self.how == "relu":
            return F.relu(y)
        if self.how == "alpha":
            return torch.add(y, self.b(x), alpha=5)
        return y + self.b(x)


def step(module):
    m = mutwo.from_torch(module, torch.randn(2, 8), name=module.how)
    return len(mutwo.trace(m)), mutwo.simulate(m).step_time_ns


def test_an_in_place_op_is_read_by_the_ops_after_it():
    # y.add_(b(x)); return y: the loss read y from before the add, so branch b had no backward
    # (8 ops, where a + b has 11).
    assert step(TwoBranches("add_")) == step(TwoBranches("+"))
    assert step(TwoBranches("relu_")) == step(TwoBranches("relu"))
    assert step(TwoBranches("+"))[0] == 11


def test_an_add_with_alpha_or_a_flatten_short_of_the_last_dim_is_refused():
    # a + 5 * b was written as a + b.
    with pytest.raises(mutwo.UnsupportedModelError, match="add 'add' with alpha = 5: mutwo's add is a \\+ b"):
        mutwo.from_torch(TwoBranches("alpha"), torch.randn(2, 8))

    class FlattenCH(nn.Module):
        def forward(self, x):
            return torch.flatten(x, 1, 2).sum(-1)

    with pytest.raises(mutwo.UnsupportedModelError, match="flatten 'flatten' of \\[2, 3, 4, 4\\] from dim 1 to 2"):
        mutwo.from_torch(FlattenCH(), torch.randn(2, 3, 4, 4))


def conv_net(width):
    torch.manual_seed(width)
    return nn.Sequential(nn.Conv2d(3, width, 3), nn.BatchNorm2d(width), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(width, 3))


def test_exports_from_several_threads_equal_serial_ones():
    # torch.fx patches torch process-wide while it traces: threads tracing at once failed with
    # "ShapeProp error" or "module is not installed as a submodule".
    widths = [4, 5, 6, 7]
    serial = [mutwo.from_torch(conv_net(w), torch.randn(2, 3, 16, 16), name=f"w{w}").path for w in widths]
    start, paths, errors = threading.Barrier(len(widths)), {}, []

    def export(w):
        start.wait()
        try:
            for _ in range(20):
                paths[w] = mutwo.from_torch(conv_net(w), torch.randn(2, 3, 16, 16), name=f"w{w}").path
        except Exception as e:  # reported below, with the others
            errors.append(repr(e))

    threads = [threading.Thread(target=export, args=(w,)) for w in widths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [paths[w] for w in widths] == serial


class ValueDependent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x) if x.sum() > 0 else self.fc(-x)


def test_torchs_errors_are_mutwo_errors_naming_the_cause(capsys):
    with pytest.raises(mutwo.UnsupportedModelError, match="torch.fx cannot trace the model: TraceError: "
                       "symbolically traced variables cannot be used as inputs to control flow") as e:
        mutwo.from_torch(ValueDependent(), torch.randn(2, 8))
    assert isinstance(e.value.__cause__, torch.fx.proxy.TraceError)
    # A wrong input shape raised "ShapeProp error" and printed two tracebacks (meta, then CPU).
    with pytest.raises(mutwo.Error, match=r"example_inputs of shape \[2, 9\] do not run through the model: node "
                       r"'_0' raised RuntimeError: mat1 and mat2 shapes cannot be multiplied \(2x9 and 8x4\)"):
        mutwo.from_torch(nn.Sequential(nn.Linear(8, 4)), torch.randn(2, 9))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name, message", [
    ("a\0b", r"name = 'a\\x00b': a model name, without a NUL character"),  # a bare "embedded null byte"
    ("a" * 300, r"name = 'aaaaaaaaaaaaaaaaaaaa'... \(300 characters\): a model name of at most 200 bytes"),  # OSError
    ("", "name = '': give a model name"),
    (3, "name = 3: give a model name"),
])
def test_a_model_name_that_cannot_name_a_file_is_refused(name, message):
    with pytest.raises(ValueError, match=message):
        mutwo.from_torch(nn.Sequential(nn.Linear(8, 4)), torch.randn(2, 8), name=name)
    assert mutwo.from_torch(nn.Sequential(nn.Linear(8, 4)), torch.randn(2, 8), name="é" * 100).name == "é" * 100


def test_the_callers_module_keeps_its_modes():
    # An eval() module came back in train mode. The export still traces it as it trains (with its dropout).
    net = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5), nn.Linear(8, 3)).eval()
    net[2].train()  # each submodule keeps its own
    m = mutwo.from_torch(net, torch.randn(2, 8))
    assert [mod.training for mod in net.modules()] == [False, False, False, True]
    assert "dropout" in [op["kind"] for op in mutwo.trace(m).ops()]
    net = ValueDependent().eval()
    with pytest.raises(mutwo.UnsupportedModelError):
        mutwo.from_torch(net, torch.randn(2, 8))
    assert not net.training and not net.fc.training  # restored when the export fails too


def test_shapes_on_real_tensors_leave_the_batch_norm_statistics(monkeypatch):
    # Where the meta device fails, shapes are propagated on the module itself, in train mode: its
    # running statistics moved towards the example batch's.
    from mutwo import torch_trace

    def no_meta_twin(gm):
        raise NotImplementedError("no meta kernel")

    monkeypatch.setattr(torch_trace, "meta_twin", no_meta_twin)
    net = conv_net(4)
    before = {name: b.clone() for name, b in net.named_buffers()}
    mutwo.from_torch(net, torch.randn(2, 3, 16, 16) + 5)
    assert all(torch.equal(b, before[name]) for name, b in net.named_buffers())
    assert int(net[1].num_batches_tracked) == 0

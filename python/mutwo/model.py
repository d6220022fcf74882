"""A user's model for mutwo: a torch.nn.Module exported as mutwo's forward graph (torch_import.py),
written to a file that mutwo's C++ reads wherever a zoo name goes (zoo/exported_model.hpp)."""
import atexit
import hashlib
import json
import os
import shutil
import tempfile

_folder = None


def _model_folder():
    """A folder of this process for exported models, removed at exit."""
    global _folder
    if _folder is None:
        _folder = tempfile.mkdtemp(prefix="mutwo-models-")
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


class Model:
    """An exported model: its graph file (`path`), name, PyTorch's parameter count, and the batch it
    was traced at. Pass it wherever a model name goes; m.times(k) is k copies for search()."""

    def __init__(self, path, name, parameters, batch_size):
        self.path = path
        self.name = name
        self.parameters = parameters
        self.batch_size = batch_size
        self._copies = 1

    def times(self, copies):
        """This model `copies` times, for search's model array (as "model:copies")."""
        if not isinstance(copies, int) or isinstance(copies, bool) or copies < 1:
            raise ValueError(f"copies = {copies!r}: a whole number >= 1")
        m = Model(self.path, self.name, self.parameters, self.batch_size)
        m._copies = copies
        return m

    def spec(self):
        return f"{self.path}:{self._copies}"

    def save(self, path):
        """Writes the graph file (what `mutwo --model FILE` takes) to `path`."""
        shutil.copyfile(self.path, path)

    def __repr__(self):
        return f"<mutwo.Model '{self.name}': {self.parameters:,} parameters, batch {self.batch_size}>"


# The name goes into a file name "<name>-<16 hex digits>.json", which most file systems cap at 255 bytes.
MAX_NAME_BYTES = 200


def check_name(name):
    """A model name usable as part of a file name in the model folder: "../x" wrote outside it, a NUL
    raised a bare ValueError and 300 characters a bare OSError."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name = {name!r}: give a model name (a non-empty str)")
    if os.sep in name or (os.altsep and os.altsep in name):
        raise ValueError(f"name = {name!r}: a model name, without a path separator")
    if "\0" in name:
        raise ValueError(f"name = {name!r}: a model name, without a NUL character")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ValueError(f"name = {name[:20]!r}... ({len(name)} characters): a model name of at most "
                         f"{MAX_NAME_BYTES} bytes")


def from_torch(module, example_inputs, loss="cross_entropy", name=None):
    """`module` traced with torch.fx on `example_inputs` (a tensor, batch first; or a 1-tuple of
    one), its shapes propagated and every node mapped to a mutwo op kind, with `loss` appended over
    its [batch, classes] output. Raises mutwo.UnsupportedModelError naming the first node mutwo has
    no kind for, or the parameter or tensor that is not fp32, or the cause when torch.fx cannot
    trace the module; mutwo.Error naming the node where the module fails on `example_inputs`. The
    module is left as it was (its train or eval mode). Safe to call from several threads (the
    exports run one at a time). Returns a Model whose parameter count is PyTorch's."""
    import torch  # only here: `import mutwo` does not need torch

    from .torch_import import UnsupportedModelError, export_graph

    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module = {module!r}: give a torch.nn.Module")
    if loss != "cross_entropy":
        raise UnsupportedModelError(f"loss '{loss}': mutwo appends cross_entropy (valid: cross_entropy)")
    if isinstance(example_inputs, (tuple, list)):
        if len(example_inputs) != 1:
            raise UnsupportedModelError(f"example_inputs: one input tensor, not {len(example_inputs)}")
        example_inputs = example_inputs[0]
    if not isinstance(example_inputs, torch.Tensor) or example_inputs.dim() < 1 or example_inputs.shape[0] < 1:
        raise UnsupportedModelError("example_inputs: a tensor with the batch first (at least one sample)")
    if name is not None:
        check_name(name)
    name = name or type(module).__name__.lower()
    _, doc = export_graph(module, example_inputs, name)
    text = json.dumps(doc, indent=1) + "\n"
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    path = os.path.join(_model_folder(), f"{name}-{digest}.json")
    if not os.path.exists(path):
        # A temporary file of its own: two threads exporting the same model shared "path.tmp", and
        # the second os.replace found it gone.
        fd, tmp = tempfile.mkstemp(dir=_model_folder(), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    parameters = sum(p.numel() for p in module.parameters())
    return Model(path, name, parameters, int(example_inputs.shape[0]))

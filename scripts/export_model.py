#!/usr/bin/python3
"""Export a PyTorch model as a mutwo forward graph: any model mutwo's --model then takes.

    /usr/bin/python3 scripts/export_model.py MODULE:FACTORY --input-shape 8,3,32,32 -o my_model.json
    mutwo simulate --model my_model.json --models 4 --partition 2,2
    mutwo search --model my_model.json:8

MODULE is an importable module or a .py file, FACTORY a callable in it returning an nn.Module
(e.g. torchvision.models:resnet18), traced on a random input of --input-shape. A thin wrapper over
the Python module's exporter (python/mutwo/torch_import.py, `mutwo.from_torch`), which has the
rules; it needs the built module (`PYTHONPATH=build/python`, or MUTWO_PYTHONPATH).
"""
import argparse
import importlib
import importlib.util
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, os.environ.get("MUTWO_PYTHONPATH", str(ROOT / "build" / "python")))

import torch  # noqa: E402

import mutwo  # noqa: E402
from mutwo.torch_import import export_graph, write_reference  # noqa: E402


def load_factory(spec):
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise SystemExit(f"error: factory '{spec}' must be MODULE:CALLABLE (e.g. torchvision.models:resnet18)")
    if module_name.endswith(".py"):
        loader = importlib.util.spec_from_file_location("exported_model_source", module_name)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, attr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("factory", help="MODULE:CALLABLE or FILE.py:CALLABLE returning an nn.Module")
    parser.add_argument("--input-shape", required=True, help="comma-separated, batch first (e.g. 8,3,32,32)")
    parser.add_argument("--name", help="the graph's name (default: the callable's)")
    parser.add_argument("-o", "--output", required=True, help="the mutwo forward graph to write (.json)")
    parser.add_argument("--reference", help="also write PyTorch's own training step of the model (its "
                        "initial weights, a seeded batch, the loss and every weight's gradient) to this JSON "
                        "file, for checking mutwo's numerics against PyTorch autograd")
    args = parser.parse_args()
    shape = [int(d) for d in args.input_shape.split(",")]
    torch.manual_seed(0)
    model = load_factory(args.factory)()
    try:
        gm, doc = export_graph(model, torch.randn(*shape), args.name or args.factory.rpartition(":")[2])
    except mutwo.Error as e:
        raise SystemExit(f"error: {e}")
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    if args.reference:
        write_reference(model, gm, doc, shape, args.reference)
    print(f"{args.output}: {len(doc['graph']['ops'])} ops, {len(doc['graph']['tensors'])} tensors "
          f"(torch {torch.__version__})")


if __name__ == "__main__":
    main()

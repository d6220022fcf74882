#!/usr/bin/python3
"""Training-step pairs for mutwo's execution-trace import (io/execution_trace.hpp): for each
model, one training step recorded by PyTorch's execution trace observer (ExecutionGraphObserver in
PyTorch 1.13, ExecutionTraceObserver in 2.x) and, around the same step, by the profiler (Kineto, or
the legacy profiler's event array where PyTorch was built without Kineto, as Debian's 1.13 is).

Run with Debian's python3-torch and python3-torchvision (CPU):
    /usr/bin/python3 scripts/make-execution-traces.py tests/fixtures/execution_trace \
        resnet50 mobilenet_v2 mobilenet_v3_large vit_b_16
Writes OUT_DIR/<model>_et.json.gz and OUT_DIR/<model>_profile.json.gz. The step recorded is the
second (the first creates Adam's state), seeded, batch and shapes as below.
"""
import gzip
import json
import os
import shutil
import sys

import torch
import torch.nn as nn
from torch import profiler

Observer = getattr(profiler, "ExecutionTraceObserver", None) or profiler.ExecutionGraphObserver


def mlp():
    # 8 -> 16 -> 4, batch 4: weights 16x8 and 4x16, biases 16 and 4 (fp32).
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)), torch.randn(4, 8), torch.randint(0, 4, (4,))


def cnn():
    # conv 3->8 3x3, batch norm, relu, max pool, linear 8*4*4 -> 10; batch 2 of 3x8x8 images.
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8 * 4 * 4, 10))
    return model, torch.randn(2, 3, 8, 8), torch.randint(0, 10, (2,))


def resnet18():
    # torchvision's resnet18 (the zoo's resnet18), batch 2 of 224x224 images, 1000 classes.
    import torchvision
    return torchvision.models.resnet18(), torch.randn(2, 3, 224, 224), torch.randint(0, 1000, (2,))


def torchvision_model(name):
    # torchvision's <name> (the zoo's model of that name), batch 2 of 224x224 images, 1000 classes.
    def make():
        import torchvision
        return getattr(torchvision.models, name)(), torch.randn(2, 3, 224, 224), torch.randint(0, 1000, (2,))
    return make


def record(name, make, out_dir):
    torch.manual_seed(0)
    model, x, y = make()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    step()
    et_path = os.path.join(out_dir, f"{name}_et.json")
    prof_path = os.path.join(out_dir, f"{name}_profile.json")
    observer = Observer()
    observer.register_callback(et_path)
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        observer.start()
        step()
        observer.stop()
    observer.unregister_callback()
    prof.export_chrome_trace(prof_path)
    for path in (et_path, prof_path):
        with open(path, "rb") as src, gzip.GzipFile(path + ".gz", "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(path)
    print(f"{name}: {et_path}.gz, {prof_path}.gz (torch {torch.__version__})")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    record("mlp", mlp, out)
    record("cnn", cnn, out)
    record("resnet18", resnet18, out)  # needs python3-torchvision
    for name in sys.argv[2:]:  # more torchvision models, e.g. resnet50 mobilenet_v2 vit_b_16
        record(name, torchvision_model(name), out)

#!/usr/bin/env python3
"""Writes the torch.profiler fixture traces that tests/test_kineto_import.cpp replays.

Profiles small training steps (forward, backward, optimizer step) on the CPU with
torch.profiler (record_shapes=True, profile_memory=True, with_stack=False) and writes each
profile's Chrome trace (prof.export_chrome_trace) into tests/fixtures/kineto/:

  cpu_mlp_sgd_<kind>.json    MLP 16-32-4, batch 8, cross entropy, SGD (momentum 0.9)
  cpu_cnn_adam_<kind>.json   conv3x3(1->4)-relu-maxpool-linear(64->10), batch 4, 8x8 images,
                             cross entropy, Adam

each run for 4 steps under a profiler schedule (1 warm-up step, 3 traced: ProfilerStep#0..#2)

<kind> is "kineto" when this torch has Kineto (torch.autograd.kineto_available()); traces over
64 KiB are gzipped (.json.gz). Debian's python3-torch 1.13 is built without Kineto: there
torch.profiler falls back to the legacy autograd profiler, and export_chrome_trace writes <kind>
"legacy": a bare JSON array of {"name", "ph": "X", "ts", "dur" (whole microseconds), "tid",
"pid": "CPU functions", "args": {}} events (plus "ph": "s" flow starts for CUDA kernels) and
nothing else: no categories, no "Input Dims", no "Sequence number", no [memory] events, even
though the profiler recorded shapes and memory. The importer handles both.

The fixtures are committed; the tests do not need torch. Regenerate with
  sudo apt-get install -y python3-torch      # or any PyTorch
  /usr/bin/python3 scripts/make-kineto-fixtures.py [out_dir]
Timings differ on every run, so regenerating changes the values the tests assert.
"""
import gzip
import os
import shutil
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

STEPS = 4
GZIP_OVER_BYTES = 64 * 1024


def mlp_sgd():
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(8, 16)
    y = torch.randint(0, 4, (8,))
    return model, opt, x, y


def cnn_adam():
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(4, 1, 8, 8)
    y = torch.randint(0, 10, (4,))
    return model, opt, x, y


def profile_training(build, path_stem):
    torch.manual_seed(0)
    model, opt, x, y = build()
    kind = "kineto" if torch.autograd.kineto_available() else "legacy"
    path = f"{path_stem}_{kind}.json"
    # With a schedule torch.profiler wraps every step in a "ProfilerStep#N" record_function, as
    # users' training loops do; step 0 is warm-up (not recorded), steps 1..STEPS-1 are traced.
    sched = schedule(wait=0, warmup=1, active=STEPS - 1, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, record_shapes=True,
                 profile_memory=True, with_stack=False,
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(STEPS):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    if os.path.getsize(path) > GZIP_OVER_BYTES:
        with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(path)
        path += ".gz"
    print(f"{path}: torch {torch.__version__}, {kind} trace")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "fixtures", "kineto")
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)  # one intra-op thread: a smaller, steadier trace
    profile_training(mlp_sgd, os.path.join(out_dir, "cpu_mlp_sgd"))
    profile_training(cnn_adam, os.path.join(out_dir, "cpu_cnn_adam"))


if __name__ == "__main__":
    main()

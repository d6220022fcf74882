#!/usr/bin/env python3
"""Times a sample of NeuSight's operator shapes on this machine's GPU with NeuSight's own harness, and
writes them as NeuSight CSVs (issue 36, item 5): the rows `mutwo calibrate --waves --leave-one-out`
reads beside tests/fixtures/calibration/neusight/, to check the cross-GPU kernel model on a GPU it
was never fitted on (this sample is never fitted: it is validation data).

The shapes are a seeded sample of the A100 file of each op (linear, bmm, ln, softmax, conv, add, gelu;
conv's from the A100 80GB PCIe, the one A100 NeuSight timed convolutions on), so every row also has an
A100 time of the same shape. The harness is NeuSight's collection script's
(costmodel/neusight_csv.hpp): fp32, TF32 off, cudnn.benchmark on; each op called from Python as
`start.record(); out = op(*inputs); end.record(); torch.cuda.synchronize()` 25 times, Latency the
mean of the 5 fastest, in milliseconds. A few untimed calls come first (NeuSight's warm-up).

  python3 scripts/kernel-sample.py --per-op 60 -o OUT_DIR   (writes OUT_DIR/<op>/<Device>.csv)

With --fusion-output DIR it also times horizontal fusion directly (issue 32, item 4): the same product
(M, N, K) as one batched kernel of B = 1, 2, 4 ... 64 products, by the same harness, written as
DIR/bmm/<Device>.csv (NeuSight's bmm columns). NeuSight never timed one product at two batch sizes;
these rows pair exactly (`mutwo calibrate --waves --leave-one-out ... DIR` pairs them with the
others). The shapes are per-model linears of the zoo at mu-TWO's batch sizes: BERT-base's at batch 16,
sequence 128 (2,048 tokens) and smaller models' (tokens x width).

Works with PyTorch 1.13 (Debian, on the CPU: wall-clock, a dry run) and 2.x.
"""
import argparse
import csv
import gzip
import os
import random
import statistics
import sys
import time

import torch
import torch.nn as nn

OPS = {"linear": ["B", "M", "N", "K"], "bmm": ["B", "M", "N", "K"], "ln": ["B", "H"], "softmax": ["B", "H"],
       "conv": ["B", "Input_Channel", "Output_Channel", "Kernel_Szie", "Input_Size", "Stride", "Padding"],
       "add": ["B", "H"], "gelu": ["B", "H"]}
SOURCE_FILE = "NVIDIA_A100-PCIE-40GB.csv.gz"
SOURCE_FILES = {"conv": "NVIDIA_A100_80GB_PCIe.csv.gz"}  # NeuSight timed its convolutions on this A100
CALLS, FASTEST, WARMUP = 25, 5, 3
# (M, N, K), N the reduction: BERT-base's attention projection and its MLP's two linears at 2,048
# tokens, then narrower models' linears (tokens x width), where one model leaves the GPU idle.
FUSION_SHAPES = [(2048, 768, 768), (2048, 768, 3072), (2048, 3072, 768), (512, 256, 1024),
                 (256, 512, 512), (128, 1024, 1024), (64, 768, 768), (1024, 128, 128)]
FUSION_COUNTS = [1, 2, 4, 8, 16, 32, 64]


def read_shapes(folder, op):
    with gzip.open(os.path.join(folder, op, SOURCE_FILES.get(op, SOURCE_FILE)), "rt") as f:
        return [(tuple(int(r[c]) for c in OPS[op]), float(r["Latency"])) for r in csv.DictReader(f)]


def build(op, dims, dev):
    """The op as NeuSight's script builds it (neusight_csv.hpp): N is the GEMMs' reduction."""
    if op == "linear":
        _, m, n, k = dims
        layer = nn.Linear(n, k).to(dev)
        x = torch.randn(m, n, device=dev)
        return lambda: layer(x)
    if op == "bmm":
        b, m, n, k = dims
        x, y = torch.randn(b, m, n, device=dev), torch.randn(b, n, k, device=dev)
        return lambda: torch.bmm(x, y)
    if op == "conv":
        b, c, k, r, h, stride, padding = dims
        layer = nn.Conv2d(c, k, r, stride=stride, padding=padding, bias=False).to(dev)
        x = torch.randn(b, c, h, h, device=dev)
        return lambda: layer(x)
    b, h = dims
    if op == "add":
        x, y = torch.randn(b, h, device=dev), torch.randn(b, h, device=dev)
        return lambda: torch.add(x, y)
    if op == "gelu":
        x = torch.randn(b, h, device=dev)
        return lambda: torch.nn.functional.gelu(x)
    layer = (nn.LayerNorm(h) if op == "ln" else nn.Softmax(dim=-1)).to(dev)
    x = torch.randn(b, h, device=dev)
    return lambda: layer(x)


def conv_gflop(dims):
    b, c, k, r, h, stride, padding = dims
    out = (h + 2 * padding - r) // stride + 1
    return 2e-9 * b * k * c * r * r * out * out


def time_op(call, cuda):
    with torch.no_grad():
        for _ in range(WARMUP):
            call()
        times = []
        for _ in range(CALLS):
            if cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                call()
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                call()
                times.append((time.perf_counter() - t0) * 1e3)
    return statistics.mean(sorted(times)[:FASTEST])


def write_rows(folder, device, rows):
    """Writes rows as folder/<device>.csv (NeuSight's file naming); returns the path."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, device.replace(" ", "_") + ".csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--neusight", default="tests/fixtures/calibration/neusight")
    ap.add_argument("--per-op", type=int, default=60, help="shapes sampled per op")
    ap.add_argument("--max-gflop", type=float, default=200.0, help="skip GEMMs larger than this (CPU dry runs)")
    ap.add_argument("--max-elements", type=float, default=float("inf"),
                    help="skip norms, softmaxes and elementwise ops over more elements (B x H) than this (CPU dry "
                         "runs: NeuSight's softmaxes reach 10^8 elements, 13 of the mini lease's 19 s on 2 cores)")
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("-o", "--output", required=True, help="folder: <op>/<Device>.csv are written here")
    ap.add_argument("--fusion-output", help="folder: bmm/<Device>.csv, each fusion shape at every B")
    args = ap.parse_args()
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    name = torch.cuda.get_device_name(dev) if cuda else "cpu"
    versions = {"Torch Version": "p" + torch.__version__.split("+")[0],
                "CUDA Version": f"cu{(torch.version.cuda or '').replace('.', '')}"}
    rng = random.Random(args.seed)
    total = 0
    for op, dims in OPS.items():
        shapes = read_shapes(args.neusight, op)
        if op in ("linear", "bmm"):
            shapes = [s for s in shapes if 2e-9 * s[0][0] * s[0][1] * s[0][2] * s[0][3] <= args.max_gflop]
        if op == "conv":
            shapes = [s for s in shapes if conv_gflop(s[0]) <= args.max_gflop]
        if len(dims) == 2:  # B x H: the memory-bound ops
            shapes = [s for s in shapes if s[0][0] * s[0][1] <= args.max_elements]
        sample = rng.sample(shapes, min(args.per_op, len(shapes)))
        rows = []
        for shape, a100_ms in sample:
            latency = time_op(build(op, shape, dev), cuda)
            rows.append({"OPName": op, "Latency": f"{latency:.6g}", "Device": name, **versions,
                         **dict(zip(dims, shape)), "A100 Latency": f"{a100_ms:.6g}"})
        path = write_rows(os.path.join(args.output, op), name, rows)
        total += len(rows)
        print(f"kernel-sample: {op}: {len(rows)} shapes -> {path}", flush=True)
    print(f"kernel-sample: {total} rows on {name}, torch {torch.__version__}")
    if args.fusion_output:
        rows = []
        for m, n, k in FUSION_SHAPES:
            for b in FUSION_COUNTS:
                if 2e-9 * b * m * n * k > args.max_gflop:
                    continue
                latency = time_op(build("bmm", (b, m, n, k), dev), cuda)
                rows.append({"OPName": "bmm", "Latency": f"{latency:.6g}", "Device": name, **versions,
                             "B": b, "M": m, "N": n, "K": k})
        path = write_rows(os.path.join(args.fusion_output, "bmm"), name, rows)
        print(f"kernel-sample: fusion: {len(rows)} batched products -> {path}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

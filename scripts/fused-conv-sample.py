#!/usr/bin/env python3
"""Times HFTA's fused convolution on this machine's GPU: resnet18's convolution shapes with k models
fused (input k*C channels, weight [k*K, C, R, S], groups k), forward and backward (dX and dW), with
cuDNN's autotuner off (PyTorch's default, as mutwo's executor runs) and on. The wave and calibrated
sources price a fused convolution as its k models' kernels one after another
(costmodel/calibrated_cost_model.hpp; a fused 1x1 one as the batched GEMMs below), read off the H200 lease at k = 2 and 4 with the autotuner off;
these rows say whether that holds at k = 1 ... 8, with the autotuner, and on other GPUs. Validation
data: never fitted.

A fused 1x1 convolution (no padding) is also timed as mutwo's executor now runs it, one batched GEMM
per pass (exec/pointwise_conv.hpp: y = W x per image and model; dX = W^T dY; dW = the sum over the
images of dY x^T), as the passes "forward (batched GEMM)" and "forward+backward (batched GEMM)", under
cuDNN's TF32 flag as the executor runs them (exec/tf32_guard.hpp): the lease measures whether it beats
cuDNN's grouped algorithms (25x slower than the models' own kernels for MobileNet-V2's 112x112
expansion on the H100), and how close the cost sources' price of those GEMMs comes
(costmodel/pointwise_conv_kernels.hpp).

Each pass is timed as a whole on the device (CUDA events around REPEAT back-to-back calls after
warm-up, the median of TRIALS), in microseconds per call.

  python3 scripts/fused-conv-sample.py -o OUT.csv [--batch 32] [--counts 1,2,4,8] [--device cuda]

Works with PyTorch 1.13 (Debian, on the CPU: wall-clock, a dry run with --quick) and 2.x.
"""
import argparse
import csv
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from device_timing import time_call  # noqa: E402

# resnet18's convolutions at 224x224: (name, C, K, R, stride, padding, input side).
SHAPES = [("conv1", 3, 64, 7, 2, 3, 224), ("layer1", 64, 64, 3, 1, 1, 56), ("layer2.0.conv1", 64, 128, 3, 2, 1, 56),
          ("layer2", 128, 128, 3, 1, 1, 28), ("layer2.0.downsample", 64, 128, 1, 2, 0, 56),
          ("layer3", 256, 256, 3, 1, 1, 14), ("layer4", 512, 512, 3, 1, 1, 7),
          ("mobilenet_v2.features.1.expand", 16, 96, 1, 1, 0, 112)]  # MobileNet-V2's first pointwise expansion
FIELDS = ["device", "torch", "cudnn", "shape", "batch", "k", "benchmark", "tf32", "pass", "us_per_call"]


def passes(batch, k, c, kout, r, stride, padding, side, dev):
    x = torch.randn(batch, k * c, side, side, device=dev, requires_grad=True)
    w = torch.randn(k * kout, c, r, r, device=dev, requires_grad=True)
    y = F.conv2d(x, w, stride=stride, padding=padding, groups=k)
    dy = torch.randn_like(y)

    def forward():
        with torch.no_grad():
            F.conv2d(x, w, stride=stride, padding=padding, groups=k)

    def backward():
        out = F.conv2d(x, w, stride=stride, padding=padding, groups=k)
        torch.autograd.grad(out, (x, w), dy)

    out = {"forward": forward, "forward+backward": backward}
    if r == 1 and padding == 0 and k > 1:
        out.update(gemm_passes(x, w, dy, k, stride))
    return out


def gemm_passes(x, w, dy, k, stride):
    """The same 1x1 convolution as exec/pointwise_conv.cpp runs it: batched GEMMs over images x models."""
    xs = x.detach()[:, :, ::stride, ::stride]
    n, _, h, wd = xs.shape
    x4 = xs.reshape(n, k, -1, h * wd)                    # [N, k, C, HW] (a copy when strided)
    w4 = w.detach().reshape(1, k, w.shape[0] // k, -1)  # [1, k, K, C]
    dy4 = dy.reshape(n, k, -1, h * wd)                   # [N, k, K, HW]

    def forward():
        torch.matmul(w4, x4)

    def backward():
        torch.matmul(w4, x4)
        torch.matmul(w4.transpose(-1, -2), dy4)              # dX (strided: scattered into zeros, left out)
        torch.matmul(dy4, x4.transpose(-1, -2)).sum(0)       # dW

    return {"forward (batched GEMM)": forward, "forward+backward (batched GEMM)": backward}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--counts", default="1,2,4,8")
    p.add_argument("--quick", action="store_true", help="a dry run: batch 1, one trial, two shapes at 1/4 size")
    args = p.parse_args()
    cuda = args.device.startswith("cuda")
    counts = [int(c) for c in args.counts.split(",")]
    shapes, batch, repeat, trials, warmup = SHAPES, args.batch, 5, 5, 3
    if args.quick:
        shapes = [(n, c, k, r, s, pad, side // 4) for n, c, k, r, s, pad, side in SHAPES[1:3] + SHAPES[4:5]]
        batch, repeat, trials, warmup = 1, 1, 1, 1
    name = torch.cuda.get_device_name() if cuda else "cpu"
    cudnn = torch.backends.cudnn.version() if cuda else "-"
    # The batched-GEMM passes run in the convolution's math, as exec/pointwise_conv.cpp does: cuBLAS
    # under cuDNN's TF32 flag (PyTorch's defaults: cuDNN on, cuBLAS off).
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32
    rows = []
    for benchmark in (False, True):
        torch.backends.cudnn.benchmark = benchmark
        for shape in shapes:
            label, c, kout, r, stride, padding, side = shape
            for k in counts:
                for pass_name, call in passes(batch, k, c, kout, r, stride, padding, side, args.device).items():
                    us = time_call(call, cuda, repeat, trials, warmup)
                    rows.append({"device": name, "torch": torch.__version__, "cudnn": cudnn, "shape": label,
                                 "batch": batch, "k": k, "benchmark": int(benchmark),
                                 "tf32": int(torch.backends.cudnn.allow_tf32), "pass": pass_name,
                                 "us_per_call": f"{us:.2f}"})
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"fused-conv-sample: {len(rows)} rows -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()

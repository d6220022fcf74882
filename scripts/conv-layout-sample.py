#!/usr/bin/env python3
"""Times ResNet-50's convolutions on this machine's GPU in both memory layouts, with cuDNN's autotuner
off and on: each pass (forward, data gradient, weight gradient) alone, as calibration rows that
`mutwo calibrate --waves --score` prices (costmodel/calibration_csv.hpp). Validation data: never fitted.

Why: the published ResNet-50 mixed-precision runs (docs/FIDELITY.md, End to end) trained channels-last
with the autotuner on, and mutwo prices them 28-31 % too slow; the H200 lease's bench-ops rows (NCHW,
autotuner off) it prices 22-48 % too fast in fp16 and bf16. The wave model's tensor-core convolution
groups were fitted on DeepBench's NCHW kernels with forced algorithms. These rows say how far layout and
algorithm choice move the same convolutions on one GPU, and which of them the model prices.

One file per layout and autotuner setting, OUT/<layout>-<autotuner>.csv (nchw-default, nchw-benchmark,
nhwc-default, nhwc-benchmark). Each row's time is the device time per call (CUDA events around REPEAT
back-to-back calls after warm-up, the median of TRIALS; timing `kernel`): the layout work cuDNN does
inside a call is in it.

  python3 scripts/conv-layout-sample.py -o OUT [--batch 64] [--precision fp16] [--device cuda] [--gpu NAME]

--gpu is the catalog name written in the rows (costmodel/devices/*.toml); on the lent machines it is
read off the device's name. Works with PyTorch 1.13 (Debian, on the CPU: wall-clock, a dry run with
--quick) and 2.x.
"""
import argparse
import csv
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from device_timing import time_call  # noqa: E402

# torchvision's ResNet-50 (v1.5: the stride in the 3x3 convolution) at 224x224, each distinct
# convolution once: (name, C, K, R, stride, padding, input side).
SHAPES = [("conv1", 3, 64, 7, 2, 3, 224),
          ("layer1.conv1", 64, 64, 1, 1, 0, 56), ("layer1.conv2", 64, 64, 3, 1, 1, 56),
          ("layer1.conv3", 64, 256, 1, 1, 0, 56), ("layer1.1.conv1", 256, 64, 1, 1, 0, 56),
          ("layer2.0.conv1", 256, 128, 1, 1, 0, 56), ("layer2.0.conv2", 128, 128, 3, 2, 1, 56),
          ("layer2.conv3", 128, 512, 1, 1, 0, 28), ("layer2.0.downsample", 256, 512, 1, 2, 0, 56),
          ("layer2.1.conv1", 512, 128, 1, 1, 0, 28), ("layer2.1.conv2", 128, 128, 3, 1, 1, 28),
          ("layer3.0.conv1", 512, 256, 1, 1, 0, 28), ("layer3.0.conv2", 256, 256, 3, 2, 1, 28),
          ("layer3.conv3", 256, 1024, 1, 1, 0, 14), ("layer3.0.downsample", 512, 1024, 1, 2, 0, 28),
          ("layer3.1.conv1", 1024, 256, 1, 1, 0, 14), ("layer3.1.conv2", 256, 256, 3, 1, 1, 14),
          ("layer4.0.conv1", 1024, 512, 1, 1, 0, 14), ("layer4.0.conv2", 512, 512, 3, 2, 1, 14),
          ("layer4.conv3", 512, 2048, 1, 1, 0, 7), ("layer4.0.downsample", 1024, 2048, 1, 2, 0, 14),
          ("layer4.1.conv1", 2048, 512, 1, 1, 0, 7), ("layer4.1.conv2", 512, 512, 3, 1, 1, 7)]
QUICK = [SHAPES[1], SHAPES[2], SHAPES[8]]  # a 1x1, a 3x3 and a strided 1x1: the dry run's
HEADER = "device,precision,kernel,variant,category,batch,m,n,k,flops,bytes,time_ns,timing,source,shape"
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}
# The lent machines' device names -> mutwo's catalog (costmodel/device_catalog.hpp, match_device).
CATALOG = {"NVIDIA H100 80GB HBM3": "h100-sxm-80gb", "NVIDIA H200": "h200",
           "NVIDIA A100-SXM4-80GB": "a100-80gb", "NVIDIA A100-SXM4-40GB": "a100-40gb"}


def variant(r, stride):
    """conv_variant of costmodel/calibration_csv.hpp for an ungrouped, undilated square convolution."""
    if r == 3 and stride == 1:
        return "3x3s1"
    if r == 1:
        return "1x1s1" if stride == 1 else "1x1-strided"
    return "general"


def work(n, c, k, r, stride, padding, side, element_bytes):
    """Each pass's implicit-GEMM (m, n, k), the FLOPs and bytes as mutwo counts them (calibration_csv.hpp)."""
    p = (side + 2 * padding - r) // stride + 1
    flops = 2 * n * k * p * p * c * r * r
    nbytes = (n * c * side * side + k * c * r * r + n * k * p * p) * element_bytes
    return p, {"conv2d_forward": (n * p * p, k, c * r * r), "conv2d_backward_data": (n * side * side, c, k * r * r),
               "conv2d_backward_filter": (k, c * r * r, n * p * p)}, flops, nbytes


def passes(x, w, dy, stride, padding):
    conv_backward = torch.ops.aten.convolution_backward

    def backward(mask):
        return lambda: conv_backward(dy, x, w, None, [stride, stride], [padding, padding], [1, 1], False,
                                     [0, 0], 1, mask)

    return {"conv2d_forward": lambda: torch.nn.functional.conv2d(x, w, stride=stride, padding=padding),
            "conv2d_backward_data": backward([True, False, False]),
            "conv2d_backward_filter": backward([False, True, False])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", required=True, help="folder for the four CSV files")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--precision", choices=sorted(DTYPES), default="fp16")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--gpu", help="catalog name for the rows (default: read off the device's name)")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="3 shapes, batch 2, 1 trial of 1 call: a dry run")
    args = ap.parse_args()
    dev = torch.device(args.device)
    if dev.type == "cuda":
        name = torch.cuda.get_device_name(dev)
        gpu = args.gpu or CATALOG.get(name)
        if gpu is None:
            sys.exit(f"conv-layout-sample: device '{name}' is not one of {sorted(CATALOG)}: name its "
                     "catalog GPU with --gpu")
        torch.backends.cuda.matmul.allow_tf32 = args.precision == "tf32"
        torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
    else:
        gpu = args.gpu or "cpu"
    precision = args.precision
    if dev.type == "cpu" and precision in ("fp16", "bf16"):
        precision = "fp32"  # PyTorch 1.13 has no half convolution on the CPU: the dry run runs fp32
    dtype = DTYPES[precision]
    shapes, batch, repeat, trials = (QUICK, 2, 1, 1) if args.quick else (SHAPES, args.batch, args.repeat, args.trials)
    element_bytes = 2 if precision in ("fp16", "bf16") else 4
    os.makedirs(args.output, exist_ok=True)
    for layout in ("nchw", "nhwc"):
        fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
        for benchmark in (False, True):
            torch.backends.cudnn.benchmark = benchmark
            path = os.path.join(args.output, f"{layout}-{'benchmark' if benchmark else 'default'}.csv")
            with open(path, "w", newline="") as out:
                out.write(HEADER + "\n")
                rows = csv.writer(out, lineterminator="\n")
                for name, c, k, r, stride, padding, side in shapes:
                    x = torch.randn(batch, c, side, side, device=dev, dtype=dtype).to(memory_format=fmt)
                    w = torch.randn(k, c, r, r, device=dev, dtype=dtype).to(memory_format=fmt)
                    p, gemm, flops, nbytes = work(batch, c, k, r, stride, padding, side, element_bytes)
                    dy = torch.randn(batch, k, p, p, device=dev, dtype=dtype).to(memory_format=fmt)
                    shape = (f"N={batch} C={c} H={side} W={side} K={k} R={r} S={r} pad={padding}x{padding} "
                             f"stride={stride}x{stride}")
                    for kernel, fn in passes(x, w, dy, stride, padding).items():
                        seconds = time_call(fn, dev.type == "cuda", repeat, trials, warmup=2) / 1e6
                        m, n, kk = gemm[kernel]
                        rows.writerow([gpu, precision, kernel, variant(r, stride), "conv", 1, m, n, kk, flops,
                                       nbytes, max(1, round(seconds * 1e9)), "kernel",
                                       f"conv-layout-sample resnet50 {name} {layout}"
                                       f"{' benchmark' if benchmark else ''}", shape])
            print(f"wrote {path}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The validation report's layout section (scripts/validation_kernels.py, conv_layout_lines) on hand-made
rows of scripts/conv-layout-sample.py's format: each pass's measured times summed as written, the shipped
wave model's price beside them, and a setting whose rows mutwo refuses (the host CPU's) said so.

usage: conv_layout_report.py MUTWO"""
import importlib.util
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from validation_kernels import conv_layout_lines  # noqa: E402

spec = importlib.util.spec_from_file_location("conv_layout_sample", os.path.join(ROOT, "scripts", "conv-layout-sample.py"))
sample = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sample)

# Two of ResNet-50's shapes at batch 2, fp16; each pass's time by hand (ns).
SHAPES = [("layer1.conv2", 64, 64, 3, 1, 1, 56), ("layer2.0.downsample", 256, 512, 1, 2, 0, 56)]
TIMES = {"conv2d_forward": (100_000, 300_000), "conv2d_backward_data": (200_000, 400_000),
         "conv2d_backward_filter": (150_000, 250_000)}


def write(folder, device):
    os.makedirs(os.path.join(folder, "conv-layout"))
    with open(os.path.join(folder, "conv-layout", "nhwc-benchmark.csv"), "w") as out:
        out.write(sample.HEADER + "\n")
        for i, (name, c, k, r, stride, padding, side) in enumerate(SHAPES):
            _, gemm, flops, nbytes = sample.work(2, c, k, r, stride, padding, side, 2)
            shape = f"N=2 C={c} H={side} W={side} K={k} R={r} S={r} pad={padding}x{padding} stride={stride}x{stride}"
            for kernel, times in TIMES.items():
                m, n, kk = gemm[kernel]
                out.write(f"{device},fp16,{kernel},{sample.variant(r, stride)},conv,1,{m},{n},{kk},{flops},{nbytes},"
                          f"{times[i]},kernel,conv-layout-sample resnet50 {name} nhwc benchmark,{shape}\n")


def fail(message, lines):
    sys.exit("conv_layout_report: " + message + "\n" + "\n".join(lines))


mutwo = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    write(os.path.join(tmp, "h100"), "h100-sxm-80gb")
    lines = conv_layout_lines(mutwo, os.path.join(tmp, "h100"))
    rows = [line for line in lines if line.startswith("| channels-last, autotuner on |")]
    if len(rows) != 3:
        fail(f"expected 3 rows for the one setting, got {len(rows)}", lines)
    for row, (kernel, times) in zip(rows, TIMES.items()):
        cells = [c.strip() for c in row.strip("|").split("|")]
        if cells[1] != kernel.removeprefix("conv2d_") or cells[2] != "2":
            fail(f"row for {kernel}: {cells}", lines)
        if cells[3] != f"{sum(times) / 1e6:.3f} ms":
            fail(f"{kernel}: measured {cells[3]}, expected {sum(times) / 1e6:.3f} ms", lines)
        if not cells[4].endswith(" ms") or float(cells[4].split()[0]) <= 0 or not cells[5].endswith(" %"):
            fail(f"{kernel}: price or error missing: {cells}", lines)
    if conv_layout_lines(mutwo, os.path.join(tmp, "nothing")) != []:
        fail("a pack without conv-layout/ gave a section", [])
    write(os.path.join(tmp, "cpu"), "cpu")
    refused = conv_layout_lines(mutwo, os.path.join(tmp, "cpu"))
    if not any("refused nhwc-benchmark.csv" in line and "host CPU" in line for line in refused):
        fail("the CPU's rows were not said refused", refused)
print("conv_layout_report: ok")

#!/usr/bin/env python3
"""Writes the "How far apart NeuSight's own measurements lie" section of docs/FIDELITY.md: for each of NeuSight's five
GPUs and each op category, three errors side by side on the same kernel-bound rows:

  held out     the wave model fitted without the GPU, priced from its datasheet (the table above,
               read from the report: `mutwo calibrate --waves --leave-one-out` writes it);
  own fit      the wave model's refinement for the GPU, fitted on these very kernels
               (costmodel/models/waves.json, in-sample): what the model's form can reach when the
               GPU's kernels are known;
  neighbours   no model at all: each kernel predicted from the 3 measured kernels of the same op on
               the same GPU nearest in shape (log sizes), scaled by their work (FLOPs, or elements for
               bandwidth-bound ops), median of the three: how far apart NeuSight's own measurements of
               near shapes lie (cuDNN's and cuBLAS's per-shape choices of algorithm and tile, and the
               timing's noise).

The neighbours are not a bound: a model whose form matches the kernel beats them where shapes lie sparse
(NeuSight's bmm rows spread over four sizes). Where the data is smooth (neighbours within a few per
cent) and the held-out error is large, the error is the model's; where near shapes themselves lie far
apart, a datasheet cannot be expected to do much better than they do. Scoring follows the held-out table: a row is kernel-bound when its time is at
least twice its (GPU, op)'s floor, and the kernel's time is the row's minus the harness that
waves.json records for the (GPU, op).

usage: scripts/neusight-spread.py [--ops OP,OP] [NEUSIGHT_DIR] [WAVES_JSON] [docs/FIDELITY.md]

--ops limits the table to some of NeuSight's ops (the test: bmm's 16,000 rows per GPU take most of the
minute a full run takes)."""
import argparse
import csv
import gzip
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_section import write_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = "scripts/neusight-spread.py"
NEIGHBOURS = 3

# CUDA's device names in NeuSight's files -> mutwo's catalog (as costmodel/neusight_csv.cpp maps them).
DEVICES = {"NVIDIA A100-PCIE-40GB": "a100-pcie-40gb", "NVIDIA A100 80GB PCIe": "a100-pcie-80gb",
           "Tesla V100-PCIE-32GB": "v100-pcie-32gb", "Tesla T4": "t4", "Tesla P100-PCIE-16GB": "p100-pcie-16gb",
           "Tesla P4": "p4"}
ELEMENTWISE = ["add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "relu", "gelu", "tanh"]
CATEGORIES = {"linear": "GEMM/linear", "bmm": "bmm", "conv": "conv", "ln": "norm", "softmax": "softmax",
              **{op: "elementwise" for op in ELEMENTWISE}}
ORDER = ["GEMM/linear", "bmm", "conv", "norm", "softmax", "elementwise"]
# A refinement group of waves.json (family, variant, math) -> the category NeuSight's kernels in it are
# scored in; NeuSight timed fp32 with TF32 off, so its GEMMs and convolutions ran on CUDA cores.
GROUP_CATEGORY = {("gemm", "", "cuda"): "GEMM/linear", ("gemm", "batched", "cuda"): "bmm",
                  ("conv2d_forward", "3x3s1", "cuda"): "conv", ("norm", "", ""): "norm",
                  ("reduction", "", ""): "softmax", ("reduction", "warp", ""): "softmax",
                  ("elementwise", "", ""): "elementwise"}


def fail(message):
    sys.exit(f"neusight-spread: {message}")


def shape_and_work(op, row):
    """Log sizes (the neighbour space) and the work a kernel's time scales with."""
    if op in ("linear", "bmm"):
        b, m, n, k = (float(row[c]) for c in ("B", "M", "N", "K"))
        return [b, m, n, k], 2 * b * m * n * k
    if op == "conv":
        b, c, k, r, h = (float(row[x]) for x in ("B", "Input_Channel", "Output_Channel", "Kernel_Szie", "Input_Size"))
        if row["Stride"] != "1" or int(row["Padding"]) * 2 != int(r) - 1:
            fail(f"{op}: a row with stride {row['Stride']} and padding {row['Padding']}: only same-size "
                 f"outputs are scaled by their FLOPs here")
        return [b, c, k, h], 2 * b * k * c * r * r * h * h
    b, h = float(row["B"]), float(row["H"])
    return [b, h], b * h


def group_variant(op, row):
    """The wave group's variant a NeuSight row is fitted in (costmodel/wave_kernel.hpp): its harness is that
    group's (waves.json keeps one per group)."""
    if op == "bmm":
        return "batched" if int(row["B"]) > 1 else ""
    if op == "softmax":
        return "warp" if int(row["H"]) <= 1024 else ""  # PyTorch's warp kernel (kSoftmaxWarpMaxRowElements)
    if op == "conv":
        return "3x3s1" if row["Kernel_Szie"] == "3" and row["Stride"] == "1" else ""
    return ""


def read_op(data, op):
    """{device: (log shapes, work, time ns, group variants)} for one op's files."""
    folder = os.path.join(data, op)
    if not os.path.isdir(folder):
        fail(f"no folder {folder}")
    out = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".csv.gz"):
            continue
        shapes, work, times, variants, device = [], [], [], [], None
        with gzip.open(os.path.join(folder, name), "rt", newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                if row["Device"] not in DEVICES:
                    fail(f"{name}:{line}: field 'Device' has an unknown value '{row['Device']}'")
                device = DEVICES[row["Device"]]
                s, w = shape_and_work(op, row)
                shapes.append(np.log(s))
                work.append(w)
                times.append(float(row["Latency"]) * 1e6)  # ms for the whole op -> ns
                variants.append(group_variant(op, row))
        out[device] = (np.array(shapes), np.array(work), np.array(times), np.array(variants))
    return out


def neighbour_errors(shapes, work, kernel_ns):
    """|prediction - measured| / measured, each row predicted from its nearest rows."""
    errors = np.empty(len(kernel_ns))
    for start in range(0, len(kernel_ns), 512):
        block = shapes[start:start + 512]
        dist = ((block[:, None, :] - shapes[None, :, :]) ** 2).sum(axis=2)
        dist[np.arange(len(block)), np.arange(start, start + len(block))] = np.inf
        near = np.argpartition(dist, NEIGHBOURS, axis=1)[:, :NEIGHBOURS]
        rows = np.arange(start, start + len(block))
        predicted = np.median(kernel_ns[near] * (work[rows][:, None] / work[near]), axis=1)
        errors[rows] = np.abs(predicted - kernel_ns[rows]) / kernel_ns[rows]
    return errors


def held_out_medians(report):
    """(device, category) -> the held-out median % of the report's NeuSight rows."""
    table = {}
    pattern = re.compile(r"^\| (\S+) \| NeuSight \| ([^|]+?) \| \d+ \| ([\d.]+) % \|")
    for line in open(report):
        if m := pattern.match(line):
            table[(m.group(1), m.group(2))] = float(m.group(3))
    if not table:
        fail(f"{report}: no held-out rows of NeuSight's GPUs; run `mutwo calibrate --waves --leave-one-out "
             f"... --fidelity {report}` first")
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", help="only these of NeuSight's ops, comma-separated (linear,conv,ln,...)")
    ap.add_argument("neusight", nargs="?", default=os.path.join(ROOT, "tests", "fixtures", "calibration", "neusight"))
    ap.add_argument("waves", nargs="?", default=os.path.join(ROOT, "costmodel", "models", "waves.json"))
    ap.add_argument("report", nargs="?", default=os.path.join(ROOT, "docs", "FIDELITY.md"))
    args = ap.parse_args()
    ops = args.ops.split(",") if args.ops else list(CATEGORIES)
    for op in ops:
        if op not in CATEGORIES:
            fail(f"--ops: unknown op '{op}' (NeuSight's ops: {', '.join(CATEGORIES)})")
    waves = json.load(open(args.waves))
    # (device, source) -> floor; (device, source, variant) -> harness (one per group since waves.json v3).
    floors = {(h["device"], h["source"]): h["floor_ns"] for h in waves["harness"]}
    harness = {(h["device"], h["source"], h.get("variant", "")): h["harness_ns"] for h in waves["harness"]}
    # A category priced by two groups (softmax's warp and block kernels): their medians weighted by rows.
    own_groups = {}
    for r in waves["refinements"]:
        for g in r["groups"]:
            category = GROUP_CATEGORY.get((g["family"], g["variant"], g["math"]))
            if category is not None:
                own_groups.setdefault((r["device"], category), []).append((g["rows"], g["error"]["median"]))
    own = {key: 100 * sum(n * m for n, m in gs) / sum(n for n, _ in gs) for key, gs in own_groups.items()}
    held = held_out_medians(args.report)

    errors = {}  # (device, category) -> list of arrays
    for op, category in CATEGORIES.items():
        if op not in ops:
            continue
        for device, (shapes, work, times, variants) in read_op(args.neusight, op).items():
            key = (device, f"neusight {op}")
            if key not in floors:
                fail(f"{args.waves}: no harness for {device}'s {op}")
            floor_ns = floors[key]
            row_harness = np.array([harness.get((*key, v), harness.get((*key, ""), np.nan)) for v in variants])
            if np.isnan(row_harness).any():
                fail(f"{args.waves}: no harness for {device}'s {op} in every group of its rows")
            bound = times >= 2 * floor_ns
            kernel_ns = times[bound] - row_harness[bound]
            errors.setdefault((device, category), []).append(
                neighbour_errors(shapes[bound], work[bound], kernel_ns))

    lines = ["## How far apart NeuSight's own measurements lie: the held-out error beside the data's spread", "",
             "Regenerate: `python3 scripts/neusight-spread.py` (after `mutwo calibrate --waves --leave-one-out "
             "... --fidelity docs/FIDELITY.md`, whose held-out medians it reads). Three medians on the same "
             "kernel-bound rows of each GPU: **held out**, the wave model fitted without the GPU and priced from "
             "its datasheet (the table above); **own fit**, the model's refinement for the GPU, fitted on these "
             "very kernels (in-sample, costmodel/models/waves.json; the P100's and T4's with DeepBench's fp32 kernels "
             "of the group too; softmax's two kernels' groups, their medians weighted by rows): what the model's "
             "form reaches when the GPU's "
             "kernels are known; **neighbours**, no model at all: each kernel predicted from the "
             f"{NEIGHBOURS} measured kernels of the same op on the same GPU nearest in shape (log sizes), scaled by "
             "their FLOPs (elements for bandwidth-bound ops), median of the three. The neighbours' error is how "
             "far NeuSight's own measurements of near shapes lie apart: cuDNN's and cuBLAS's choice of algorithm "
             "and tile per shape, and the timing's noise. They are not a bound (a model whose form matches the "
             "kernel beats them where shapes lie sparse), but where they are small and the held-out error is "
             "large, the error is the model's.", "",
             "| GPU | category | kernels | held out | own fit | neighbours | neighbours, mean |",
             "|---|---|---:|---:|---:|---:|---:|"]
    pooled = {}
    for device in sorted({d for d, _ in errors}):
        for category in ORDER:
            if (device, category) not in errors:
                continue
            e = np.concatenate(errors[(device, category)])
            pooled.setdefault(category, []).append(e)
            h = held.get((device, category))
            o = own.get((device, category))
            lines.append(f"| {device} | {category} | {len(e)} | {'-' if h is None else f'{h:.1f} %'} | "
                         f"{'-' if o is None else f'{o:.1f} %'} | {100 * np.median(e):.1f} % | "
                         f"{100 * np.mean(e):.1f} % |")
    lines += ["", "Pooled over the five GPUs (target for the held-out error: median <= 8 %, mean <= 12 %):", "",
              "| category | kernels | neighbours, median | neighbours, mean |", "|---|---:|---:|---:|"]
    for category in [c for c in ORDER if c in pooled]:
        e = np.concatenate(pooled[category])
        lines.append(f"| {category} | {len(e)} | {100 * np.median(e):.1f} % | {100 * np.mean(e):.1f} % |")
    write_section(args.report, SECTION, lines)
    print(f"neusight-spread: wrote {len(lines)} lines to {args.report}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the "Held-out convolutions by the algorithm cuDNN ran" section of docs/FIDELITY.md from the
held-out CSV that `mutwo calibrate --waves --leave-one-out ... --held-out-csv FILE` writes
(costmodel/wave_held_out_csv.hpp) and NeuSight's convolution files, whose `Kernels` column names every
kernel each op launched. NeuSight ran its convolutions with cudnn.benchmark on, so the algorithm a row
names is the one cuDNN measured fastest for that shape on that GPU. The wave model does not know it
(a GPU it never saw has no such record): it prices every FP32 3x3 stride-1 forward convolution as
Winograd F(4x4, 3x3) runs it (costmodel/wave_kernel.hpp, runs_winograd). The table shows, per
algorithm, how far the held-out price lies from the rows that ran it: where the choice is what the
model misses.

A held-out row is matched to its NeuSight row by GPU and implicit-GEMM shape (m = B x H x W, n = K,
k = 9 C; every NeuSight convolution is 3x3, stride 1, padding 1).

usage: scripts/conv-algorithms.py HELD_OUT_CSV [docs/FIDELITY.md] [--neusight DIR]"""
import csv
import gzip
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from held_out_csv import ROOT, held_out_rows, report_parser  # noqa: E402
from report_section import write_section  # noqa: E402

SECTION = "scripts/conv-algorithms.py"
# NeuSight's Device column -> mutwo's catalog (costmodel/devices/*.toml), for the conv files it holds.
DEVICES = {"NVIDIA A100 80GB PCIe": "a100-pcie-80gb", "Tesla P100-PCIE-16GB": "p100-pcie-16gb",
           "Tesla P4": "p4", "Tesla T4": "t4", "Tesla V100-PCIE-32GB": "v100-pcie-32gb"}
# The algorithm a row's kernels name (cuDNN 8.9's kernel names), first match wins.
ALGORITHMS = [("winograd_nonfused", "Winograd, non-fused (4 kernels)"),
              ("generatewinogradtiles", "Winograd, fused"),
              ("computeoffsets", "implicit GEMM (cask)"),
              ("implicit_convolve_sgemm", "implicit GEMM (legacy)"),
              ("im2col", "explicit GEMM (im2col)"),
              ("fft", "FFT")]
OTHER = "other"


def algorithm_of(kernels):
    for needle, name in ALGORITHMS:
        if needle in kernels:
            return name
    return OTHER


def read_labels(neusight_dir):
    conv_dir = os.path.join(neusight_dir, "conv")
    try:
        names = sorted(os.listdir(conv_dir))
    except OSError as e:
        sys.exit(f"conv-algorithms: cannot list {conv_dir}: {e.strerror}")
    labels = {}
    for name in names:
        path = os.path.join(conv_dir, name)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                device = DEVICES.get(row.get("Device", ""))
                if device is None:
                    sys.exit(f"conv-algorithms: {path}:{line}: field 'Device' = '{row.get('Device')}': "
                             f"not one of {', '.join(DEVICES)}")
                try:
                    b, c, k, h = (int(row[x]) for x in ("B", "Input_Channel", "Output_Channel", "Input_Size"))
                except (KeyError, ValueError):
                    sys.exit(f"conv-algorithms: {path}:{line}: B, Input_Channel, Output_Channel and "
                             "Input_Size must be integers")
                labels[(device, b * h * h, k, 9 * c)] = algorithm_of(row.get("Kernels", ""))
    return labels


def read_errors(path, labels):
    required = {"device", "dataset", "category", "m", "n", "k", "error"}
    cells = {}
    for line, row in held_out_rows(path, required, "conv-algorithms"):
        if row["dataset"] != "NeuSight" or row["category"] != "conv":
            continue
        try:
            key = (row["device"], int(row["m"]), int(row["n"]), int(row["k"]))
            error = float(row["error"])
        except ValueError:
            sys.exit(f"conv-algorithms: {path}:{line}: m, n, k and error must be numbers")
        algorithm = labels.get(key)
        if algorithm is None:
            sys.exit(f"conv-algorithms: {path}:{line}: no NeuSight convolution on {key[0]} with m={key[1]} "
                     f"n={key[2]} k={key[3]}")
        for device in (row["device"], "all"):
            cells.setdefault((device, algorithm), []).append(error)
    return cells


def render(cells):
    devices = sorted({d for d, _ in cells if d != "all"}) + ["all"]
    order = [name for _, name in ALGORITHMS] + [OTHER]
    lines = ["| GPU | algorithm cuDNN ran | rows | median error | signed median |", "|---|---|---:|---:|---:|"]
    for device in devices:
        for algorithm in order:
            errors = cells.get((device, algorithm))
            if not errors:
                continue
            lines.append(f"| {device if device != 'all' else 'all five'} | {algorithm} | {len(errors)} | "
                         f"{100 * statistics.median(abs(e) for e in errors):.1f} % | "
                         f"{100 * statistics.median(errors):+.1f} % |")
    return lines


def main():
    parser = report_parser(__doc__)
    parser.add_argument("--neusight", default=os.path.join(ROOT, "tests", "fixtures", "calibration", "neusight"))
    args = parser.parse_args()
    cells = read_errors(args.held_out_csv, read_labels(args.neusight))
    if not cells:
        sys.exit(f"conv-algorithms: {args.held_out_csv}: no scored NeuSight convolution")
    lines = [
        "## Held-out convolutions by the algorithm cuDNN ran",
        "",
        "Regenerate: `mutwo calibrate --waves --leave-one-out ... --held-out-csv held.csv`, then "
        f"`python3 {SECTION} held.csv docs/FIDELITY.md` (scripts/refit-waves.sh runs both). NeuSight ran "
        "its 3x3 convolutions with cudnn.benchmark on, and its `Kernels` column names the kernels each one "
        "launched, so each row's algorithm is the one cuDNN measured fastest there. The wave model prices "
        "every FP32 forward 3x3 stride-1 convolution as Winograd F(4x4, 3x3) runs it (costmodel/README.md, "
        "\"Winograd\") and knows no choice; here its held-out error (the GPU's chip not fitted) on the "
        "kernel-bound rows, by the algorithm the row ran. Signed: below 0 where the model is too fast.",
        "",
        *render(cells),
    ]
    write_section(args.report, SECTION, lines)
    print(f"conv-algorithms: wrote {len(lines)} lines to {args.report}")


if __name__ == "__main__":
    main()

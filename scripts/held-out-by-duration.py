#!/usr/bin/env python3
"""Writes the "Held-out GEMMs by how long they ran" section of docs/FIDELITY.md from the held-out CSV
that `mutwo calibrate --waves --leave-one-out ... --held-out-csv FILE` writes (costmodel/wave_held_out_csv.hpp):
for each of NeuSight's GPUs, its single products (linear) and batched products (bmm) by the measured
kernel time, in decades:

  held out   the signed median error of the held-out price ((predicted - measured) / measured: below 0
             where the model is too fast) and the rows;
  measured   the FLOP rate the GPU reached, as a share of its datasheet's FP32 peak
             (costmodel/devices/<gpu>.toml, fp32_tflops): median over the same rows. Nothing modelled.

A GPU whose products run slower the longer they run, where its other products of the same time do not,
shows something no datasheet holds (the state the card was measured in); a held-out error that is flat
across the bands is the model's transfer.

usage: scripts/held-out-by-duration.py HELD_OUT_CSV [docs/FIDELITY.md] [--devices DIR]"""
import os
import statistics
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from held_out_csv import ROOT, held_out_rows, report_parser  # noqa: E402
from report_section import write_section  # noqa: E402

SECTION = "scripts/held-out-by-duration.py"
BANDS = [(0.0, 0.1, "< 0.1 ms"), (0.1, 1.0, "0.1-1 ms"), (1.0, 10.0, "1-10 ms"), (10.0, 100.0, "10-100 ms"),
         (100.0, float("inf"), ">= 100 ms")]
CATEGORIES = [("GEMM/linear", "linear"), ("bmm", "bmm")]
MIN_ROWS = 20  # a cell of fewer rows is left blank


def band_of(ms):
    for low, high, name in BANDS:
        if low <= ms < high:
            return name
    raise ValueError(f"kernel time {ms} ms in no band")


def fp32_peak_flops_per_ns(devices_dir, device, cache):
    if device not in cache:
        path = os.path.join(devices_dir, f"{device}.toml")
        try:
            with open(path, "rb") as f:
                spec = tomllib.load(f)
        except OSError as e:
            sys.exit(f"held-out-by-duration: device '{device}': cannot read {path}: {e.strerror}")
        tflops = spec.get("fp32_tflops")
        if not isinstance(tflops, (int, float)) or tflops <= 0:
            sys.exit(f"held-out-by-duration: {path}: field 'fp32_tflops' = '{tflops}': must be a number > 0")
        cache[device] = tflops * 1000.0
    return cache[device]


def read_cells(path, devices_dir):
    required = {"device", "dataset", "category", "flops", "kernel_ns", "error"}
    cells = {}
    peaks = {}
    for line, row in held_out_rows(path, required, "held-out-by-duration"):
        if row["dataset"] != "NeuSight" or row["category"] not in dict(CATEGORIES):
            continue
        try:
            kernel_ns = float(row["kernel_ns"])
            error = float(row["error"])
            flops = float(row["flops"])
        except ValueError:
            sys.exit(f"held-out-by-duration: {path}:{line}: kernel_ns, error and flops must be numbers")
        if not kernel_ns > 0:
            sys.exit(f"held-out-by-duration: {path}:{line}: field 'kernel_ns' = '{row['kernel_ns']}': must be > 0")
        share = flops / kernel_ns / fp32_peak_flops_per_ns(devices_dir, row["device"], peaks)
        key = (row["device"], row["category"], band_of(kernel_ns / 1e6))
        cells.setdefault(key, []).append((error, share))
    return cells


def render(cells):
    devices = sorted({d for d, _, _ in cells})
    band_names = [name for _, _, name in BANDS]
    head = "| GPU | product | " + " | ".join(band_names) + " |"
    rule = "|---|---|" + "---:|" * len(band_names)
    held, measured = [head, rule], [head, rule]
    for device in devices:
        for category, label in CATEGORIES:
            h, m = [], []
            for name in band_names:
                values = cells.get((device, category, name), [])
                if len(values) < MIN_ROWS:
                    h.append("")
                    m.append("")
                    continue
                h.append(f"{100 * statistics.median(e for e, _ in values):+.0f} % ({len(values)})")
                m.append(f"{statistics.median(s for _, s in values):.2f}")
            held.append(f"| {device} | {label} | " + " | ".join(h) + " |")
            measured.append(f"| {device} | {label} | " + " | ".join(m) + " |")
    return held, measured


def main():
    parser = report_parser(__doc__)
    parser.add_argument("--devices", default=os.path.join(ROOT, "costmodel", "devices"))
    args = parser.parse_args()
    cells = read_cells(args.held_out_csv, args.devices)
    if not cells:
        sys.exit(f"held-out-by-duration: {args.held_out_csv}: no scored NeuSight linear or bmm rows")
    held, measured = render(cells)
    lines = [
        "## Held-out GEMMs by how long they ran",
        "",
        "Regenerate: `mutwo calibrate --waves --leave-one-out ... --held-out-csv held.csv`, then "
        f"`python3 {SECTION} held.csv docs/FIDELITY.md` (scripts/refit-waves.sh runs both). NeuSight's "
        "single products (linear) and batched products (bmm) of each GPU by the measured kernel time; a "
        f"cell of fewer than {MIN_ROWS} rows is blank.",
        "",
        "Held out: signed median of (predicted - measured) / measured, below 0 where the model is too fast "
        "(rows):",
        "",
        *held,
        "",
        "Measured: the FLOP rate the GPU reached, as a share of its datasheet's FP32 peak (median; nothing "
        "modelled):",
        "",
        *measured,
    ]
    write_section(args.report, SECTION, lines)


if __name__ == "__main__":
    main()

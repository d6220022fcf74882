#!/usr/bin/env python3
"""Tries kernel forms for NeuSight's layer norms and softmaxes outside mutwo: which terms, added to the
wave model's memory regime, would lower their held-out error (docs/FIDELITY.md, "How far apart
NeuSight's own measurements lie", the norms-and-softmax bullet).

The rows are mutwo's scored ones: a (GPU, op) set's rows at >= 2 x its floor, less its harness, both
as the shipped wave model has them (costmodel/models/waves.json). Each form is a sum of terms, each in
ns on the GPU's datasheet (costmodel/devices/*.toml), fitted as mutwo fits its groups: relative
non-negative least squares on t_pred / t - 1 (scipy's nnls), the harness held at the shipped model's
(so a fixed cost here also absorbs what the harness rule would):

  hbm     bytes read + written / HBM bandwidth, when they exceed L2 (the wave model's term)
  l2      the same bytes / (SMs x clock), when they fit in L2 (the wave model's L2 term)
  flop    elements / FP32 peak
  cyc     elements / (SMs x clock)
  one     a fixed cost
  rowwave waves of rows, SMs x 16 blocks of one row each, x the row's elements / clock
  reread  one more read of the input where 16 rows of a block per SM overflow its L1 (kL1Kib)

For each form: the fit on each GPU's own rows (median error, in-sample) and leave one GPU out (fit on
the other four, median and mean over every held-out row). Then, for softmax's two kernels under one fit
of the wave model's terms (hbm + l2, as mutwo fits the family): each kernel's signed median, in-sample
and held out, and by the shipped model's own reduction groups (the cross-GPU ones, which price a GPU
without kernels of its own, and each GPU's refinements; the warp kernel by the "warp" group where the
model has one). Prints two tables; nothing is written.

usage: scripts/norm-form-trials.py [NEUSIGHT_DIR]
"""

import csv
import glob
import gzip
import json
import math
import os
import sys
import tomllib

import numpy as np
from scipy.optimize import nnls

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = {"NVIDIA_A100-PCIE-40GB": "a100-pcie-40gb", "Tesla_P100-PCIE-16GB": "p100-pcie-16gb",
         "Tesla_P4": "p4", "Tesla_T4": "t4", "Tesla_V100-PCIE-32GB": "v100-pcie-32gb"}
# L1 data cache per SM for global loads, KiB: NVIDIA's tuning guides (Pascal GP100 24, GP104 48; Volta
# up to 128; Turing up to 64; Ampere GA100 up to 192).
kL1Kib = {"p100-pcie-16gb": 24, "p4": 48, "v100-pcie-32gb": 128, "t4": 64, "a100-pcie-40gb": 192}

FORMS = [["hbm", "l2"], ["hbm", "l2", "flop"], ["hbm", "l2", "cyc"], ["hbm", "l2", "one"],
         ["hbm", "l2", "rowwave"], ["reread", "l2"], ["reread", "l2", "one"]]


def device(name):
    with open(os.path.join(ROOT, "costmodel", "devices", name + ".toml"), "rb") as f:
        return tomllib.load(f)


def load(neusight, op):
    model = json.load(open(os.path.join(ROOT, "costmodel", "models", "waves.json")))
    # One harness per (set, group) since waves.json v3: softmax's warp-kernel rows have their own.
    harness = {(h["device"], h["source"], h.get("variant", "")): (h["floor_ns"], h["harness_ns"])
               for h in model["harness"]}
    rows = []
    for path in sorted(glob.glob(os.path.join(neusight, op, "*.csv.gz"))):
        gpu = FILES.get(os.path.basename(path)[:-len(".csv.gz")])
        if gpu is None:
            continue
        with gzip.open(path, "rt") as f:
            for r in csv.DictReader(f):
                # softmax: PyTorch's warp kernel up to 1,024 elements a row, a group of its own
                warp = op == "softmax" and int(r["H"]) <= 1024
                key = (gpu, "neusight " + op, "warp" if warp else "")
                floor, h = harness.get(key, harness[(gpu, "neusight " + op, "")])
                t = float(r["Latency"]) * 1e6  # ms -> ns
                if t >= 2 * floor:
                    rows.append({"gpu": gpu, "b": int(r["B"]), "h": int(r["H"]), "t": t - h})
    return rows


def features(r, d, form):
    sms, ghz = d["sm_count"], d["boost_clock_mhz"] / 1e3
    elements = r["b"] * r["h"]
    nbytes = 2 * elements * 4  # fp32, read once and written once
    in_l2 = nbytes <= d["l2_cache_mib"] * 2**20
    reread = 16 * r["h"] * 4 > kL1Kib[r["gpu"]] * 1024
    terms = {
        "hbm": 0 if in_l2 else nbytes / d["memory_gbps"],
        "l2": nbytes / (sms * ghz) if in_l2 else 0,
        "flop": elements / (d["fp32_tflops"] * 1e3),
        "cyc": elements / (sms * ghz),
        "one": 1.0,
        "rowwave": math.ceil(r["b"] / (sms * 16)) * r["h"] / ghz,
        "reread": 0 if in_l2 else nbytes * (1.5 if reread else 1.0) / d["memory_gbps"],
    }
    return [terms[k] for k in form]


def fit(x, t):
    coef, _ = nnls(x / t[:, None], np.ones(len(t)))
    return coef


def main():
    neusight = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fixtures", "calibration",
                                                                 "neusight")
    gpus = sorted(FILES.values())
    specs = {g: device(g) for g in gpus}
    print("| op | rows | form | own fit, median per GPU | held out, median | held out, mean |")
    print("|---|---|---|---|---:|---:|")
    for op, label, keep in [("ln", "ln", None), ("softmax", "softmax", None),
                            ("softmax", "softmax, H <= 1024 (warp kernel)", lambda r: r["h"] <= 1024),
                            ("softmax", "softmax, H > 1024 (block kernel)", lambda r: r["h"] > 1024)]:
        rows = [r for r in load(neusight, op) if keep is None or keep(r)]
        gpu = np.array([r["gpu"] for r in rows])
        t = np.array([r["t"] for r in rows])
        for form in FORMS:
            x = np.array([features(r, specs[r["gpu"]], form) for r in rows])
            own, held = [], []
            for g in gpus:
                mine = gpu == g
                own.append(f"{g} {100 * np.median(np.abs(x[mine] @ fit(x[mine], t[mine]) / t[mine] - 1)):.1f}")
                others = ~mine
                held.extend(np.abs(x[mine] @ fit(x[others], t[others]) / t[mine] - 1))
            print(f"| {label} | {len(rows)} | {' + '.join(form)} | {', '.join(own)} | "
                  f"{100 * np.median(held):.1f} % | {100 * np.mean(held):.1f} % |")
    # Softmax's two kernels under one fit: the bias each carries.
    rows = load(neusight, "softmax")
    gpu = np.array([r["gpu"] for r in rows])
    t = np.array([r["t"] for r in rows])
    warp = np.array([r["h"] <= 1024 for r in rows])
    x = np.array([features(r, specs[r["gpu"]], ["hbm", "l2"]) for r in rows])
    in_sample = x @ fit(x, t) / t - 1
    held = np.empty(len(rows))
    for g in gpus:
        held[gpu == g] = x[gpu == g] @ fit(x[gpu != g], t[gpu != g]) / t[gpu == g] - 1
    print()
    shipped = json.load(open(os.path.join(ROOT, "costmodel", "models", "waves.json")))
    # The reduction group that prices each kernel: "warp" for the warp kernel (costmodel/wave_kernel.hpp),
    # falling back to the family's "" group in a model without one.
    def reduction(groups, variant):
        mine = {g["variant"]: g for g in groups if g["family"] == "reduction"}
        return mine.get(variant, mine.get(""))

    cross = {v: reduction(shipped["groups"], v) for v in ("warp", "")}
    own = {r["device"]: {v: reduction(r["groups"], v) for v in ("warp", "")} for r in shipped["refinements"]
           if reduction(r["groups"], "")}
    kUnfittedFixedCostNs = 1700.0 + 750.0  # costmodel/wave_model.hpp: eager-op groups fit no fixed cost

    def shipped_price(r, group):
        d = specs[r["gpu"]]
        nbytes = 2 * r["b"] * r["h"] * 4
        hbm = group["memory"][1] * nbytes / d["memory_gbps"]
        in_l2 = nbytes <= d["l2_cache_mib"] * 2**20
        l2 = group["memory"][2] * nbytes / (d["sm_count"] * d["boost_clock_mhz"] / 1e3) if in_l2 else hbm
        return kUnfittedFixedCostNs + min(hbm, l2)  # L2 no slower than HBM (predict_wave_ns)

    variant = ["warp" if r["h"] <= 1024 else "" for r in rows]
    by_cross = np.array([shipped_price(r, cross[v]) for r, v in zip(rows, variant)]) / t - 1
    by_own = np.array([shipped_price(r, own[r["gpu"]][v]) for r, v in zip(rows, variant)]) / t - 1
    print("| softmax kernel | rows | one fit of hbm + l2, in-sample | held out | shipped, cross-GPU group | "
          "shipped, each GPU's refinement |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, sel in [("H <= 1024 (softmax_warp_forward)", warp), ("H > 1024 (cunn_SoftMaxForward)", ~warp)]:
        print(f"| {label} | {sel.sum()} | {100 * np.median(in_sample[sel]):+.1f} % | "
              f"{100 * np.median(held[sel]):+.1f} % | {100 * np.median(by_cross[sel]):+.1f} % | "
              f"{100 * np.median(by_own[sel]):+.1f} % |")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The host optimizer's cost (ZeRO-Offload's CPU Adam, Ren et al., ATC 2021): a fit of
    time_ns = per_op_ns + min(bytes, L) / bytes_per_ns + max(bytes - L, 0) / large_bytes_per_ns
with bytes = bytes_read + bytes_written (28 B per fp32 Adam parameter) and L = 64 MiB: the measured
rows run fastest at 1-32 MiB per op (in cache) and at about a third of that rate from 512 MiB on,
where every fresh temporary of the update page-faults (LibTorch's CPU allocator returns large
blocks to the system);
over the adam_step ops (relative error per op) of `mutwo profile --device cpu` traces (each op timed alone by mutwo's
executor on LibTorch's CPU kernels, the update exec/kernels/optimizer.cpp runs), by least squares
(numpy.linalg.lstsq). Fitted on the traces named by --fit, checked on those named by --check
(never fitted). With --rows, writes every measured op as CSV (the data the fit reads back with
--from-rows, so the figures regenerate without re-profiling).

  scripts/fit-host-optimizer.py --rows costmodel/measured/host_adam_cpu.csv \
      --fit bert-base:1=/tmp/prof_bert_t1.json ... --check resnet18:1=/tmp/prof_r18_t1.json ...
  scripts/fit-host-optimizer.py --from-rows costmodel/measured/host_adam_cpu.csv
"""
import argparse
import csv
import json
import sys

import numpy as np

KINDS = ("adam_step", "adamw_step")
LARGE_FROM_BYTES = 64 << 20


def rows_of(label, path):
    model, threads = label.split(":")
    t = json.load(open(path))
    out = []
    for op, dur in zip(t["graph"]["ops"], t["op_duration_ns"]):
        if op["kind"] in KINDS:
            out.append({"model": model, "threads": int(threads), "op": op["name"],
                        "bytes": op["bytes_read"] + op["bytes_written"], "duration_ns": int(dur)})
    return out


def fit(rows):
    # Relative least squares (each row divided by its measured time): ops span 56 B to 656 MB, and
    # plain least squares would fit the largest few and leave the rest negative.
    y = np.array([float(r["duration_ns"]) for r in rows])
    a = np.array([[1.0, min(r["bytes"], LARGE_FROM_BYTES), max(r["bytes"] - LARGE_FROM_BYTES, 0)]
                  for r in rows]) / y[:, None]
    (per_op, ns_per_byte, ns_per_large_byte), *_ = np.linalg.lstsq(a, np.ones(len(rows)), rcond=None)
    return per_op, 1.0 / ns_per_byte, 1.0 / ns_per_large_byte


def predict(r, per_op, rate, large_rate):
    return per_op + min(r["bytes"], LARGE_FROM_BYTES) / rate + max(r["bytes"] - LARGE_FROM_BYTES, 0) / large_rate


def error(rows, *coef):
    pred = sum(predict(r, *coef) for r in rows)
    meas = sum(r["duration_ns"] for r in rows)
    return pred, meas


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", nargs="*", default=[], help="model:threads=trace.json")
    ap.add_argument("--check", nargs="*", default=[], help="model:threads=trace.json (validation)")
    ap.add_argument("--rows", help="write the measured ops here (CSV)")
    ap.add_argument("--from-rows", help="read measured ops from this CSV (role column: fit/check)")
    args = ap.parse_args()
    rows = []
    if args.from_rows:
        with open(args.from_rows) as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                rows.append({"role": r["role"], "model": r["model"], "threads": int(r["threads"]), "op": r["op"],
                             "bytes": int(r["bytes"]), "duration_ns": int(r["duration_ns"])})
    for role, specs in (("fit", args.fit), ("check", args.check)):
        for spec in specs:
            label, path = spec.split("=", 1)
            rows += [dict(r, role=role) for r in rows_of(label, path)]
    if args.rows:
        with open(args.rows, "w", newline="") as f:
            f.write("# adam_step ops of `mutwo profile --device cpu` traces (see scripts/fit-host-optimizer.py)\n")
            w = csv.DictWriter(f, fieldnames=["role", "model", "threads", "op", "bytes", "duration_ns"])
            w.writeheader()
            for r in rows:
                w.writerow(r)
    for threads in sorted({r["threads"] for r in rows}):
        train = [r for r in rows if r["threads"] == threads and r["role"] == "fit"]
        if not train:
            continue
        coef = fit(train)
        print(f"threads {threads}: per_op_ns {coef[0]:.0f}, bytes_per_ns {coef[1]:.3f}, large_bytes_per_ns "
              f"{coef[2]:.3f} from {LARGE_FROM_BYTES} B (fitted on {len(train)} ops)")
        for role in ("fit", "check"):
            for model in sorted({r["model"] for r in rows if r["role"] == role}):
                sel = [r for r in rows if r["threads"] == threads and r["role"] == role and r["model"] == model]
                if not sel:
                    continue
                pred, meas = error(sel, *coef)
                print(f"  {role:5} {model:10} {len(sel):4} ops: predicted {pred / 1e6:8.2f} ms, measured "
                      f"{meas / 1e6:8.2f} ms, error {100 * (pred - meas) / meas:+.1f} %")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes the "How far apart the fusion pairs' own measurements lie" section of docs/FIDELITY.md from the
held-out CSV that `mutwo calibrate --waves --leave-one-out ... --held-out-csv FILE` writes
(costmodel/wave_held_out_csv.hpp).

The fusion check (FIDELITY.md, "Fusion measured"; costmodel/wave_validation.hpp) pairs each batched
product of B = 2..64 with the closest measured product of the same GPU holding at most B/2 products
whose m, n and k are each within 10 %, and reads the speed-up of fusing off the two measured times (the
smaller kernel's time per product scaled by FLOPs). Where a batched row has two such partners, the
speed-ups the first and the second closest give are two readings of one quantity: how far apart they lie
is the pairing's own spread, which no model's error can be expected to go below. Nothing is modelled here:
measured kernel times only (the harness rule of the leave-one-out taken out, as the check does).

usage: scripts/fusion-pair-spread.py HELD_OUT_CSV [docs/FIDELITY.md]"""
import collections
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from held_out_csv import held_out_rows, report_parser  # noqa: E402
from report_section import write_section  # noqa: E402

TOLERANCE = math.log(1.10)  # m, n and k each within 10 %, as costmodel/wave_validation.cpp pairs them


def speedup(batched, partner):
    """B x (partner's time per product, scaled to the batched row's product) / batched row's time."""
    b = int(batched["batch"])
    flops = int(batched["m"]) * int(batched["n"]) * int(batched["k"])
    partner_flops = int(partner["m"]) * int(partner["n"]) * int(partner["k"])
    per_product = float(partner["kernel_ns"]) / int(partner["batch"]) * flops / partner_flops
    return b * per_product / float(batched["kernel_ns"])


def checked(path, line, row):
    """The row with batch, m, n, k as integers >= 1 and kernel_ns a number > 0; exits naming the field."""
    for field, parse, valid, rule in (("batch", int, lambda v: v >= 1, "an integer >= 1"),
                                      ("m", int, lambda v: v >= 1, "an integer >= 1"),
                                      ("n", int, lambda v: v >= 1, "an integer >= 1"),
                                      ("k", int, lambda v: v >= 1, "an integer >= 1"),
                                      ("kernel_ns", float, lambda v: v > 0, "a number > 0")):
        try:
            value = parse(row[field])
        except ValueError:
            value = None
        if value is None or not valid(value):
            sys.exit(f"fusion-pair-spread: {path}:{line}: field '{field}' = '{row[field]}': must be {rule}")
        row[field] = value
    return row


def spreads(rows):
    """device -> [|s1 / s2 - 1|] over batched rows with two partners, closest first (fewest products on ties)."""
    by_device = collections.defaultdict(list)
    for r in rows:
        by_device[r["device"]].append(r)
    out = collections.defaultdict(list)
    for device, rs in sorted(by_device.items()):
        for b in rs:
            batch = int(b["batch"])
            if batch < 2 or batch > 64:
                continue
            partners = []
            for r in rs:
                if 2 * int(r["batch"]) > batch:
                    continue
                d = max(abs(math.log(int(r[x]) / int(b[x]))) for x in ("m", "n", "k"))
                if d < TOLERANCE:
                    partners.append((d, int(r["batch"]), r))
            if len(partners) < 2:
                continue
            partners.sort(key=lambda p: (p[0], p[1]))
            s1, s2 = (speedup(b, p[2]) for p in partners[:2])
            out[device].append(abs(s1 / s2 - 1))
    return out


def main():
    parser = report_parser(__doc__)
    args = parser.parse_args()
    needed = ("device", "category", "batch", "m", "n", "k", "kernel_ns")
    rows = [checked(args.held_out_csv, line, r)
            for line, r in held_out_rows(args.held_out_csv, needed, "fusion-pair-spread")
            if r["category"] in ("GEMM/linear", "bmm")]
    by_device = spreads(rows)
    every = [v for vs in by_device.values() for v in vs]
    if not every:
        sys.exit(f"fusion-pair-spread: {args.held_out_csv}: no batched row with two partners")
    lines = [
        "## How far apart the fusion pairs' own measurements lie",
        "",
        "Regenerate: `mutwo calibrate --waves --leave-one-out ... --held-out-csv held.csv`, then "
        "`python3 scripts/fusion-pair-spread.py held.csv docs/FIDELITY.md` (scripts/refit-waves.sh runs both). "
        "Each batched product of the fusion check (Fusion measured, above) that has two partners (measured "
        "products of the same GPU, at most half as many per kernel, m, n and k each within 10 %) gives two "
        "measured speed-ups, one per partner; how far apart they lie, |s1 / s2 - 1|, is the pairing's own "
        "spread, measured kernel times only (the leave-one-out's harness rule taken out). The check's "
        "target, a median error of 10 %, lies at this spread.",
        "",
        "| GPU | batched rows with two partners | median spread | mean spread |",
        "|---|---:|---:|---:|",
    ]
    for device, vs in sorted(by_device.items()):
        lines.append(f"| {device} | {len(vs)} | {100 * statistics.median(vs):.1f} % | "
                     f"{100 * statistics.mean(vs):.1f} % |")
    lines.append(f"| every GPU | {len(every)} | {100 * statistics.median(every):.1f} % | "
                 f"{100 * statistics.mean(every):.1f} % |")
    write_section(args.report, "scripts/fusion-pair-spread.py", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

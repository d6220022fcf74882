#!/usr/bin/env python3
"""The GPU's own interval between back-to-back kernels, read off a PyTorch profiler (Kineto) trace.

For each stream, consecutive kernels a, b where b's launch call (its cuda_runtime/runtime event, by
correlation id) had returned before a ended: b was queued, so the idle time between a's end and b's
start is what the device itself spends between two kernels, with no host in it. Prints the count and
the median, 10th and 90th percentiles of those gaps in microseconds (docs/FIDELITY.md, "Back-to-back
kernels"), and the same as JSON with --json.

  python3 scripts/kernel-gaps.py tests/fixtures/kineto/v100_training_rank0.pt.trace.json.gz
"""
import argparse
import gzip
import json
import statistics
import sys
from collections import defaultdict


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"kernel-gaps: {path}: not a readable Kineto JSON trace ({e})")
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        sys.exit(f"kernel-gaps: {path}: field 'traceEvents' is missing or not a list")
    return trace


def queued_gaps_us(events):
    launch_end = {}
    for e in events:
        args = e.get("args") or {}
        if e.get("cat") in ("cuda_runtime", "runtime") and "correlation" in args and "dur" in e:
            launch_end[args["correlation"]] = e["ts"] + e["dur"]
    streams = defaultdict(list)
    for e in events:
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            streams[(e.get("pid"), (e.get("args") or {}).get("stream"))].append(e)
    gaps = []
    for kernels in streams.values():
        kernels.sort(key=lambda e: e["ts"])
        for a, b in zip(kernels, kernels[1:]):
            end = a["ts"] + a["dur"]
            launched = launch_end.get((b.get("args") or {}).get("correlation"))
            if launched is not None and launched <= end and b["ts"] >= end:
                gaps.append(b["ts"] - end)
    return sorted(gaps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    trace = load(args.trace)
    gaps = queued_gaps_us(trace["traceEvents"])
    if not gaps:
        sys.exit(f"kernel-gaps: {args.trace}: no kernel was queued behind another on its stream")

    def pct(p):
        return gaps[round(p * (len(gaps) - 1))]

    out = {"trace": args.trace, "queued_pairs": len(gaps), "median_us": statistics.median(gaps),
           "p10_us": pct(0.10), "p90_us": pct(0.90)}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{args.trace}: {len(gaps)} queued kernel pairs, gap median {out['median_us']:.3f} us "
              f"(p10 {out['p10_us']:.3f}, p90 {out['p90_us']:.3f})")


if __name__ == "__main__":
    main()

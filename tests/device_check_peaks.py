#!/usr/bin/python3
"""The peak-memory rule of the GPU check's CPU dry runs (tests/device_check_dry_run.sh and
tests/device_check_lease_dry_run.sh): on the CPU the executor's peak is its accounting in issue order,
so it equals the simulator's for the one-stream plans (plain, checkpoint) and lies within the 3 %
target where swaps on the copy streams interleave in another order (vdnn, mutwo).

    /usr/bin/python3 tests/device_check_peaks.py WORK_FOLDER MIN_COMPARED

Reads WORK_FOLDER's runs.tsv and compare.json; exit 1, naming each run off, when a matrix run breaks
the rule or fewer than MIN_COMPARED matrix runs finished.
"""
import json
import os
import sys

work, min_compared = sys.argv[1], int(sys.argv[2])
rows = {r["run_id"]: r for r in json.load(open(os.path.join(work, "compare.json")))["rows"]}
bad, compared = [], 0
for line in open(os.path.join(work, "runs.tsv")):
    label, run_id, group = line.split("\t")[:3]
    r = rows[int(run_id)]
    if group != "matrix" or r["status"] != "ok":
        continue
    compared += 1
    one_stream = label.endswith("-plain") or label.endswith("-recompute-checkpoint")
    if (one_stream and r["predicted_peak_bytes"] != r["measured_peak_bytes"]) or abs(r["peak_rel_error"]) > 0.03:
        bad.append(f"{label}: predicted {r['predicted_peak_bytes']} B, measured {r['measured_peak_bytes']} B")
if compared < min_compared:
    bad.append(f"{compared} matrix runs finished, expected at least {min_compared}")
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)

"""The validation report's out-of-memory section: what PyTorch's caching allocator held when a run under
a memory cap failed, read off the error it raised (stored in results.db's measurements.oom_message).
Used by scripts/validation-report.py.

PyTorch's message (c10/cuda/CUDACachingAllocator.cpp) names the request ("Tried to allocate X"), the
cap ("Y allowed", the run's memory_cap_fraction of the device), what tensors hold ("Z is allocated by
PyTorch") and what the allocator keeps but cannot hand out for this request ("W is reserved by PyTorch
but unallocated"). Allocated + requested above the cap: the schedule, as executed, needs more than
the limit it was planned under (the simulator's accounting is short); at or below it: the free bytes
are in pieces too small for the request (the allocator's fragmentation)."""
import re
import sqlite3

UNITS = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}
FIELDS = {
    "request": r"Tried to allocate ([\d.]+) (B|KiB|MiB|GiB)",
    "cap": r"([\d.]+) (B|KiB|MiB|GiB) allowed",
    "allocated": r"([\d.]+) (B|KiB|MiB|GiB) is allocated by PyTorch",
    "unallocated": r"([\d.]+) (B|KiB|MiB|GiB) is reserved by PyTorch but unallocated",
}


def allocator_state(message):
    """The message's figures in MiB, each with its rounding (the message prints two decimals), or None
    when it is not the CUDA caching allocator's."""
    out = {}
    for key, pattern in FIELDS.items():
        m = re.search(pattern, message)
        if not m:
            return None
        out[key] = float(m.group(1)) * UNITS[m.group(2)]
        out[key + "_rounding"] = 0.005 * UNITS[m.group(2)]
    return out


def oom_lines(work_db, manifest, measured_rows):
    """Markdown lines for the matrix runs whose measurement ran out of memory on a GPU, and the runs of
    the "allocator" group (multiplexed plans again under PyTorch's expandable segments), ([] when none)."""
    db = sqlite3.connect(f"file:{work_db}?mode=ro", uri=True)
    try:
        messages = dict(db.execute("SELECT run_id, oom_message FROM measurements WHERE oom = 1").fetchall())
    finally:
        db.close()
    rows = []
    for row in manifest:
        run_id = int(row["run_id"])
        c = measured_rows.get(run_id, {})
        predicted = c.get("predicted_peak_bytes")
        if row["group"] == "allocator" and c.get("status") == "ok":
            # A plan run under PyTorch's expandable segments that completed (scripts/device-check.sh).
            peak = c.get("measured_peak_bytes")
            rows.append(f"| {row['label']} | yes | {int(row['memory_limit_bytes']) / 2**20:.0f} MiB | "
                        + (f"{predicted / 2**20:.0f} MiB" if predicted else "-") + " | - | "
                        + (f"{peak / 2**20:.0f} MiB (peak)" if peak else "-") + " | - | - | - | ran within its cap |")
            continue
        if row["group"] not in ("matrix", "allocator") or run_id not in messages:
            continue
        state = allocator_state(messages[run_id])
        if state is None:
            continue
        fits = {"measured OOM": "yes", "both OOM": "no"}.get(c.get("status"), "-")
        need = state["allocated"] + state["request"]
        rounding = state["allocated_rounding"] + state["request_rounding"] + state["cap_rounding"]
        if abs(need - state["cap"]) <= rounding:
            cause = "at the cap (within the message's rounding)"
        else:
            cause = "over the cap" if need > state["cap"] else "fragmentation"
        rows.append(f"| {row['label']} | {fits} | {int(row['memory_limit_bytes']) / 2**20:.0f} MiB | "
                    + (f"{predicted / 2**20:.0f} MiB" if predicted else "-")
                    + f" | {state['cap']:.0f} MiB | {state['allocated']:.0f} MiB | {state['request']:.0f} MiB | "
                      f"{100 * need / state['cap']:.1f} % | {state['unallocated']:.0f} MiB "
                      f"({100 * state['unallocated'] / state['cap']:.1f} %) | {cause} |")
    if not rows:
        return []
    lines = ["## Runs that ran out of memory: what the allocator held", "",
             "Each run under a memory cap that failed on the device (simulated to fit: whether the simulator had "
             "the plan within its limit), from PyTorch's own error (the caching "
             "allocator's figures at the failing request; `scripts/validation_oom.py`). Need = allocated + "
             "requested, as a share of the cap: above 100 % the schedule as executed needs more than the plan's "
             "limit (the simulator's accounting is short); below it the cap still had room, held by the allocator "
             "in pieces too small for the request (fragmentation, the reserved but unallocated column). PyTorch "
             "prints GiB to two decimals, so each figure is known to 5 MiB. Runs labelled -expandable ran the "
             "same plan under PyTorch's expandable segments (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`).",
             "",
             "| run | simulated to fit | plan's limit | predicted peak | cap | allocated | request | need / cap | "
             "reserved, unallocated | cause |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    return lines + rows + [""]

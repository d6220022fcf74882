#!/usr/bin/python3
"""Fault injection on the results database (issue 20): `mutwo experiment` and `mutwo db merge` killed
with SIGKILL at many points, then checked, resumed and compared with an uninterrupted run.

    /usr/bin/python3 scripts/kill-experiment.py build/cli/mutwo [--kills 12] [--sweep small]

A strategies sweep of bert-mini and resnet-mini arrays (48 configurations x 4 strategies, a few
seconds with one job; `--sweep small`: 12 of them, for a sanitized build where every sweep is 13
times slower and the kills, 30 to 430 ms in, land in its first configuration anyway) runs
uninterrupted into ref.db. Then into one database, again and again: start the same
sweep (it resumes where the last one was killed), SIGKILL it 30 to 430 ms in, and after every kill
check `PRAGMA integrity_check` and that no configuration is stored twice; finally run it to the end.
Its rows must equal ref.db's: the same configurations, series, feasibility and metric values (run
ids and timestamps aside). The same for `mutwo db merge` of two shards into one file, killed while
it writes. Exit status 1 on any difference, with what differs.
"""
import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

SPEC = """name = "killed"
title = "SIGKILL fault injection"
kind = "strategies"
figures = ["breakdown"]
[sweep]
{models}
gpus = ["a100-40gb"]
memory_limits = ["device", "1.6MiB"]
strategies = ["sequential", "hfta", "hfta+capuchin", "mutwo"]
"""


SWEEPS = {
    "full": """models = [{ name = "bert-mini", batch_sizes = [2, 4, 8, 16] }, { name = "resnet-mini", batch_sizes = [2, 4] }]
model_counts = [2, 3, 4, 5]""",
    "small": """models = [{ name = "bert-mini", batch_sizes = [2, 4] }, { name = "resnet-mini", batch_sizes = [2] }]
model_counts = [2, 3]""",
}


def rows(db):
    """The stored experiment rows, as comparable tuples (config, series, feasible, metrics)."""
    con = sqlite3.connect(db)
    try:
        out = []
        for run_id, config, series, feasible in con.execute(
                "SELECT r.run_id, r.config, r.series, r.feasible FROM experiment_rows r ORDER BY r.run_id"):
            metrics = tuple(con.execute("SELECT name, value FROM experiment_metrics WHERE run_id = ? ORDER BY name",
                                        (run_id,)))
            out.append((config, series, feasible, metrics))
        return out
    finally:
        con.close()


def check(db, what):
    """integrity_check is ok and no configuration's row is stored twice; returns the problems."""
    if not os.path.exists(db):
        return []
    con = sqlite3.connect(db)
    try:
        problems = []
        verdict = con.execute("PRAGMA integrity_check").fetchall()
        if verdict != [("ok",)]:
            problems.append(f"{what}: integrity_check says {verdict}")
        tables = {t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return problems  # killed while creating the file: no schema yet, the next open writes it
        if "runs" not in tables or "experiment_rows" not in tables:
            return problems + [f"{what}: a partial schema ({sorted(tables)})"]
        dup = con.execute("SELECT config_hash, mutwo_version, COUNT(*) FROM runs GROUP BY config_hash, mutwo_version "
                          "HAVING COUNT(*) > 1").fetchall()
        if dup:
            problems.append(f"{what}: {len(dup)} configurations stored twice, e.g. {dup[0]}")
        orphans = con.execute("SELECT COUNT(*) FROM experiment_metrics m LEFT JOIN experiment_rows r "
                              "ON r.run_id = m.run_id WHERE r.run_id IS NULL").fetchone()[0]
        if orphans:
            problems.append(f"{what}: {orphans} metrics without their row")
        return problems
    finally:
        con.close()


def killed(command, cwd, delay):
    p = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    finished = p.poll() is not None
    if not finished:
        p.send_signal(signal.SIGKILL)
    p.wait()
    return finished


def compare(name, got, want):
    if sorted(got) == sorted(want) and len(got) == len(want):
        return []
    missing = len(set(want) - set(got))
    extra = len(got) - len(set(got))
    return [f"{name}: {len(got)} rows vs {len(want)} uninterrupted; {missing} missing, {extra} duplicated"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mutwo")
    parser.add_argument("--kills", type=int, default=12, help="kills per phase")
    parser.add_argument("--sweep", choices=sorted(SWEEPS), default="full", help="the sweep's size")
    args = parser.parse_args()
    mutwo = os.path.abspath(args.mutwo)
    work = tempfile.mkdtemp(prefix="mutwo-kill-")
    spec = os.path.join(work, "killed.toml")
    with open(spec, "w") as f:
        f.write(SPEC.replace("{models}", SWEEPS[args.sweep]))
    run = lambda db, *extra: [mutwo, "experiment", spec, "--db", db, "--out", work, "--jobs", "1", *extra]

    start = time.monotonic()
    subprocess.run(run(os.path.join(work, "ref.db")), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    length = time.monotonic() - start
    want = rows(os.path.join(work, "ref.db"))
    problems, kills = [], 0
    db = os.path.join(work, "killed.db")
    for k in range(args.kills):
        delay = 0.03 + 0.1 * (k % 5)  # 30 ms to 430 ms into each attempt, which resumes the last
        if not killed(run(db), work, delay):
            kills += 1
        problems += check(db, f"after the kill at {delay:.2f} s")
    subprocess.run(run(db), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    problems += check(db, "resumed") + compare("experiment killed and resumed", rows(db), want)

    # db merge: two shards merged into one file, killed while it writes, then merged again.
    shards = []
    for i in range(2):
        shard = os.path.join(work, f"shard{i}.db")
        subprocess.run(run(shard, "--shard", f"{i}/2"), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shards.append(shard)
    start = time.monotonic()
    subprocess.run([mutwo, "db", "merge", os.path.join(work, "merged_ref.db"), *shards], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    merge_length = time.monotonic() - start
    merged = os.path.join(work, "merged.db")
    merge_kills = 0
    for k in range(args.kills):
        delay = 0.002 + 0.004 * k  # a merge takes tens of milliseconds
        if not killed([mutwo, "db", "merge", merged, *shards], work, delay):
            merge_kills += 1
        problems += check(merged, f"after the merge kill at {delay:.3f} s")
    subprocess.run([mutwo, "db", "merge", merged, *shards], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    problems += check(merged, "merged again") + compare("merge killed and redone", rows(merged), want)

    print(f"kill-experiment: sweep of {len(want)} rows ({length:.1f} s) killed {kills} times, merge "
          f"({merge_length:.2f} s) killed {merge_kills} times; {len(problems)} problems")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Draws the figures of mutwo experiments from a results database (schema version 2).

  python3 scripts/plot.py results.db [--experiment NAME ...] [--out DIR] [--format png,pdf]

For every experiment in the table `experiments` (or only those named), draws each figure its
`figures` JSON array lists, into DIR/<experiment>-<figure>.<format> (DIR defaults to results/),
and prints each written path on its own line. experiments/README.md is the contract: the rows,
config keys and metrics of each experiment kind and the axes of each figure. Readers take the
latest row per configuration (per runs.config_hash within an experiment: the latest created_at,
then the highest run id);
`predicted_vs_measured` instead takes every `runs` row of kind 'run' with a prediction and a
measurement, neither OOM.

The database is opened read-only. Errors (no such file, not a schema-v2 mutwo results database,
an experiment named but absent, an unknown figure, a figure of another kind, nothing to draw)
print one line `plot.py: error: ...` on stderr and exit with status 1; files written before the
error stay. Needs only Python 3 and matplotlib >= 3.5 (Debian 12: apt-get install python3-matplotlib).
"""
import argparse
import json
import os
import pathlib
import sqlite3
import sys

try:
    import matplotlib
except ImportError:
    sys.exit(f"plot.py: error: matplotlib is not installed for {sys.executable} (Debian: apt-get install "
             "python3-matplotlib and run /usr/bin/python3 scripts/plot.py; or pip install matplotlib)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The figures, one module per family of experiment kinds, each registering its figures in FIGURES.
from plotting import fidelity, search, server  # noqa: E402,F401
from plotting.parts import FIGURES, PlotError  # noqa: E402

SCHEMA_VERSION = 2
FORMATS = ("png", "pdf")

# ----------------------------------------------------------------------------- database

def read_mode(path):
    """How to read a results database leaving nothing beside it, as mutwo does (experiments/sqlite.hpp,
    read_only): SQLite's mode=ro makes -wal and -shm files on a WAL database, leaves them, and fails in a
    folder the user cannot write to."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.access(path, os.W_OK) and os.access(folder, os.W_OK):
        return "mode=rw"  # only read; the last connection's close removes -wal and -shm
    if not os.path.exists(path + "-wal"):
        return "mode=ro&immutable=1"
    if not os.access(folder, os.W_OK) and not os.path.exists(path + "-shm"):
        raise PlotError(f"{path} cannot be read: a writer left {path}-wal beside it, and SQLite must then "
                        f"make its -shm file in {folder}, which this user cannot write to")
    return "mode=ro"


def open_db(path):
    if not os.path.exists(path):
        raise PlotError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise PlotError(f"{path} is not a regular file (expected a mutwo results database)")
    try:
        conn = sqlite3.connect(pathlib.Path(path).resolve().as_uri() + "?" + read_mode(path), uri=True)
        conn.row_factory = sqlite3.Row
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as e:
        raise PlotError(f"{path}: cannot read it as an SQLite database ({e})") from None
    if "schema_version" not in tables:
        raise PlotError(f"{path} is not a mutwo results database (it has no table 'schema_version')")
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_version")]
    if len(versions) != 1:
        raise PlotError(f"{path} has {len(versions)} rows in schema_version, expected 1")
    if versions != [SCHEMA_VERSION]:
        raise PlotError(f"{path} has schema version {versions[0]}; plot.py reads "
                        f"version {SCHEMA_VERSION} (`mutwo experiment SPEC --db {path}` upgrades it)")
    missing = {"runs", "predictions", "measurements", "experiments", "experiment_rows",
               "experiment_metrics"} - tables
    if missing:
        raise PlotError(f"{path} is not a mutwo results database (no table {', '.join(sorted(missing))})")
    return conn


def load_experiments(conn, path, names):
    found = {r["name"]: dict(r) for r in conn.execute("SELECT name, kind, title, figures FROM experiments")}
    if names:
        absent = [n for n in names if n not in found]
        if absent:
            raise PlotError(f"experiment '{absent[0]}' is not in {path} (it has: {', '.join(sorted(found)) or 'none'})")
        selected = list(dict.fromkeys(names))
    elif not found:
        raise PlotError(f"{path} has no experiments (run `mutwo experiment SPEC --db {path}` first)")
    else:
        selected = sorted(found)
    experiments = []
    for name in selected:
        exp = found[name]
        try:
            figures = json.loads(exp["figures"])
        except ValueError:
            figures = None
        if not isinstance(figures, list) or not all(isinstance(f, str) for f in figures):
            raise PlotError(f"experiment '{name}' in {path}: figures is not a JSON array of names: {exp['figures']!r}")
        for fig_name in figures:
            if fig_name not in FIGURES:
                raise PlotError(f"experiment '{name}' lists unknown figure '{fig_name}' "
                                f"(known: {', '.join(sorted(FIGURES))})")
            if FIGURES[fig_name].kind != exp["kind"]:
                raise PlotError(f"experiment '{name}' (kind {exp['kind']}) lists figure '{fig_name}', "
                                f"which draws kind {FIGURES[fig_name].kind}")
        experiments.append(dict(exp, figures=figures))
    return experiments


# The latest by when it ran, then by id (experiments/results_db_experiments.cpp, the same rule).
LATEST = """SELECT id FROM (
              SELECT e2.run_id AS id, ROW_NUMBER() OVER (PARTITION BY r2.config_hash
                                                         ORDER BY r2.created_at DESC, e2.run_id DESC) AS k
              FROM experiment_rows e2 JOIN runs r2 ON r2.id = e2.run_id WHERE e2.experiment = ?)
            WHERE k = 1"""


def load_rows(conn, experiment):
    """The latest row per configuration: dicts of series, feasible, config, metrics, run (runs columns)."""
    metrics = {}
    for m in conn.execute(f"SELECT run_id, name, value FROM experiment_metrics WHERE run_id IN ({LATEST})",
                          (experiment,)):
        metrics.setdefault(m["run_id"], {})[m["name"]] = m["value"]
    rows = []
    for r in conn.execute(f"""SELECT e.run_id, e.series, e.feasible, e.config, r.*, p.samples_per_step
                              FROM experiment_rows e JOIN runs r ON r.id = e.run_id
                              LEFT JOIN predictions p ON p.run_id = e.run_id
                              WHERE e.run_id IN ({LATEST}) ORDER BY e.run_id""", (experiment,)):
        try:
            config = json.loads(r["config"])
        except ValueError:
            raise PlotError(f"experiment '{experiment}': run {r['run_id']} has a config that is not JSON") from None
        rows.append({"series": r["series"], "feasible": bool(r["feasible"]), "config": config, "run": dict(r),
                     "metrics": metrics.get(r["run_id"], {}), "samples_per_step": r["samples_per_step"]})
    return rows


def load_measured(conn):
    return [dict(r) for r in conn.execute(
        """SELECT r.id, r.model, r.models, r.batch_size, r.device, r.cost_source, r.mutwo_version,
                  p.step_time_ns AS predicted_ns, m.step_time_ns AS measured_ns
           FROM runs r JOIN predictions p ON p.run_id = r.id JOIN measurements m ON m.run_id = r.id
           WHERE r.kind = 'run' AND p.oom = 0 AND m.oom = 0 AND p.step_time_ns > 0 AND m.step_time_ns > 0
           ORDER BY r.id""")]


# ----------------------------------------------------------------------------- main

def draw(conn, path, exp, fig_name, out_dir, formats):
    if exp["kind"] == "measured":
        rows = load_measured(conn)
        if not rows:
            raise PlotError(f"{path}: figure {fig_name} of experiment '{exp['name']}' has nothing to draw "
                            "(no runs of kind 'run' with a prediction and a measurement, neither OOM)")
    else:
        rows = load_rows(conn, exp["name"])
        if not rows:
            raise PlotError(f"{path}: figure {fig_name} of experiment '{exp['name']}' has nothing to draw "
                            f"(no experiment rows; run `mutwo experiment {exp['name']} --db {path}` first)")
    fig = FIGURES[fig_name](exp, rows)
    try:
        for fmt in formats:
            target = os.path.join(out_dir, f"{exp['name']}-{fig_name}.{fmt}")
            try:
                fig.savefig(target, bbox_inches="tight",
                            **({"metadata": {"CreationDate": None}} if fmt == "pdf" else {}))
            except OSError as e:
                raise PlotError(f"cannot write {target}: {e.strerror or e}") from None
            print(target, flush=True)
    finally:
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", metavar="DB", help="mutwo results database (schema version 2)")
    parser.add_argument("--experiment", metavar="NAME", nargs="+", action="extend", default=[],
                        help="draw only these experiments (repeatable; default: every experiment in DB)")
    parser.add_argument("--out", metavar="DIR", default="results", help="output directory (default: results)")
    parser.add_argument("--format", default="png,pdf", help="comma-separated: png, pdf (default: png,pdf)")
    args = parser.parse_args(argv)
    try:
        formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
        bad = [f for f in formats if f not in FORMATS]
        if bad or not formats:
            raise PlotError(f"unknown format '{(bad or [args.format])[0]}' (use png, pdf or png,pdf)")
        conn = open_db(args.db)
        try:
            experiments = load_experiments(conn, args.db, args.experiment)
            try:
                os.makedirs(args.out, exist_ok=True)
            except OSError as e:
                raise PlotError(f"cannot create {args.out}: {e.strerror or e}") from None
            for exp in experiments:
                for fig_name in exp["figures"]:
                    draw(conn, args.db, exp, fig_name, args.out, list(dict.fromkeys(formats)))
        except sqlite3.Error as e:
            raise PlotError(f"{args.db}: {e}") from None
        finally:
            conn.close()
    except PlotError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

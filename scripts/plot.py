#!/usr/bin/env python3
"""Draws the figures of mutwo experiments from a results database (schema version 2).

  python3 scripts/plot.py results.db [--experiment NAME ...] [--out DIR] [--format png,pdf]

For every experiment in the table `experiments` (or only those named), draws each figure its
`figures` JSON array lists, into DIR/<experiment>-<figure>.<format> (DIR defaults to results/),
and prints each written path on its own line. experiments/README.md is the contract: the rows,
config keys and metrics of each experiment kind and the axes of each figure. Readers take the
latest row per configuration (highest run id per runs.config_hash within an experiment);
`predicted_vs_measured` instead takes every `runs` row of kind 'run' with a prediction and a
measurement, neither OOM.

The database is opened read-only. Errors (no such file, not a schema-v2 mutwo results database,
an experiment named but absent, an unknown figure, a figure of another kind, nothing to draw)
print one line `plot.py: error: ...` on stderr and exit with status 1; files written before the
error stay. Needs only Python 3 and matplotlib >= 3.5 (Debian 12: apt-get install python3-matplotlib).
"""
import argparse
import json
import math
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
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

SCHEMA_VERSION = 2
FORMATS = ("png", "pdf")
STRATEGY_ORDER = ("sequential", "hfta", "hfta+capuchin", "mutwo")
# Fixed colours for the names that recur across figures; any other series takes the next unused
# colour of PALETTE in sorted order.
COLOURS = {"sequential": "#7f7f7f", "hfta": "#1f77b4", "hfta+capuchin": "#ff7f0e", "mutwo": "#d62728",
           "capuchin": "#ff7f0e", "dtr": "#2ca02c", "none": "#7f7f7f"}
PALETTE = ("#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#1f77b4", "#2ca02c", "#ff7f0e",
           "#7f7f7f", "#d62728")
GIB = float(1 << 30)

plt.rcParams.update({"pdf.fonttype": 42, "font.size": 9, "axes.titlesize": 9, "legend.fontsize": 8,
                     "figure.dpi": 100, "savefig.dpi": 150})


class PlotError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


# ----------------------------------------------------------------------------- database

def open_db(path):
    if not os.path.exists(path):
        raise PlotError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise PlotError(f"{path} is not a regular file (expected a mutwo results database)")
    try:
        conn = sqlite3.connect(pathlib.Path(path).resolve().as_uri() + "?mode=ro", uri=True)
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


LATEST = """SELECT MAX(e2.run_id) FROM experiment_rows e2 JOIN runs r2 ON r2.id = e2.run_id
            WHERE e2.experiment = ? GROUP BY r2.config_hash"""


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


# ----------------------------------------------------------------------------- helpers

def get(row, key):
    """A configuration value, from the config JSON or else the runs column of that name."""
    return row["config"].get(key, row["run"].get(key))


def distinct(values):
    return ", ".join(sorted({str(v) for v in values if v not in (None, "")})) or "?"


def gib(n):
    return f"{n / GIB:.3g} GiB"


def series_order(names):
    names = set(names)
    return [s for s in STRATEGY_ORDER if s in names] + sorted(names - set(STRATEGY_ORDER))


def colours(names):
    """Fixed colours for known names, the unused PALETTE colours (cycled) for the others in order."""
    taken = {COLOURS[n] for n in names if n in COLOURS}
    spare = [c for c in PALETTE if c not in taken] or list(PALETTE)
    out = {n: spare[i % len(spare)] for i, n in enumerate(n for n in names if n not in COLOURS)}
    out.update({n: COLOURS[n] for n in names if n in COLOURS})
    return out


def setup_line(kind, runs):
    """The title's second line, from the runs rows drawn: what was simulated or measured, and by which mutwo."""
    versions = "mutwo " + distinct(r["mutwo_version"] for r in runs)
    if kind == "dtr":
        return " · ".join(["DTR logs (Kirisame et al., ICLR 2021)", "simrd protocol", versions])
    if kind == "measured":
        return " · ".join([distinct(r["device"] for r in runs),
                           f"predicted by the {distinct(r['cost_source'] for r in runs)} cost model", versions])
    if kind == "published":
        return " · ".join([distinct(r["gpu"] for r in runs), "published measurements (docs/published_throughput.csv)",
                           versions])
    parts = [distinct(r["gpu"] for r in runs)]
    limits = {r["memory_limit_bytes"] for r in runs}
    if kind == "strategies" and len(limits) == 1 and min(limits) > 0:
        parts.append(f"limit {gib(min(limits))}")
    parts += [distinct(r["cost_source"] for r in runs) + " cost model", distinct(r["dtype"] for r in runs),
              distinct(r["optimizer"] for r in runs), versions]
    return " · ".join(parts)


def new_figure(exp, runs, n, panel=(3.4, 2.7), nrows=None, ncols=None):
    """A constrained-layout figure with a grid of panels (cells past n removed) and the two-line title."""
    if ncols is None:
        ncols = n if n <= 4 else (3 if n in (5, 6, 9) else 4)
        nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel[0] * ncols + 0.8, panel[1] * nrows + 0.9),
                             squeeze=False, layout="constrained")
    for ax in list(axes.flat)[n:]:
        fig.delaxes(ax)
    fig.suptitle(f"{exp['title']}\n{setup_line(exp['kind'], runs)}")
    return fig, axes, list(axes.flat)[:n]


def line_handles(series, colour):
    return [Line2D([], [], marker="o", ms=4, color=colour[s], label=s) for s in series]


def legend_below(fig, handles):
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(handles), 4),
               frameon=False)


def feasible_line(ax, xs, by_x, metric, colour, scale=1.0):
    """A line over xs through metric of the feasible row at each x; a gap where the row does not fit.
    Returns the values drawn and whether a row was left out."""
    ys = [by_x[x]["metrics"].get(metric, math.nan) if x in by_x and by_x[x]["feasible"] else math.nan for x in xs]
    ax.plot([x * scale for x in xs], ys, marker="o", ms=4, color=colour)
    return [y for y in ys if not math.isnan(y)], any(x in by_x and math.isnan(y) for x, y in zip(xs, ys))


def panel_key(row):
    return (get(row, "model"), get(row, "batch_size"), get(row, "gpu"), get(row, "memory_limit_bytes"))


def panel_title(key, keys, batch=True):
    """model[, batch b], plus the GPU and the memory limit where they differ between panels."""
    parts = [key[0]] + ([f"batch {key[1]}"] if batch else [])
    if len({k[2] for k in keys}) > 1:
        parts.append(key[2])
    if len({k[3] for k in keys}) > 1:
        parts.append(f"limit {gib(key[3])}")
    return ", ".join(parts)


FIGURES = {}


def figure(kind):
    """Registers a figure function under its name; kind is the experiment kind it draws."""
    def register(fn):
        fn.kind = kind
        FIGURES[fn.__name__] = fn
        return fn
    return register


# ----------------------------------------------------------------------------- figures

@figure("strategies")
def step_time_vs_models(exp, rows):
    if not any(r["series"] == "hfta" for r in rows):
        raise PlotError(f"experiment '{exp['name']}': figure step_time_vs_models normalises to hfta, "
                        "but the experiment has no hfta rows")
    hfta = {panel_key(r) + (get(r, "models"),): r["metrics"].get("step_time_ns")
            for r in rows if r["series"] == "hfta" and r["feasible"]}
    keys = sorted({panel_key(r) for r in rows})
    series = series_order(r["series"] for r in rows)
    colour = colours(series)
    fig, _, axes = new_figure(exp, [r["run"] for r in rows], len(keys))
    marks = set()
    for ax, key in zip(axes, keys):
        panel = [r for r in rows if panel_key(r) == key]
        counts = sorted({get(r, "models") for r in panel})
        top = 1.0
        for i, s in enumerate(series):
            by_count = {get(r, "models"): r for r in panel if r["series"] == s}
            ys, no_fit, no_hfta = [], [], []
            for n in counts:
                r, base = by_count.get(n), hfta.get(key + (n,))
                ys.append(r["metrics"].get("step_time_ns", math.nan) / base if r and r["feasible"] and base
                          else math.nan)
                if r and math.isnan(ys[-1]):
                    (no_hfta if r["feasible"] else no_fit).append(n)
            ax.plot(counts, ys, marker="o", ms=4, color=colour[s])
            top = max([top] + [y for y in ys if not math.isnan(y)])
            # Points without a ratio sit in a band under the top edge, one height per series.
            for xs, marker, face in ((no_fit, "x", colour[s]), (no_hfta, "^", "none")):
                if xs:
                    marks.add(marker)
                    ax.scatter(xs, [0.95 - 0.045 * i] * len(xs), marker=marker, s=28, color=colour[s],
                               facecolors=face, transform=ax.get_xaxis_transform(), clip_on=False, zorder=3)
        ax.axhline(1.0, ls="--", lw=0.8, color="black")
        ax.set_ylim(0, top * 1.35)
        ax.set_xticks(counts)
        ax.set_xlim(min(counts) - 0.08 * (max(counts) - min(counts)) - 0.5,
                    max(counts) + 0.08 * (max(counts) - min(counts)) + 0.5)
        ax.set_title(panel_title(key, keys))
        ax.grid(alpha=0.3)
    fig.supxlabel("models in the array")
    fig.supylabel("step time / HFTA's (lower is better)")
    handles = line_handles(series, colour) + [Line2D([], [], ls="--", lw=0.8, color="black", label="HFTA (= 1)")]
    if "x" in marks:
        handles.append(Line2D([], [], ls="", marker="x", color="black", label="x: does not fit"))
    if "^" in marks:
        handles.append(Line2D([], [], ls="", marker="^", mfc="none", color="black", label="fits; HFTA does not"))
    legend_below(fig, handles)
    return fig


@figure("strategies")
def throughput_vs_batch(exp, rows):
    """Samples/s against batch size per model and array size, one line per strategy and lean ops
    (transforms/lean_ops.hpp): a line ends where its batch no longer fits; the largest batch that fits
    is marked and labelled."""
    def key(r):
        return (get(r, "model"), get(r, "models"), get(r, "gpu"), get(r, "memory_limit_bytes"))
    keys = sorted({key(r) for r in rows}, key=lambda k: (str(k[0]), k[1], str(k[2]), k[3]))
    rank = {s: i for i, s in enumerate(STRATEGY_ORDER)}
    lines = sorted({(r["series"], get(r, "lean_ops") or "none") for r in rows},
                   key=lambda sl: (rank.get(sl[0], len(rank)), sl[1]))
    names = [f"{s}, lean {l}" for s, l in lines]
    colour = colours(names)
    fig, _, axes = new_figure(exp, [r["run"] for r in rows], len(keys))
    for ax, k in zip(axes, keys):
        for (s, l), name in zip(lines, names):
            by_x = {get(r, "batch_size"): r for r in rows
                    if key(r) == k and r["series"] == s and (get(r, "lean_ops") or "none") == l}
            xs = sorted(by_x)
            if not xs:
                continue
            style = "-" if l == "none" else "--"
            ys = [by_x[x]["metrics"].get("samples_per_s", math.nan) if by_x[x]["feasible"] else math.nan for x in xs]
            ax.plot(xs, ys, style, marker="o", ms=3.5, color=colour[name])
            fits = [x for x in xs if by_x[x]["feasible"]]
            if fits:
                top = max(fits)
                ax.annotate(str(top), (top, by_x[top]["metrics"]["samples_per_s"]), xytext=(3, 3),
                            textcoords="offset points", fontsize=7, color=colour[name])
        model, models = k[0], k[1]
        ax.set_title(f"{model} x{models}" + (f", {k[2]}" if len({kk[2] for kk in keys}) > 1 else ""))
        ax.set_xlabel("batch size per model")
        ax.set_ylabel("samples / s")
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], ls="-" if n.endswith("none") else "--", marker="o", ms=4, color=colour[n], label=n)
               for n in names]
    legend_below(fig, handles)
    return fig


BREAKDOWN_ROWS = (("recompute_over_compute", "recompute time /\ncompute time"),
                  ("swap_overlap_ratio", "swap time hidden\nbehind compute"),
                  ("peak_over_limit", "peak memory /\nlimit"))


@figure("strategies")
def breakdown(exp, rows):
    def column(r):
        return (get(r, "model"), None, get(r, "gpu"), get(r, "memory_limit_bytes"))
    keys = sorted({column(r) for r in rows})
    series = series_order(r["series"] for r in rows)
    colour = colours(series)
    cell = {(column(r), r["series"], get(r, "batch_size"), get(r, "models")): r for r in rows}
    groups_of = {k: sorted({(b, n) for c, _, b, n in cell if c == k}) for k in keys}
    # One column of three panels per model, wrapped into blocks of 3 columns (4 where that fills the grid).
    ncols = len(keys) if len(keys) <= 4 else (4 if len(keys) % 4 == 0 else 3)
    blocks, per = math.ceil(len(keys) / ncols), len(BREAKDOWN_ROWS)
    width = max(len(g) for g in groups_of.values())
    fig, axes, _ = new_figure(exp, [r["run"] for r in rows], per * blocks * ncols,
                              panel=(max(2.8, 0.6 * width), 1.9), nrows=per * blocks, ncols=ncols)
    for col in range(len(keys) % ncols or ncols, ncols):
        for line in range(per):
            fig.delaxes(axes[per * (blocks - 1) + line][col])
    bar, no_fit = 0.8 / len(series), False
    for index, key in enumerate(keys):
        groups = groups_of[key]
        batches = sorted({b for b, _ in groups})
        block, col = divmod(index, ncols)
        for line, (metric, label) in enumerate(BREAKDOWN_ROWS):
            ax, drawn = axes[per * block + line][col], False
            for i, s in enumerate(series):
                for g, (b, n) in enumerate(groups):
                    r = cell.get((key, s, b, n))
                    if r is None:
                        continue
                    x, value = g - 0.4 + bar * (i + 0.5), r["metrics"].get(metric)
                    if r["feasible"] and value is not None:
                        ax.bar(x, value, bar, color=colour[s])
                        drawn = drawn or value > 0
                    elif not r["feasible"] and value is not None:  # peak/limit of a plan that does not fit
                        ax.bar(x, value, bar, color="white", edgecolor=colour[s], hatch="////", lw=0.8)
                        no_fit = drawn = True
                    elif not r["feasible"]:
                        ax.scatter([x], [0], marker="x", s=20, color=colour[s], clip_on=False, zorder=3)
                        no_fit = True
            if metric == "peak_over_limit":
                ax.axhline(1.0, ls="--", lw=0.8, color="black")
            if metric == "swap_overlap_ratio":
                ax.set_ylim(0, 1.05)
            if not drawn:
                ax.text(0.5, 0.5, "nothing swapped" if metric == "swap_overlap_ratio" else "none",
                        transform=ax.transAxes, ha="center", va="center", color="0.5")
            ax.set_xticks(range(len(groups)), [str(n) for _, n in groups])
            ax.tick_params(axis="x", labelbottom=line == per - 1)
            ax.set_xlim(-0.6, len(groups) - 0.4)
            for b in batches if len(batches) > 1 else []:  # counts in blocks per batch size
                at = [g for g, (gb, _) in enumerate(groups) if gb == b]
                if at[0] > 0:
                    ax.axvline(at[0] - 0.5, color="0.6", lw=0.8)
                if line == per - 1:
                    ax.annotate(f"batch {b}", ((at[0] + at[-1]) / 2, 0), xycoords=("data", "axes fraction"),
                                xytext=(0, -18), textcoords="offset points", ha="center", va="top")
            ax.grid(axis="y", alpha=0.3)
            if line == 0:
                ax.set_title(panel_title(key, keys, batch=False))
            if col == 0:
                ax.set_ylabel(label)
    fig.supxlabel("models in the array")
    handles = [Patch(color=colour[s], label=s) for s in series]
    handles.append(Line2D([], [], ls="--", lw=0.8, color="black", label="peak = limit"))
    if no_fit:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////",
                             label="does not fit: smallest limit its plan meets"))
        handles.append(Line2D([], [], ls="", marker="x", color="black", label="x: does not fit"))
    legend_below(fig, handles)
    return fig


@figure("policies")
def throughput_vs_memory(exp, rows):
    def array(r):
        return (get(r, "model"), get(r, "models"), get(r, "batch_size"), get(r, "gpu"))
    keys = sorted({array(r) for r in rows})
    series = sorted({r["series"] for r in rows})
    colour = colours(series)
    fig, _, axes = new_figure(exp, [r["run"] for r in rows], len(keys), panel=(5.0, 3.4))
    handles, omitted = line_handles(series, colour), False
    for ax, key in zip(axes, keys):
        panel = [r for r in rows if array(r) == key]
        fractions = sorted({r["metrics"]["memory_fraction"] for r in panel if "memory_fraction" in r["metrics"]})
        drawn = []
        for s in series:
            by_fraction = {r["metrics"].get("memory_fraction"): r for r in panel if r["series"] == s}
            ys, left_out = feasible_line(ax, fractions, by_fraction, "samples_per_s", colour[s], scale=100)
            drawn, omitted = drawn + ys, omitted or left_out
        # Unoptimised throughput: samples per step (the prediction's, else derived from a feasible row)
        # over the unoptimised step time.
        step = next((r["metrics"]["unoptimised_step_time_ns"] for r in panel
                     if r["metrics"].get("unoptimised_step_time_ns")), None)
        samples = next((r["samples_per_step"] for r in panel if r["samples_per_step"]), None) or next(
            (round(r["metrics"]["samples_per_s"] * r["metrics"]["step_time_ns"] / 1e9) for r in panel
             if r["feasible"] and "step_time_ns" in r["metrics"] and "samples_per_s" in r["metrics"]), None)
        if step and samples:
            drawn.append(samples * 1e9 / step)
            ax.axhline(drawn[-1], ls=":", color="black", lw=1)
            if not any(h.get_label() == "unoptimised (no limit)" for h in handles):
                handles.append(Line2D([], [], ls=":", color="black", label="unoptimised (no limit)"))
        ax.set_ylim(0, max(drawn, default=1) * 1.08)
        ax.set_xticks([100 * f for f in fractions], [f"{100 * f:g}" for f in fractions])
        ax.set_xlabel("memory limit (% of the unoptimised peak)")
        ax.set_ylabel("throughput (samples/s)")
        ax.set_title(f"{key[1]} x {key[0]}, batch {key[2]}" + (f", {key[3]}" if len({k[3] for k in keys}) > 1 else ""))
        ax.grid(alpha=0.3)
    if omitted:
        handles.append(Line2D([], [], ls="", label="missing point: does not fit"))
    legend_below(fig, handles)
    return fig


@figure("dtr")
def overhead_vs_budget(exp, rows):
    def log(r):
        return r["run"]["model"] or r["config"].get("log", "")
    def ratio(r):
        return r["metrics"].get("budget_ratio", r["config"].get("budget_ratio"))
    logs = sorted({log(r) for r in rows})
    series = sorted({r["series"] for r in rows})
    colour = colours(series)
    limit = max((r["config"]["overhead_limit"] for r in rows if r["config"].get("overhead_limit")), default=None)
    fig, _, axes = new_figure(exp, [r["run"] for r in rows], len(logs), panel=(3.6, 2.9))
    omitted = False
    for ax, name in zip(axes, logs):
        panel = [r for r in rows if log(r) == name]
        ratios = sorted({ratio(r) for r in panel if ratio(r) is not None})
        drawn = [limit or 1.0]
        for s in series:
            ys, left_out = feasible_line(ax, ratios, {ratio(r): r for r in panel if r["series"] == s}, "overhead",
                                         colour[s])
            drawn, omitted = drawn + ys, omitted or left_out
        ax.axhline(1.0, ls=":", lw=0.8, color="black")
        if limit:
            ax.axhline(limit, ls="--", lw=0.8, color="0.4")
        ax.set_ylim(0.95, max(drawn) * 1.05)
        ax.set_xlim(0, max([1.0] + [x + 0.05 for x in ratios]))
        ax.set_title(name)
        ax.grid(alpha=0.3)
    fig.supxlabel("memory budget / peak")
    fig.supylabel("compute overhead (x baseline)")
    handles = line_handles(series, colour)
    handles.append(Line2D([], [], ls=":", lw=0.8, color="black", label="baseline (no overhead)"))
    if limit:
        handles.append(Line2D([], [], ls="--", lw=0.8, color="0.4", label=f"overhead limit ({limit:g}x)"))
    if omitted:
        handles.append(Line2D([], [], ls="", label="missing point: OOM or over the limit"))
    legend_below(fig, handles)
    return fig


def median_error(runs):
    """Median absolute percentage error of the predictions."""
    e = sorted(abs(r["predicted_ns"] - r["measured_ns"]) / r["measured_ns"] for r in runs)
    return 50 * (e[(len(e) - 1) // 2] + e[len(e) // 2])


@figure("measured")
def predicted_vs_measured(exp, runs):
    models = sorted({r["model"] for r in runs})
    colour = colours(models)
    fig, _, (ax,) = new_figure(exp, runs, 1, panel=(4.6, 4.2))
    for m in models:
        rs = [r for r in runs if r["model"] == m]
        label = f"{m}: {len(rs)} run{'s' * (len(rs) > 1)}, median error {median_error(rs):.1f} %"
        ax.scatter([r["measured_ns"] / 1e6 for r in rs], [r["predicted_ns"] / 1e6 for r in rs], s=22, zorder=3,
                   color=colour[m], label=label)
    values = [r[k] / 1e6 for r in runs for k in ("measured_ns", "predicted_ns")]
    lo, hi = min(values) / 1.4, max(values) * 1.4
    ax.plot([lo, hi], [lo, hi], ls="--", lw=0.8, color="black",
            label=f"y = x; median |predicted - measured| / measured over all {len(runs)} runs: "
                  f"{median_error(runs):.1f} %")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers at 1, 2, 5 x 10^k rather than bare powers of ten
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set(xlim=(lo, hi), ylim=(lo, hi), aspect="equal", xlabel="measured step time (ms)",
           ylabel="predicted step time (ms)")
    ax.grid(alpha=0.3, which="both")
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1, frameon=False)
    return fig


@figure("published")
def predicted_vs_published(exp, rows):
    """x published samples/s, y predicted, log-log; a colour per series (cost source, host mode), a marker
    per zoo model; the legend gives each series' median |error|."""
    series = sorted({r["series"] for r in rows})
    models = sorted({get(r, "model") for r in rows})
    colour = colours(series)
    markers = dict(zip(models, "osD^vP*Xh"))
    fig, _, (ax,) = new_figure(exp, [r["run"] for r in rows], 1, panel=(5.0, 4.6))
    for s in series:
        rs = [r for r in rows if r["series"] == s]
        errors = sorted(abs(r["metrics"]["error_pct"]) for r in rs)
        median = (errors[(len(errors) - 1) // 2] + errors[len(errors) // 2]) / 2
        for m in models:
            ms = [r for r in rs if get(r, "model") == m]
            ax.scatter([r["metrics"]["published_samples_per_s"] for r in ms],
                       [r["metrics"]["predicted_samples_per_s"] for r in ms], s=24, zorder=3, color=colour[s],
                       marker=markers[m], alpha=0.8)
        ax.scatter([], [], color=colour[s], label=f"{s}: {len(rs)} rows, median |error| {median:.1f} %")
    for m in models:
        ax.scatter([], [], color="0.4", marker=markers[m], label=m)
    values = [r["metrics"][k] for r in rows for k in ("published_samples_per_s", "predicted_samples_per_s")]
    lo, hi = min(values) / 1.4, max(values) * 1.4
    ax.plot([lo, hi], [lo, hi], ls="--", lw=0.8, color="black", label="y = x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set(xlim=(lo, hi), ylim=(lo, hi), aspect="equal", xlabel="published samples/s (per GPU)",
           ylabel="predicted samples/s")
    ax.grid(alpha=0.3, which="both")
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1, frameon=False)
    return fig


# ----------------------------------------------------------------------------- main

SWAP_PARTS = (("swap_weights_bytes", "W"), ("swap_gradients_bytes", "dW"), ("swap_optimizer_bytes", "K"),
              ("swap_stash_bytes", "X"))


def server_panels(rows):
    """(model, batch, server) panels and the (N, M) configurations, in order."""
    keys = sorted({(get(r, "model"), get(r, "batch_size"), get(r, "server")) for r in rows}, key=str)
    configs = sorted({(get(r, "gpus"), get(r, "micro_batches")) for r in rows})
    schemes = []
    for r in rows:
        if r["series"] not in schemes:
            schemes.append(r["series"])
    return keys, configs, schemes


@figure("server_schemes")
def scheme_volumes(exp, rows):
    """GB moved per data batch, stacked by what moves (W, dW, K, X to and from the host, then the peer
    copies), per scheme, one panel per model and (N, M); a black tick marks the table's formula total
    (policies/server_schemes.hpp), which the simulated stack must reach exactly."""
    keys, configs, schemes = server_panels(rows)
    panels = [(k, c) for k in keys for c in configs]
    parts = [name for _, name in SWAP_PARTS] + ["peer"]
    colour = colours(parts)
    fig, _, axes = new_figure(exp, [r["run"] for r in rows], len(panels), panel=(3.6, 2.8))
    for ax, (k, (n, m)) in zip(axes, panels):
        here = {r["series"]: r for r in rows
                if (get(r, "model"), get(r, "batch_size"), get(r, "server")) == k and
                (get(r, "gpus"), get(r, "micro_batches")) == (n, m)}
        xs = [s for s in schemes if s in here]
        for i, s in enumerate(xs):
            met = here[s]["metrics"]
            bottom = 0.0
            for metric, name in SWAP_PARTS + (("peer_bytes", "peer"),):
                v = met.get(metric, 0.0) / 1e9
                ax.bar(i, v, bottom=bottom, color=colour[name], width=0.7)
                bottom += v
            expected = sum(met.get("expected_" + metric, 0.0) for metric, _ in SWAP_PARTS + (("peer_bytes", ""),)) / 1e9
            ax.plot([i - 0.4, i + 0.4], [expected, expected], color="black", lw=1)
        ax.set_xticks(range(len(xs)), xs, rotation=35, ha="right", fontsize=7)
        ax.set_title(f"{k[0]} (batch {k[1]}), N = {n}, M = {m}", fontsize=8)
        ax.set_ylabel("GB per data batch")
        ax.grid(axis="y", alpha=0.3)
    handles = [Line2D([], [], lw=6, color=colour[p], label=p) for p in parts]
    handles.append(Line2D([], [], color="black", label="table's formula"))
    legend_below(fig, handles)
    return fig


@figure("server_schemes")
def scheme_step_time(exp, rows):
    """Step time per scheme, split into the most stalled GPU's compute stall (hatched) and the rest,
    grouped by (N, M), one panel per model; a scheme that does not fit its GPUs' memory is marked x."""
    keys, configs, schemes = server_panels(rows)
    colour = colours(schemes)
    fig, _, axes = new_figure(exp, [r["run"] for r in rows], len(keys), panel=(5.0, 3.0))
    width = 0.8 / max(len(schemes), 1)
    for ax, k in zip(axes, keys):
        for j, s in enumerate(schemes):
            for i, c in enumerate(configs):
                r = next((r for r in rows if r["series"] == s and
                          (get(r, "model"), get(r, "batch_size"), get(r, "server")) == k and
                          (get(r, "gpus"), get(r, "micro_batches")) == c), None)
                if r is None:
                    continue
                x = i + (j - (len(schemes) - 1) / 2) * width
                if not r["feasible"]:
                    ax.plot(x, 0, marker="x", color=colour[s])
                    continue
                step = r["metrics"].get("step_time_ns", 0) / 1e9
                stall = r["metrics"].get("compute_stall_ns", 0) / 1e9
                ax.bar(x, step - stall, width=width, color=colour[s])
                ax.bar(x, stall, bottom=step - stall, width=width, color=colour[s], alpha=0.45, hatch="//")
        ax.set_xticks(range(len(configs)), [f"N = {n}, M = {m}" for n, m in configs], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("step time (s), stall hatched")
        ax.set_title(f"{k[0]} (batch {k[1]} per micro-batch), {k[2]}", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    legend_below(fig, [Line2D([], [], lw=6, color=colour[s], label=s) for s in schemes])
    return fig


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

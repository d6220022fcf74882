"""The search experiments' figures: strategies and policies (experiments/README.md)."""
import math

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from plotting.parts import *  # noqa: F401,F403 (the shared helpers, constants and the registry)


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

"""The fidelity figures: DTR replay against its budget, predicted against measured and published."""
import math

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from plotting.parts import *  # noqa: F401,F403 (the shared helpers, constants and the registry)


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

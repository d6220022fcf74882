"""What the figure modules share: colours, panels, legends, the figure registry and PlotError.

Imported by scripts/plot.py after it has picked matplotlib's Agg back end."""
import math

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

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

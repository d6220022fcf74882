"""The server_schemes figures: bytes moved per scheme and step time (Harmony)."""
import math

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from plotting.parts import *  # noqa: F401,F403 (the shared helpers, constants and the registry)


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

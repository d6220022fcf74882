#!/usr/bin/python3
"""Throughput against memory limit for 8 copies of a CNN and of a transformer, on two GPUs.

    export PYTHONPATH=$PWD/build/python      # the module the build makes (README, "From Python")
    /usr/bin/python3 examples/tradeoff.py [OUT.png]

torchvision's resnet50 (batch 32) and vit_b_16 (batch 16) go straight in with mutwo.from_torch;
mutwo.search then plans 8 copies of each on an A100-40GB and an H100 at three memory limits, and
the best plan of every strategy (one model after another, HFTA's fused groups, HFTA with Capuchin's
swaps and recomputation, mutwo's partitions and policies) is plotted. Every figure is a prediction
of mutwo's default cost source (the wave model), not a measurement. Paste the body into a notebook
as it is; it needs no GPU (about 8 s on two CPU cores: shapes are propagated on the meta device).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import mutwo  # noqa: E402

STRATEGIES = ["sequential", "hfta", "hfta+capuchin", "mutwo"]
LIMITS_GIB = [8, 16, 32]
GPUS = ["a100-40gb", "h100-sxm-80gb"]


def best_per_strategy(model, gpu):
    """Samples/s of each strategy's best feasible plan at each limit (NaN where none fits)."""
    out = {s: [] for s in STRATEGIES}
    for limit in LIMITS_GIB:
        rows = mutwo.search(model.times(8), gpu=gpu, memory=f"{limit}GiB", strict=False)
        for s in STRATEGIES:
            fits = [r["samples_per_s"] for r in rows if r["strategy"] == s and r["feasible"]]
            out[s].append(max(fits) if fits else float("nan"))
    return out


def main(path="tradeoff.png"):
    torch.manual_seed(0)
    models = {
        "8 x resnet50, batch 32": mutwo.from_torch(torchvision.models.resnet50(), torch.randn(32, 3, 224, 224),
                                                   name="resnet50"),
        "8 x vit_b_16, batch 16": mutwo.from_torch(torchvision.models.vit_b_16(), torch.randn(16, 3, 224, 224),
                                                   name="vit_b_16"),
    }
    fig, axes = plt.subplots(len(models), len(GPUS), figsize=(10, 7), sharex=True)
    for i, (label, model) in enumerate(models.items()):
        for j, gpu in enumerate(GPUS):
            ax = axes[i][j]
            for strategy, throughput in best_per_strategy(model, gpu).items():
                ax.plot(LIMITS_GIB, throughput, marker="o", label=strategy)
            ax.set_title(f"{label} on {gpu}", fontsize=10)
            ax.set_xticks(LIMITS_GIB)
            ax.set_xlabel("memory limit (GiB)")
            ax.set_ylabel("samples/s (predicted)")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("mutwo: best plan per strategy (waves cost source; predictions, not measurements)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"{path}: {len(models)} models x {len(GPUS)} GPUs x {len(LIMITS_GIB)} limits")


if __name__ == "__main__":
    main(*sys.argv[1:2])

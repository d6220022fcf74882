"""The validation report's fusion section (issue 36, item 5): k fused models, as mutwo's executor ran
them (the `fusion` runs of scripts/device-check.sh), against one model k times over and against
PyTorch eager training k models one after another (eager-fusion.csv), and the gain every cost source
predicts for the same executed schedules. Used by scripts/validation-report.py."""
import csv
import json
import os


def fusion_key(label):
    """fusion-<model>-x<k>-<precision> -> (model, k, precision)."""
    head, tail = label[len("fusion-"):].rsplit("-x", 1)
    k, precision = tail.split("-", 1)
    return head, int(k), precision


def eager_sequential(work):
    """(model, copies) -> (step ms, batch) of eager-fusion.csv."""
    path = os.path.join(work, "eager-fusion.csv")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {(r["model"], int(r["copies"])): (float(r["step_ms_median"]), int(r["batch_size"]))
                for r in csv.DictReader(f) if r["precision"] == "fp32"}


def traced(work, runs):
    """(model, "1, 2, ...") for the arrays with a profiled trace in the work folder."""
    out = {}
    for model, k in sorted(runs):
        if os.path.exists(os.path.join(work, "traces", f"{model}-x{k}.json")):
            out.setdefault(model, []).append(str(k))
    return [(m, ", ".join(ks)) for m, ks in out.items()]


def _ratio(x):
    return f"{x:.2f}x" if x is not None else "-"


def _err(pred, meas):
    return f"{100 * (pred - meas) / meas:+.1f} %" if pred is not None and meas else "-"


def fusion_lines(work, manifest, measured_rows, price, sources):
    """price(row, source, traces) -> predicted step ns or None; traces: paths for the measured source."""
    runs = {}  # (model, k) -> (row, measured ns)
    for row in manifest:
        if row["group"] != "fusion":
            continue
        c = measured_rows.get(int(row["run_id"]))
        if c is None or c["status"] != "ok":
            continue
        model, k, _ = fusion_key(row["label"])
        runs[(model, k)] = (row, c.get("measured_step_ns"))
    if not runs:
        return []
    eager = eager_sequential(work)
    lines = ["## Fusion: k models fused against k one after another", "",
             "The question mutwo exists for (issue 36, item 5): does fusing k models (HFTA) beat training them "
             "one after another on this GPU? mutwo's executor ran 1, 2, 4 and 8 fused models (`mutwo run "
             "--models k`, fp32, steps back to back); PyTorch eager trained k separate models one after another "
             "in each step (`scripts/eager-baseline.py --copies k`, the device's torch). Gain over mutwo x1 = "
             "k x (mutwo's one-model step) / (mutwo's k-model step); gain over eager = eager's k models / mutwo's "
             "k fused models.", "",
             "| model | batch | k | mutwo, k fused | eager, k one after another | gain over mutwo x1 | gain over eager |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    predicted = {}
    for (model, k), (row, meas) in sorted(runs.items()):
        one = runs.get((model, 1))
        gain = k * one[1] / meas if one and one[1] and meas else None
        e = eager.get((model, k))
        over_eager = e[0] * 1e6 / meas if e and meas else None
        batch = e[1] if e else "-"
        lines.append(f"| {model} | {batch} | {k} | {meas / 1e6:.3f} ms | " + (f"{e[0]:.3f} ms" if e else "-") +
                     f" | {_ratio(gain)} | {_ratio(over_eager)} |")
        for s in sources:
            traces = []
            if s == "measured":  # the array's profile (the fusion step's, or the matrix's of the same
                t = os.path.join(work, "traces", f"{model}-x{k}.json")  # model, batch and k), if any
                if not os.path.exists(t):
                    continue
                traces = [t]
            predicted[(model, k, s)] = price(row, s, traces)
    lines += ["", "Predicted by each cost source for the same executed schedules (`mutwo simulate --schedule`, "
              "the executor's host): the gain k x p(x1) / p(xk), its error against the measured gain over mutwo x1, "
              "and each step's own error. The measured source replays the arrays' profiled traces, where the lease "
              "made them (here: " + (", ".join(f"{m} k = {ks}" for m, ks in traced(work, runs)) or "none") + ").", "",
              "| model | k | measured gain | " + " | ".join(f"{s}: gain (error), step error" for s in sources) + " |",
              "|---|---:|---:|" + "---:|" * len(sources)]
    for (model, k), (row, meas) in sorted(runs.items()):
        one = runs.get((model, 1))
        gain = k * one[1] / meas if one and one[1] and meas else None
        cells = [model, str(k), _ratio(gain)]
        for s in sources:
            p, p1 = predicted.get((model, k, s)), predicted.get((model, 1, s))
            pg = k * p1 / p if p and p1 else None
            cells.append(f"{_ratio(pg)} ({_err(pg, gain)}), {_err(p, meas)}" if p else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def fused_conv_lines(work, manifest, op_prices):
    """The fusion runs' convolution passes: measured kernel time (the arrays' profiled traces) against
    each source's price. op_prices(schedule, gpu, source) -> {op id: ns} or None."""
    rows = {}
    for row in manifest:
        if row["group"] != "fusion":
            continue
        model, k, _ = fusion_key(row["label"])
        trace = os.path.join(work, "traces", f"{model}-x{k}.json")
        if k > 1 and os.path.exists(trace):
            rows[(model, k)] = (row, trace)
    table, per_op = [], {}
    for (model, k), (row, trace) in sorted(rows.items()):
        schedule = os.path.join(work, row["schedule"])
        ops = json.load(open(schedule))["graph"]["ops"]
        measured = json.load(open(trace))["op_duration_ns"]
        prices = {s: op_prices(schedule, row["gpu"], s) for s in ("waves", "calibrated")}
        for kind in ("conv2d", "conv2d_backward"):
            ids = [o["id"] for o in ops if o["kind"] == kind]
            if not ids:
                continue
            m = sum(measured[i] for i in ids)
            cells = [model, str(k), kind, str(len(ids)), f"{m / 1e6:.2f} ms"]
            for s, p in prices.items():
                cells.append(f"{sum(p.get(i, 0.0) for i in ids) / m:.2f}" if p else "-")
            table.append("| " + " | ".join(cells) + " |")
            for i in ids:
                per_op.setdefault((model, ops[i]["name"]), {})[k] = measured[i]
    if not table:
        return []
    scaling = sorted(t[4] / t[2] for t in per_op.values() if 2 in t and 4 in t and t[2] > 0)
    lines = ["## Fused convolutions", "",
             "HFTA fuses k models' convolutions into one with k times the groups. Each convolution pass of the "
             "fusion runs (k > 1, the arrays' profiled traces: CUDA events around each op, median of the profiled "
             "steps), summed per pass, against the waves and calibrated sources' prices of the same ops "
             "(price / measured), which price a fused convolution as its k models' kernels one after another "
             "(costmodel/calibrated_cost_model.hpp, op_kernels). The calibrated source's profile is fitted on this "
             "GPU's dense (ungrouped) kernels (bench-ops), so its column checks that rule on its own.", "",
             "| model | k | pass | ops | measured | waves / measured | calibrated / measured |",
             "|---|---:|---|---:|---:|---:|---:|"] + table
    if scaling:
        mid = scaling[len(scaling) // 2]
        lines += ["", f"Per convolution op, measured time at 4 fused over its time at 2 fused: median {mid:.2f}, "
                  f"range {scaling[0]:.2f} to {scaling[-1]:.2f} over {len(scaling)} ops (2.00 if the models' "
                  "kernels ran one after another, less if fusing filled the GPU better)."]
    return lines + [""]


def fused_conv_sample_lines(work):
    """scripts/fused-conv-sample.py's rows: each fused convolution's time over k times its one-model time."""
    path = os.path.join(work, "fused-conv.csv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = list(csv.DictReader(f))
    one = {(r["shape"], r["benchmark"], r["pass"]): float(r["us_per_call"]) for r in rows if r["k"] == "1"}
    counts = sorted({int(r["k"]) for r in rows if r["k"] != "1"})
    cells = {}
    for r in rows:
        # A pass as a batched GEMM (a fused 1x1 convolution) against the models' own convolutions.
        base = one.get((r["shape"], r["benchmark"], r["pass"].removesuffix(" (batched GEMM)")))
        if r["k"] != "1" and base:
            cells[(r["shape"], r["benchmark"], r["pass"], int(r["k"]))] = float(r["us_per_call"]) / (int(r["k"]) * base)
    if not cells:
        return []
    first = rows[0]
    lines = ["### The fused-convolution sample", "",
             f"`scripts/fused-conv-sample.py` on {first['device']} (torch {first['torch']}, cuDNN {first['cudnn']}, "
             f"batch {first['batch']}): resnet18's convolution shapes fused k wide, the time of one call over k times "
             "the one-model call's (1.00: the k models' kernels one after another, as the cost sources price it; "
             "below 1: fusing filled the GPU better), cuDNN's autotuner off (PyTorch's default) and on.", "",
             "| shape | pass | autotuner | " + " | ".join(f"k = {k}" for k in counts) + " |",
             "|---|---|---|" + "---:|" * len(counts)]
    for shape, bench, pass_name in sorted({key[:3] for key in cells}):
        values = [cells.get((shape, bench, pass_name, k)) for k in counts]
        lines.append(f"| {shape} | {pass_name} | {'on' if bench == '1' else 'off'} | " +
                     " | ".join(f"{v:.2f}" if v is not None else "-" for v in values) + " |")
    return lines + [""]

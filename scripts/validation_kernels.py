"""The validation report's kernel sections (issue 36, item 5), used by scripts/validation-report.py:

- the kernel sample: NeuSight's linear, bmm, layer-norm and softmax shapes timed on the device with
  NeuSight's harness (scripts/kernel-sample.py), priced by the wave model fitted on every other GPU
  (`mutwo calibrate --waves --leave-one-out`: the device's chip is held out, so the figures are the
  cross-GPU model on a GPU it never saw), and the same shapes' A100 times beside them;
- ResNet-50's convolutions by layout: timed NCHW and channels-last, cuDNN's autotuner off and on
  (scripts/conv-layout-sample.py), each setting's rows priced by the shipped wave model
  (`mutwo calibrate --waves --score`);
- where the step time goes: per op kind, the kernel times the executor's profiler measured in the
  matrix's plain runs (their traces) against what the waves and calibrated sources price for the
  same ops (`mutwo simulate --timeline`).
"""
import collections
import csv
import glob
import json
import math
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = [os.path.join(ROOT, "tests", "fixtures", "calibration", f)
            for f in ("deepbench_gemm.csv", "deepbench_conv.csv", "neusight")]


def kernel_sample_lines(mutwo, work):
    folder = os.path.join(work, "kernels")
    files = sorted(glob.glob(os.path.join(folder, "*", "*.csv")))
    if not files:
        return []
    rows = []
    for path in files:
        with open(path) as f:
            rows += list(csv.DictReader(f))
    devices = sorted({r["Device"] for r in rows})
    out = subprocess.run([mutwo, "calibrate", "--waves", "--leave-one-out", *FIXTURES, folder],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return ["## Kernel sample", "", f"`mutwo calibrate` refused the sample: {out.stderr.strip()}", ""]
    sampled = catalog_devices(mutwo, folder)
    held = error_table_rows(out.stdout, "held out a GPU at a time", "held out,", sampled)
    lines = ["## Kernel sample: the cross-GPU kernel model on this GPU", "",
             f"{len(rows)} operator shapes of NeuSight's A100 set ({', '.join(sorted({r['OPName'] for r in rows}))}; "
             "`scripts/kernel-sample.py`, seeded sample) timed on " + ", ".join(devices) + " with NeuSight's "
             "own harness (fp32, TF32 off, mean of the 5 fastest of 25 calls). Priced by the wave model fitted on "
             "every other GPU's DeepBench and NeuSight kernels, this GPU's chip held out "
             "(`mutwo calibrate --waves --leave-one-out tests/fixtures/calibration/... kernels/`): the cross-GPU "
             "kernel model on a GPU it was never fitted on. Scored: the kernel-bound rows (the others are "
             "dominated by the harness's host time, costmodel/wave_fit.hpp). The chip is held out, so no row of this "
             "GPU's is in this fit; whether these rows refine the shipped model, its `inputs` say (next table).", "",
             *error_table_markdown(held)]
    lines += shipped_model_lines(mutwo, folder, sampled)
    lines += ["", "The same shapes on the A100-PCIe-40GB (NeuSight's measurement) over this GPU's, per op "
              "(median and range of the per-shape ratio):", "", "| op | shapes | A100 / this GPU, median | "
              "min | max |", "|---|---:|---:|---:|---:|"]
    by_op = collections.defaultdict(list)
    for r in rows:
        by_op[r["OPName"]].append(float(r["A100 Latency"]) / float(r["Latency"]))
    for op, ratios in sorted(by_op.items()):
        lines.append(f"| {op} | {len(ratios)} | {statistics.median(ratios):.2f}x | {min(ratios):.2f}x | "
                     f"{max(ratios):.2f}x |")
    return lines + [""]


CONV_LAYOUTS = [("nchw-default", "NCHW, autotuner off"), ("nchw-benchmark", "NCHW, autotuner on"),
                ("nhwc-default", "channels-last, autotuner off"), ("nhwc-benchmark", "channels-last, autotuner on")]


def conv_layout_lines(mutwo, work):
    """ResNet-50's convolutions per layout and autotuner setting: the measured time of each pass summed
    over the shapes, the shipped wave model's price of the same, and its signed median error."""
    folder = os.path.join(work, "conv-layout")
    settings = [(name, label, os.path.join(folder, name + ".csv")) for name, label in CONV_LAYOUTS]
    settings = [s for s in settings if os.path.isfile(s[2])]
    if not settings:
        return []
    lines = ["## ResNet-50's convolutions by layout and cuDNN's autotuner", "",
             "`scripts/conv-layout-sample.py`: each distinct convolution of ResNet-50, each pass alone, timed "
             "on the device (CUDA events around back-to-back calls), priced by the shipped wave model "
             "(`mutwo calibrate --waves --score conv-layout/<setting>.csv`). The published mixed-precision "
             "ResNet-50 runs trained channels-last with the autotuner on (docs/FIDELITY.md).", "",
             "| setting | pass | shapes | measured, summed | priced, summed | signed median error |",
             "|---|---|---:|---:|---:|---:|"]
    for name, label, path in settings:
        with tempfile.TemporaryDirectory() as tmp:
            scored = os.path.join(tmp, "scored.csv")
            out = subprocess.run([mutwo, "calibrate", "--waves", "--score", path, "--held-out-csv", scored],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                return lines[:2] + [f"`mutwo calibrate --waves --score` refused {name}.csv: {out.stderr.strip()}", ""]
            with open(scored) as f:
                rows = list(csv.DictReader(f))
        by_pass = collections.defaultdict(list)
        for r in rows:
            by_pass[r["kernel"]].append(r)
        for kernel in ("conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter"):
            rs = by_pass.get(kernel, [])
            if not rs:
                continue
            measured = sum(float(r["kernel_ns"]) for r in rs)
            priced = sum(float(r["predicted_ns"]) for r in rs)
            signed = statistics.median(float(r["error"]) for r in rs)
            lines.append(f"| {label} | {kernel.removeprefix('conv2d_')} | {len(rs)} | {measured / 1e6:.3f} ms | "
                         f"{priced / 1e6:.3f} ms | {100 * signed:+.1f} % |")
    return lines + [""]


def shipped_model_lines(mutwo, folder, sampled):
    """The same rows priced by the shipped wave model, refinements included (`mutwo calibrate --waves
    --score`): what mutwo predicts for this GPU today, beside the blind table above."""
    out = subprocess.run([mutwo, "calibrate", "--waves", "--score", folder], capture_output=True, text=True)
    if out.returncode != 0:
        return ["", f"`mutwo calibrate --waves --score` refused the sample: {out.stderr.strip()}"]
    rows = error_table_rows(out.stdout, "the shipped wave model", "per category", sampled)
    lines = ["", "The same rows priced by the shipped wave model (`mutwo calibrate --waves --score kernels/`), "
             "refinements included: where costmodel/models/waves.json carries a refinement for this GPU, or "
             "GEMM and convolution groups of a board of the same chip, clocks and peaks (its `inputs` name the "
             "kernels they were fitted on: rows fitted there are in-sample here), they price these kernels; "
             "the harness by the rule above, over the model's other GPUs.", "", *error_table_markdown(rows)]
    return lines


def error_table_rows(stdout, title, next_title, sampled):
    """The rows of the sampled devices in the error table of `mutwo calibrate --waves` that follows the
    line starting with `title`, up to a blank line or one starting with `next_title`."""
    rows, in_table = [], False
    for line in stdout.splitlines():
        if line.startswith(title):
            in_table = True
            continue
        if in_table and (not line.strip() or line.startswith(next_title)):
            in_table = False
        parts = line.split()
        if in_table and parts and parts[0] in sampled:
            rows.append(parts)
    return rows


def error_table_markdown(rows):
    lines = ["| device | data | category | kernels scored | median error | mean error | signed median |",
             "|---|---|---|---:|---:|---:|---:|"]
    for p in rows:
        device, data, rest = p[0], p[1], p[2:]
        # group names may hold a "/": category kernels median % mean % signed %
        category, kernels, median, mean, signed = rest[0], rest[1], rest[2], rest[4], rest[6]
        lines.append(f"| {device} | {data} | {category} | {kernels} | {median} % | {mean} % | {signed} % |")
    return lines


def catalog_devices(mutwo, folder):
    """The catalog devices of the sample's rows, as mutwo matches their product names (match_device):
    the device column of `mutwo calibrate FOLDER`'s in-sample table."""
    out = subprocess.run([mutwo, "calibrate", folder], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("------")) + 1
    return {line.split()[0] for line in lines[start:] if line.strip()}


def timeline_op_ns(mutwo, cmd):
    """op id -> mean device time per step of its compute events in a simulated timeline; None where the
    source cannot price the schedule (no calibrated profile for the device)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "timeline.json")
        if subprocess.run(cmd + ["--timeline", path], capture_output=True, text=True).returncode != 0:
            return None
        events = json.load(open(path))["traceEvents"]
    total, count = collections.defaultdict(float), collections.defaultdict(int)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "compute" and e.get("tid") == 1:
            total[e["args"]["op"]] += e["dur"] * 1e3
            count[e["args"]["op"]] += 1
    return {op: total[op] / count[op] for op in total}


def op_prices(mutwo, schedule, gpu, source, profile, host_mode="libtorch"):
    """op id -> the source's price of a schedule's op on a catalog GPU (None where it cannot price it)."""
    cmd = [mutwo, "simulate", "--schedule", schedule, "--gpu", gpu, "--memory", "1TiB", "--host-mode",
           host_mode or "libtorch", "--cost-source", source]
    if source == "calibrated" and profile:
        cmd += ["--profile", profile]
    return timeline_op_ns(mutwo, cmd)


def op_kind_gap_lines(mutwo, work, manifest, profile, top=14):
    """Measured kernel time per op kind (the plain runs' traces) against the waves, calibrated and analytic
    prices."""
    sums = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0, 0])
    models = []
    for row in manifest:
        if row["group"] != "matrix" or not row["label"].endswith("-plain") or row["traces"] in ("", "-"):
            continue
        schedule = os.path.join(work, row["schedule"])
        trace = json.load(open(os.path.join(work, row["traces"].split(",")[0])))
        ops = json.load(open(schedule))["graph"]["ops"]
        waves = op_prices(mutwo, schedule, row["gpu"], "waves", profile, row["host_mode"])
        calibrated = op_prices(mutwo, schedule, row["gpu"], "calibrated", profile, row["host_mode"])
        analytic = op_prices(mutwo, schedule, row["gpu"], "analytic", profile, row["host_mode"])
        if waves is None or analytic is None:
            continue
        for op, measured in enumerate(trace["op_duration_ns"]):
            s = sums[ops[op]["kind"]]
            s[0] += measured
            s[1] += waves.get(op, 0.0)
            s[2] += calibrated.get(op, 0.0) if calibrated is not None else float("nan")
            s[3] += analytic.get(op, 0.0)
            s[4] += 1
        models.append(row["label"][: -len("-plain")])
    if not sums:
        return []
    total = [sum(v[i] for v in sums.values()) for i in range(4)]
    lines = ["## Where the default source's error comes from: kernel time per op kind", "",
             "The plain runs of " + ", ".join(models) + " (4 fused models each): each op's kernel time as the "
             "executor's profiler measured it (CUDA events around the op, median of 6 steps: the measured "
             "source's input), summed per op kind over the six models, against the price of the same ops by the "
             "waves source (the default), the calibrated source (this GPU's bench-ops profile) and the analytic "
             "roofline. The step-time errors above follow from these sums; docs/FIDELITY.md's fusion table cites "
             "its rows where cost sources part.", "",
             "| op kind | ops | measured | waves | waves / measured | calibrated | calibrated / measured | analytic "
             "| analytic / measured |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ranked = sorted(sums.items(), key=lambda kv: -kv[1][0])
    def row(name, n, m, w, c, a):
        ms = lambda x: "-" if math.isnan(x) else f"{x / 1e6:.2f} ms"  # noqa: E731
        ratio = lambda x: "-" if math.isnan(x) or not m else f"{x / m:.2f}"  # noqa: E731
        return f"| {name} | {n} | {ms(m)} | {ms(w)} | {ratio(w)} | {ms(c)} | {ratio(c)} | {ms(a)} | {ratio(a)} |"

    for kind, (m, w, c, a, n) in ranked[:top]:
        lines.append(row(kind, n, m, w, c, a))
    rest = ranked[top:]
    if rest:
        lines.append(row(f"{len(rest)} other kinds", sum(v[4] for _, v in rest),
                         *(sum(v[i] for _, v in rest) for i in range(4))))
    lines.append(row("**all**", sum(v[4] for v in sums.values()), *total))
    return lines + [""]

#!/usr/bin/env bash
# Regenerates the "Kineto replay" section of docs/FIDELITY.md: for every real GPU trace of
# tests/fixtures/kineto/ (PyTorch profiler, see its README), the step the trace profiled (its
# ProfilerStep span) beside what `mutwo simulate --trace` predicts from the trace's durations and
# dependencies, in each host mode. Only the block between this script's markers is rewritten.
#   usage: scripts/fidelity-kineto.sh [path/to/mutwo] [docs/FIDELITY.md]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mutwo=${1:-$root/build/cli/mutwo}
out=${2:-$root/docs/FIDELITY.md}
traces=(mi250_minitoy_train.json.gz sampled_training_rank0.json.gz v100_training_rank0.pt.trace.json.gz)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in "${traces[@]}"; do
  for mode in eager cuda-graph none; do
    "$mutwo" simulate --trace "$root/tests/fixtures/kineto/$t" --host-mode "$mode" --json \
      >"$tmp/$t.$mode.json" 2>/dev/null
  done
done
MUTWO_SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)" && export MUTWO_SCRIPTS_DIR
python3 - "$tmp" "$out" "${traces[@]}" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["MUTWO_SCRIPTS_DIR"])
from report_section import write_section
tmp, out, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
ms = lambda ns: f"{ns / 1e6:.3f} ms"
rows = []
for t in traces:
    j = {m: json.load(open(os.path.join(tmp, f"{t}.{m}.json"))) for m in ("eager", "cuda-graph", "none")}
    e = j["eager"]
    step, pred = e["profiled_step_ns"], e["prediction"]["step_time_ns"]
    rows.append(f"| `{t}` | {e['device']['name']} | {e['schedule']['instructions']} | {ms(step)} | {ms(pred)} | "
                f"{100 * (pred - step) / step:+.2f} % | {ms(e['trace_gpu_time_ns'])} | {ms(e['trace_host_time_ns'])} | "
                f"{ms(j['cuda-graph']['prediction']['step_time_ns'])} | {ms(j['none']['prediction']['step_time_ns'])} |")
section_lines = [
    "## Kineto replay",
    "",
    "`mutwo simulate --trace T` on the real PyTorch profiler traces of `tests/fixtures/kineto/` (Holistic Trace "
    "Analysis' test data, see its README) predicts the profiled step (the `ProfilerStep#N` span the importer "
    "picks) from durations and dependencies only: each op's measured host time (its CPU span up to its last "
    "launch plus the Python time before it, with synchronisations and launches held by a full launch queue "
    "taken out), its kernels' GPU time on their own streams, host syncs, launch -> kernel. Rules: "
    "`io/kineto_trace.hpp` (\"Host timeline\") and `policies/trace_replay.hpp`. Target (issue 16): "
    "|error| <= 5 % per trace. GPU time = the step's kernels, memcpys and memsets summed over streams; host "
    "time = the host timeline's issue time summed over ops; cuda-graph and no host: the same replay with "
    "`--host-mode cuda-graph` / `none`.",
    "",
    "Regenerate: `scripts/fidelity-kineto.sh build/cli/mutwo docs/FIDELITY.md`.",
    "",
    "| trace | simulated device | instructions | profiled step | predicted (eager) | error | GPU time | host time "
    "| cuda-graph | no host |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    *rows,
    "",
    "The MI250 and sampled steps are host-bound: the GPU waits for the host most of the step, and without "
    "the host's dispatch (cuda-graph, none) the prediction falls to the GPU's critical path (the sampled "
    "trace's streams overlap: its busiest stream sets it). The V100 step is GPU-bound: 64.5 ms of its "
    "launches and copies waited on a full launch queue (1,020 kernels pending), which the importer takes "
    "out of host time and the engine's bounded queue reproduces.",
    ]
write_section(out, "scripts/fidelity-kineto.sh", section_lines)
print("\n".join(rows))
PY

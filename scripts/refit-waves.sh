#!/usr/bin/env bash
# Refits the wave model (the default cost source) and regenerates everything that depends on it:
#   1. costmodel/models/waves.json (mutwo calibrate --waves on DeepBench's and NeuSight's kernels, with
#      the kernels the H100 lease timed as refine-only rows: the H100's refinement, also the H200's GEMMs
#      and convolutions), then rebuilds mutwo so that the binary ships it;
#   2. docs/FIDELITY.md: the wave model's leave-one-GPU-out section, NeuSight's spread, the held-out
#      convolutions by cuDNN's algorithm and GEMMs by duration (scripts/neusight-spread.py,
#      scripts/conv-algorithms.py, scripts/held-out-by-duration.py, scripts/fusion-pair-spread.py), the end-to-end table
#      (scripts/fidelity-e2e.sh) and the 8-fused-vs-sequential table (scripts/fusion-table.py);
#   3. the experiments the README and docs/ show: mutwo_throughput (and the README's figure),
#      mutwo_breakdown, lean_ops and harmony (docs/*.csv and their figures), the wrapped steady state
#      (docs/wrap_steady_state.csv).
# The README's prose quotes some of these numbers: read the diff and update it. About 2 minutes on
# 2 cores (the build aside).
#   usage: scripts/refit-waves.sh [build-dir] [YYYY-MM-DD]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
date=${2:-$(date -u +%F)}
mutwo=$build/cli/mutwo
cd "$root"
inputs=(tests/fixtures/calibration/deepbench_gemm.csv tests/fixtures/calibration/deepbench_conv.csv
        tests/fixtures/calibration/neusight)
# Kernels mutwo's own leases timed (NeuSight's shapes and harness): they refine their GPU only.
refine=(--refine-only tests/fixtures/device/h100-2026-11-27/call2-kernels
        tests/fixtures/device/h100-2026-11-27/call3-kernels-seed37)
"$mutwo" calibrate --waves "${inputs[@]}" "${refine[@]}" -o costmodel/models/waves.json --date "$date" >/dev/null
cmake --build "$build" --target mutwo >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$mutwo" calibrate --waves --leave-one-out "${inputs[@]}" "${refine[@]}" --fidelity docs/FIDELITY.md \
  --held-out-csv "$tmp/held-out.csv" >/dev/null
/usr/bin/python3 scripts/neusight-spread.py
/usr/bin/python3 scripts/held-out-by-duration.py "$tmp/held-out.csv" docs/FIDELITY.md
/usr/bin/python3 scripts/fusion-pair-spread.py "$tmp/held-out.csv" docs/FIDELITY.md >/dev/null
/usr/bin/python3 scripts/conv-algorithms.py "$tmp/held-out.csv" docs/FIDELITY.md
bash scripts/fidelity-e2e.sh "$mutwo" docs/FIDELITY.md >/dev/null
/usr/bin/python3 scripts/fusion-table.py "$mutwo" docs/FIDELITY.md
for e in mutwo_throughput mutwo_breakdown lean_ops harmony; do
  mkdir -p "$tmp/$e"
  "$mutwo" experiment "$e" --db "$tmp/$e/results.db" --out "$tmp/$e" >"$tmp/$e/log" 2>&1 || { cat "$tmp/$e/log" >&2; exit 1; }
done
cp "$tmp/lean_ops/lean_ops.csv" "$tmp/harmony/harmony.csv" docs/
/usr/bin/python3 scripts/plot.py "$tmp/mutwo_throughput/results.db" --experiment mutwo_throughput --out "$tmp/mutwo_throughput" >/dev/null
cp "$tmp/mutwo_throughput/mutwo_throughput-step_time_vs_models.png" docs/figures/
/usr/bin/python3 scripts/plot.py "$tmp/lean_ops/results.db" --experiment lean_ops --out docs/figures >/dev/null
/usr/bin/python3 scripts/plot.py "$tmp/harmony/results.db" --experiment harmony --out docs/figures >/dev/null
bash scripts/wrap-steady-state.sh "$mutwo" > docs/wrap_steady_state.csv
cp "$tmp/mutwo_throughput/mutwo_throughput.csv" "$tmp/mutwo_breakdown/mutwo_breakdown.csv" "${MUTWO_KEEP_CSV:-$tmp}/" 2>/dev/null || true
echo "refit-waves: waves.json of $date, docs/FIDELITY.md, docs/*.csv and figures regenerated; check the README's numbers"

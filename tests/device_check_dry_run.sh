#!/usr/bin/env bash
# The GPU check's dry run (ctest device_check_dry_run): scripts/device-check.sh's matrix, speed,
# bench and compare stages on the CPU executor with the zoo's test-scale models and this build,
# then scripts/validation-report.py on what they left, so the scripts a lent GPU runs once are
# exercised on every CI run. Asserts what holds on any device: every architecture's plain run and
# its three capped plans are stored, the measured source re-predicts each stored prediction to the
# ns (the report exits 1 otherwise), the accounted peak equals the executor's on the CPU for the
# one-stream plans (within 3 % for the others), the packed results unpack, and the eager side trained.
# Usage: tests/device_check_dry_run.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
scratch=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)
fail() { echo "device_check_dry_run: $*" >&2; exit 1; }

MUTWO_CHECK_DEVICE=cpu MUTWO_CHECK_SCALE=mini MUTWO_CHECK_BUILD="$build" MUTWO_CHECK_WORK="$scratch/work" \
  MUTWO_CHECK_PYTHON=/usr/bin/python3 OUT="$scratch/out" bash "$root/scripts/device-check.sh" matrix speed bench compare

# 6 architectures x (plain + 3 capped plans), 4 executor runs of the speed stage and 2 of the fusion
# step, every one stored.
[ "$(grep -c $'\tmatrix\t' "$scratch/work/runs.tsv")" -eq 24 ] || fail "expected 24 matrix runs in runs.tsv"
[ "$(grep -c $'\tspeed\t' "$scratch/work/runs.tsv")" -eq 4 ] || fail "expected 4 speed runs in runs.tsv"
[ "$(grep -c $'\tfusion\t' "$scratch/work/runs.tsv")" -eq 2 ] || fail "expected 2 fusion runs in runs.tsv"
# The fusion step profiles each of its arrays: the measured source's gain needs every k's trace.
for k in 1 2; do [ -s "$scratch/work/traces/resnet-mini-x$k.json" ] || fail "no fusion trace for k = $k"; done
for f in results.db compare.json ops.csv host-link.json eager-x1.csv eager-fused.csv eager-fusion.csv \
  kernels/bmm/cpu.csv kernels/ln/cpu.csv fused-conv.csv; do
  [ -s "$scratch/work/$f" ] || fail "no $f"
done
# The packed folder holds the same files.
mkdir "$scratch/unpacked"
tar xzf "$scratch/out/device-check.tar.gz" -C "$scratch/unpacked"
cmp "$scratch/work/runs.tsv" "$scratch/unpacked/runs.tsv" || fail "the pack's runs.tsv differs"

/usr/bin/python3 "$root/scripts/validation-report.py" "$scratch/unpacked" --mutwo "$build/cli/mutwo" \
  -o "$scratch/VALIDATION.md" --figure "$scratch/predicted_vs_measured.png"
[ -s "$scratch/predicted_vs_measured.png" ] || fail "no figure"
report=$scratch/VALIDATION.md
grep -q "A dry run on the CPU executor" "$report" || fail "the report does not say it is a CPU dry run"
# On the CPU the executor's peak is its accounting in issue order: equal to the simulator's for the
# one-stream plans (plain, checkpoint), within the 3 % target where swaps on the copy streams
# interleave in another order (vdnn, mutwo).
/usr/bin/python3 - "$scratch/unpacked" <<'PY' || fail "peak memory"
import json, os, sys
work = sys.argv[1]
rows = {r["run_id"]: r for r in json.load(open(os.path.join(work, "compare.json")))["rows"]}
bad, compared = [], 0
for line in open(os.path.join(work, "runs.tsv")):
    label, run_id, group = line.split("\t")[:3]
    r = rows[int(run_id)]
    if group != "matrix" or r["status"] != "ok":
        continue
    compared += 1
    one_stream = label.endswith("-plain") or label.endswith("-recompute-checkpoint")
    if (one_stream and r["predicted_peak_bytes"] != r["measured_peak_bytes"]) or abs(r["peak_rel_error"]) > 0.03:
        bad.append(f"{label}: predicted {r['predicted_peak_bytes']} B, measured {r['measured_peak_bytes']} B")
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad or compared < 12 else 0)
PY
grep -Eq '^\| step time \| measured \| [1-9][0-9]* \|' "$report" || fail "no step-time summary"
# The GPU report's path (every source, the fusion gain predicted), on the same CPU data.
/usr/bin/python3 "$root/scripts/validation-report.py" "$scratch/unpacked" --mutwo "$build/cli/mutwo" \
  -o "$scratch/VALIDATION-all.md" --all-sources
grep -Eq '^\| step time \| analytic \| [1-9][0-9]* \|' "$scratch/VALIDATION-all.md" || fail "no analytic summary"
grep -Eq '^\| resnet-mini \| fp32 \| 4 \| [0-9.]+x \| - \| [0-9.]+x \|' "$scratch/VALIDATION-all.md" ||
  fail "no predicted fusion gain"
# The fusion section: the measured source's gain of 2 fused over 1, from the fusion step's traces.
grep -Eq '^\| resnet-mini \| 2 \| [0-9.]+x \| [0-9.]+x \([+-][0-9.]+ %\), [+-][0-9.]+ % \|$' "$scratch/VALIDATION.md" ||
  fail "no measured-source fusion gain"
echo "device_check_dry_run: ok"

#!/usr/bin/env bash
# The budgeted GPU lease on the CPU (ctest device_check_lease_dry_run): `scripts/device-check.sh
# lease` with the zoo's test-scale models, first with a budget far too small (every floor 1 s, 4 s to
# spend: steps are ended at the budget or skipped), then again on the same work folder with room to
# finish. Asserts the rules a 15-minute GPU lease depends on: the short call exits 0, says it is
# incomplete, records in lease.tsv every step as ok, timed out or skipped, and still packs what it
# stored; the second call resumes (no step done before runs again, no run label is stored twice)
# and ends with the kernel sample, the fusion runs (mutwo's and eager's), the whole matrix, the speed
# runs, eager, bench-ops and compare; the validation
# report lists both calls and has every section the staged dry run (device_check_dry_run) once
# checked on the whole matrix: the accounted peak against the executor's, the step-time summary, the
# measured and predicted fusion gains, every source's report and the figure.
# Usage: tests/device_check_lease_dry_run.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
scratch=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)
fail() { echo "device_check_lease_dry_run: $*" >&2; exit 1; }
work=$scratch/work
check() {
  MUTWO_CHECK_DEVICE=cpu MUTWO_CHECK_SCALE=mini MUTWO_CHECK_BUILD="$build" MUTWO_CHECK_WORK="$work" \
    MUTWO_CHECK_PYTHON=/usr/bin/python3 OUT="$scratch/out" "$@" bash "$root/scripts/device-check.sh" lease
}

# Call 1: a 24 s budget less the pack's 20 s reserve leaves 4 s for fifteen steps.
check env MUTWO_CHECK_BUDGET_S=24 MUTWO_CHECK_FLOOR_S=1 >"$scratch/call1.log" 2>&1 || {
  cat "$scratch/call1.log"
  fail "the short call exited non-zero"
}
grep -q "lease incomplete, skipped or ended for time" "$scratch/call1.log" || fail "call 1 does not say it is incomplete"
[ "$(cut -f1 "$work/lease.tsv" | sort -u)" = 1 ] || fail "lease.tsv of call 1 names another call"
[ "$(cut -f2 "$work/lease.tsv" | tr '\n' ' ')" = "kernel-sample conv-layout eager-fusion fusion bench-host matrix-resnet matrix-bert matrix-gpt2 speed eager \
matrix-vit matrix-mobilenet matrix-dlrm bench-ops compare " ] || fail "call 1's steps, in order: $(cut -f2 "$work/lease.tsv")"
grep -q $'\tskipped\t' "$work/lease.tsv" || fail "call 1 skipped nothing"
if cut -f3 "$work/lease.tsv" | grep -vqxE 'ok|skipped|timed out'; then fail "call 1: an outcome other than ok, skipped, timed out"; fi
[ -s "$scratch/out/device-check.tar.gz" ] || fail "call 1 packed nothing"
cp "$work/runs.tsv" "$scratch/runs-call1.tsv" 2>/dev/null || : >"$scratch/runs-call1.tsv"

# Call 2: room to finish; what call 1 finished is not done again.
check env MUTWO_CHECK_BUDGET_S=600 >"$scratch/call2.log" 2>&1 || {
  cat "$scratch/call2.log"
  fail "the second call failed"
}
grep -q "device-check: lease passed" "$scratch/call2.log" || fail "call 2 did not pass"
awk -F'\t' '$1 == 2 && $3 != "ok" && $3 != "done before" { bad = 1 } END { exit bad }' "$work/lease.tsv" ||
  fail "call 2: a step neither ok nor done before"
awk -F'\t' '$1 == 1 && $3 == "ok" && $2 != "compare" { print $2 }' "$work/lease.tsv" | while read -r done_step; do
  grep -q "^2"$'\t'"$done_step"$'\t'"done before" "$work/lease.tsv" || fail "call 2 ran $done_step again"
done
[ -z "$(cut -f1 "$work/runs.tsv" | sort | uniq -d)" ] || fail "a run label stored twice: $(cut -f1 "$work/runs.tsv" | sort | uniq -d)"
# Call 1's runs are kept as they were (the same run ids), the rest added.
[ "$(head -n "$(wc -l <"$scratch/runs-call1.tsv")" "$work/runs.tsv")" = "$(cat "$scratch/runs-call1.tsv")" ] ||
  fail "call 2 changed call 1's runs"
[ "$(grep -c $'\tmatrix\t' "$work/runs.tsv")" -eq 24 ] || fail "expected 24 matrix runs in runs.tsv"
[ "$(grep -c $'\tspeed\t' "$work/runs.tsv")" -eq 4 ] || fail "expected 4 speed runs in runs.tsv"
[ "$(grep -c $'\tfusion\t' "$work/runs.tsv")" -eq 2 ] || fail "expected 2 fusion runs in runs.tsv"
# The fusion step profiles each of its arrays: the measured source's gain needs every k's trace.
for k in 1 2; do [ -s "$work/traces/resnet-mini-x$k.json" ] || fail "no fusion trace for k = $k"; done
for f in results.db compare.json ops.csv host-link.json eager-x1.csv eager-fused.csv eager-fusion.csv \
  kernels/linear/cpu.csv kernels/softmax/cpu.csv kernels/bmm/cpu.csv kernels/ln/cpu.csv fused-conv.csv \
  conv-layout/nchw-default.csv conv-layout/nhwc-benchmark.csv; do
  [ -s "$work/$f" ] || fail "no $f"
done
# ops.csv: the three kernel groups' CSVs joined under one header.
[ "$(grep -c '^device,precision,kernel,' "$work/ops.csv")" -eq 1 ] || fail "ops.csv has not one header"
[ "$(($(wc -l <"$work/ops-gemm.csv") + $(wc -l <"$work/ops-conv.csv") + $(wc -l <"$work/ops-other.csv") - 2))" -eq \
  "$(wc -l <"$work/ops.csv")" ] || fail "ops.csv is not the three groups' rows"

mkdir "$scratch/unpacked"
tar xzf "$scratch/out/device-check.tar.gz" -C "$scratch/unpacked"
cmp "$work/runs.tsv" "$scratch/unpacked/runs.tsv" || fail "the pack's runs.tsv differs"
/usr/bin/python3 "$root/scripts/validation-report.py" "$scratch/unpacked" --mutwo "$build/cli/mutwo" \
  -o "$scratch/VALIDATION.md" --figure "$scratch/predicted_vs_measured.png" >/dev/null
[ -s "$scratch/predicted_vs_measured.png" ] || fail "no figure"
# The accounted peak against the executor's, over the whole matrix (tests/device_check_peaks.py).
/usr/bin/python3 "$root/tests/device_check_peaks.py" "$scratch/unpacked" 12 || fail "peak memory"
grep -Eq '^\| step time \| measured \| [1-9][0-9]* \|' "$scratch/VALIDATION.md" || fail "no step-time summary"
# The fusion section: the measured source's gain of 2 fused over 1, from the fusion step's traces.
grep -Eq '^\| resnet-mini \| 2 \| [0-9.]+x \| [0-9.]+x \([+-][0-9.]+ %\), [+-][0-9.]+ % \|$' "$scratch/VALIDATION.md" ||
  fail "no measured-source fusion gain"
# The GPU report's path (every source, the fusion gain predicted), on the same CPU data.
/usr/bin/python3 "$root/scripts/validation-report.py" "$scratch/unpacked" --mutwo "$build/cli/mutwo" \
  -o "$scratch/VALIDATION-all.md" --all-sources >/dev/null
grep -Eq '^\| step time \| analytic \| [1-9][0-9]* \|' "$scratch/VALIDATION-all.md" || fail "no analytic summary"
grep -Eq '^\| resnet-mini \| fp32 \| 4 \| [0-9.]+x \| - \| [0-9.]+x \|' "$scratch/VALIDATION-all.md" ||
  fail "no predicted fusion gain"
grep -Eq '^\| 1 \| matrix-dlrm \| skipped \| 0 \|' "$scratch/VALIDATION.md" || fail "the report lacks call 1's skipped step"
grep -Eq '^\| 2 \| compare \| ok \|' "$scratch/VALIDATION.md" || fail "the report lacks call 2"
echo "device_check_lease_dry_run: ok"

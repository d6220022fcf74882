#!/usr/bin/env bash
# The GPU check's stages run one by one (ctest device_check_dry_run): scripts/device-check.sh's
# matrix stage for one architecture (matrix=bert: its four plans all fit their caps) and its compare
# stage on the CPU executor with the zoo's test-scale model and this build, then
# scripts/validation-report.py on what they left. Asserts the staged path's own contract: the four
# runs stored, the accounted peak equal to the executor's on the CPU for the one-stream plans (within
# 3 % for the others), the pack unpacked equal to the work folder, a report written. The whole
# matrix, the speed, fusion and eager stages and every report section are device_check_lease_dry_run's
# (the same stage functions, run as one lease).
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
  MUTWO_CHECK_PYTHON=/usr/bin/python3 OUT="$scratch/out" bash "$root/scripts/device-check.sh" matrix=bert compare

# One architecture x (plain + 3 capped plans), every one stored; nothing of the other stages.
[ "$(grep -c $'\tmatrix\t' "$scratch/work/runs.tsv")" -eq 4 ] || fail "expected 4 matrix runs in runs.tsv"
[ "$(wc -l <"$scratch/work/runs.tsv")" -eq 4 ] || fail "expected only the matrix's runs in runs.tsv"
for f in results.db compare.json; do
  [ -s "$scratch/work/$f" ] || fail "no $f"
done
# The packed folder holds the same files.
mkdir "$scratch/unpacked"
tar xzf "$scratch/out/device-check.tar.gz" -C "$scratch/unpacked"
cmp "$scratch/work/runs.tsv" "$scratch/unpacked/runs.tsv" || fail "the pack's runs.tsv differs"

/usr/bin/python3 "$root/scripts/validation-report.py" "$scratch/unpacked" --mutwo "$build/cli/mutwo" \
  -o "$scratch/VALIDATION.md"
report=$scratch/VALIDATION.md
grep -q "A dry run on the CPU executor" "$report" || fail "the report does not say it is a CPU dry run"
# The accounted peak against the executor's (tests/device_check_peaks.py).
/usr/bin/python3 "$root/tests/device_check_peaks.py" "$scratch/unpacked" 4 || fail "peak memory"
echo "device_check_dry_run: ok"

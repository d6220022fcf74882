#!/usr/bin/env bash
# A GPU lease's pack re-priced (ctest validation_report_<lease>): scripts/validation-report.py on the
# lease's committed archive, without the kernel sections that refit the kernel models. The report exits
# non-zero when the measured source does not reproduce a run's stored prediction to the ns; each
# EXPECTED line must appear in the report as written. The lines asserted are the GPU's measurements
# and the measured source's replay of them, not the fitted sources, which move with every refit.
# Usage: tests/validation_report.sh MUTWO SCRATCH_DIR ARCHIVE [EXPECTED...]
# (the report is left in SCRATCH_DIR/VALIDATION.md for a caller's further checks)
set -euo pipefail
mutwo=$1
scratch=$2
archive=$3
shift 3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=$(basename "$scratch")
fail() { echo "$name: $*" >&2; exit 1; }
rm -rf "$scratch"
mkdir -p "$scratch/work"
tar xzf "$root/$archive" -C "$scratch/work"
/usr/bin/python3 "$root/scripts/validation-report.py" "$scratch/work" --mutwo "$mutwo" --no-kernel-level \
  -o "$scratch/VALIDATION.md" >"$scratch/report.log" 2>&1 || { cat "$scratch/report.log"; fail "the report failed"; }
for line in "$@"; do
  grep -qF -- "$line" "$scratch/VALIDATION.md" || fail "no line '$line' in the report"
done

#!/usr/bin/env bash
# The H200 lease's pack re-priced (ctest validation_report_h200; tests/validation_report.sh): every
# run's stored prediction reproduced by the measured source, and the lease's figures
# (docs/VALIDATION.md).
# Usage: tests/validation_report_h200.sh MUTWO SCRATCH_DIR
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
scratch=$2
fail() { echo "validation_report_h200: $*" >&2; exit 1; }
# 14 matrix runs compared: the measured source's median step error and the accounted peak's; 8 fused
# resnet18 and bert-base against 8 trained one after another by PyTorch eager; the lease's record
# (both calls, call 2's fusion step ok).
bash "$here/validation_report.sh" "$1" "$scratch" tests/fixtures/device/h200-2026-11-27/call2-device-check.tar.gz \
  "| step time | measured | 14 | 0.7 % | 9.3 % | <= 5 %: met |" \
  "| peak memory | accounted | 14 | 1.2 % | 13.1 % | <= 3 %: met |" \
  "| resnet18 | 32 | 8 | 71.067 ms | 66.968 ms | 1.10x | 0.94x |" \
  "| bert-base | 16 | 8 | 295.848 ms | 327.171 ms | 1.19x | 1.11x |" \
  "| 2 | fusion | ok | 17 | 292 |"
expect() { grep -qF -- "$1" "$scratch/VALIDATION.md" || fail "no line '$1' in the report"; }
# Fused convolutions: per op, 4 fused took 1.82x the time of 2 fused (their models' kernels one after
# another: 2.00x); the default source, which prices them so, predicts the measured fusion gains of
# resnet18 and bert-base (k = 2, 4, 8) within 10 % (median; issue 36's target) and none off by 20 %
# or more (it missed by up to 105 % when it priced a fused convolution as one dense kernel).
expect "Per convolution op, measured time at 4 fused over its time at 2 fused: median 1.82"
/usr/bin/python3 - "$scratch/VALIDATION.md" <<'PY' || fail "the waves fusion gains are off by more than 10 % (median) or 20 % (one)"
import re, sys
rows = [l for l in open(sys.argv[1]) if re.match(r"\| (resnet18|bert-base) \| [248] \| [0-9.]+x \| ", l)]
errors = [float(re.search(r"\(([-+][0-9.]+) %\)", l.split("|")[4]).group(1)) for l in rows]
print("waves fusion gain errors:", errors)
size = sorted(abs(e) for e in errors)
sys.exit(0 if len(size) == 6 and (size[2] + size[3]) / 2 <= 10 and size[-1] < 20 else 1)
PY
echo "validation_report_h200: ok"

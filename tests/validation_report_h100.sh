#!/usr/bin/env bash
# The H100 lease's pack re-priced (ctest validation_report_h100; tests/validation_report.sh): every
# run's stored prediction reproduced by the measured source, its CUDA-graph runs included, and the
# lease's figures (docs/VALIDATION-H100.md), the allocator's state of its runs out of memory included.
# Usage: tests/validation_report_h100.sh MUTWO SCRATCH_DIR
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
bash "$here/validation_report.sh" "$1" "$2" tests/fixtures/device/h100-2026-11-27/call2-device-check.tar.gz \
  "| step time | measured | 20 | 1.7 % | 8.4 % | <= 5 %: met |" \
  "| peak memory | accounted | 20 | 1.1 % | 13.1 % | <= 3 %: met |" \
  "| resnet18 | 32 | 8 | 77.938 ms | 87.425 ms | 1.09x | 1.12x |" \
  "| bert-base | 16 | 8 | 308.899 ms | 352.321 ms | 1.18x | 1.14x |" \
  "| bert-base | 1 | fp32 | yes | 42.321 ms | 42.703 ms | 0.991 |" \
  "Per convolution op, measured time at 4 fused over its time at 2 fused: median 1.86" \
  "| 2 | bench-ops | ok | 16 | 197 |" \
  "| 8940 MiB | 8499 MiB | 478 MiB | 100.4 % | 223 MiB (2.5 %) | over the cap |" \
  "| 2253 MiB | 1710 MiB | 392 MiB | 93.3 % | 537 MiB (23.8 %) | fragmentation |"
echo "validation_report_h100: ok"

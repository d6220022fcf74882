#!/usr/bin/env bash
# scripts/neusight-spread.py on three of NeuSight's ops (ctest neusight_spread): every row it writes
# for conv, ln and softmax stands as is in docs/FIDELITY.md's section, which the full run wrote, and
# the pooled figures named below; an unknown op is refused by name.
# Usage: tests/neusight_spread.sh SCRATCH_DIR   (run from the source root)
set -euo pipefail
scratch=$1
mkdir -p "$scratch"
cp docs/FIDELITY.md "$scratch/FIDELITY.md"
/usr/bin/python3 scripts/neusight-spread.py --ops conv,ln,softmax tests/fixtures/calibration/neusight \
  costmodel/models/waves.json "$scratch/FIDELITY.md"
section=$(sed -n '/begin: scripts\/neusight-spread.py/,/end: scripts\/neusight-spread.py/p' "$scratch/FIDELITY.md")
rows=$(grep -E '^\| [a-z0-9-]+ \| (conv|norm|softmax) \|' <<<"$section")
[[ $(wc -l <<<"$rows") -eq 15 ]] || { echo "neusight_spread: expected 15 GPU rows, got:"; echo "$rows"; exit 1; }
while IFS= read -r row; do
  grep -qxF -- "$row" docs/FIDELITY.md || { echo "neusight_spread: not in docs/FIDELITY.md: $row"; exit 1; }
done <<<"$rows"
for want in "| a100-pcie-80gb | conv | 3461 | 24.6 % | 20.1 % | 17.1 % | 23.5 % |" \
            "| conv | 18374 | 14.5 % | 19.4 % |" "| norm | 3225 | 2.3 % | 3.8 % |" \
            "| softmax | 3112 | 2.2 % | 4.0 % |"; do
  grep -qxF -- "$want" <<<"$section" || { echo "neusight_spread: missing: $want"; exit 1; }
done
if out=$(/usr/bin/python3 scripts/neusight-spread.py --ops cnv 2>&1); then
  echo "neusight_spread: --ops cnv was accepted"; exit 1
fi
grep -qF "neusight-spread: --ops: unknown op 'cnv'" <<<"$out" || { echo "neusight_spread: $out"; exit 1; }
echo "neusight_spread: ok"

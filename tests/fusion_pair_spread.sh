#!/usr/bin/env bash
# scripts/fusion-pair-spread.py on a held-out CSV built here (ctest fusion_pair_spread). On the P4, 4
# products of 100x100x100 in 1,000 ns have two partners: one product of the same shape in 500 ns
# (speed-up 4 x 500 / 1,000 = 2.0) and, 5 % off in m, two products of 105x100x100 in 1,260 ns (630 ns a
# product, 600 ns scaled to 100^3: speed-up 2.4): spread |2.0 / 2.4 - 1| = 16.7 %. A product 2x off in m
# and one of 3 products (more than half of 4) are no partners; the 2- and 3-product rows have one partner
# each and the T4's batched row none, so none of them is counted. A CSV without the columns, or with a
# shape that is not a number, is refused by name.
# Usage: tests/fusion_pair_spread.sh SCRATCH_DIR   (run from the source root)
set -euo pipefail
scratch=$1
mkdir -p "$scratch"
csv=$scratch/held.csv
row() {  # device category batch m n k kernel_ns
  echo "$1,NeuSight,neusight,$2,gemm,,fp32,g,$3,$4,$5,$6,1,1,$7,0,$7,$7,0"
}
{
  echo "device,dataset,source,category,kernel,variant,precision,group,batch,m,n,k,flops,bytes,time_ns,harness_ns,kernel_ns,predicted_ns,error"
  row p4 bmm 4 100 100 100 1000
  row p4 GEMM/linear 1 100 100 100 500
  row p4 bmm 2 105 100 100 1260
  row p4 GEMM/linear 1 200 100 100 800
  row p4 bmm 3 100 100 100 900
  row t4 bmm 4 100 100 100 1000
} >"$csv"
/usr/bin/python3 scripts/fusion-pair-spread.py "$csv" "$scratch/FIDELITY.md" >/dev/null
section=$(sed -n '/begin: scripts\/fusion-pair-spread.py/,/end: scripts\/fusion-pair-spread.py/p' "$scratch/FIDELITY.md")
for want in "| p4 | 1 | 16.7 % | 16.7 % |" "| every GPU | 1 | 16.7 % | 16.7 % |"; do
  grep -qxF -- "$want" <<<"$section" || { echo "fusion_pair_spread: missing: $want"; echo "$section"; exit 1; }
done
if grep -q "| t4 |" <<<"$section"; then echo "fusion_pair_spread: the T4's row without partners was tabled"; exit 1; fi
echo "device,error" >"$scratch/bad.csv"
if out=$(/usr/bin/python3 scripts/fusion-pair-spread.py "$scratch/bad.csv" "$scratch/FIDELITY.md" 2>&1); then
  echo "fusion_pair_spread: a CSV without the held-out columns was accepted"; exit 1
fi
grep -qF "bad.csv: no column batch, category, k, kernel_ns, m, n" <<<"$out" || { echo "fusion_pair_spread: $out"; exit 1; }
row p4 bmm 4 100 x 100 1000 >"$scratch/bad_number.csv"
sed -i '1i device,dataset,source,category,kernel,variant,precision,group,batch,m,n,k,flops,bytes,time_ns,harness_ns,kernel_ns,predicted_ns,error' "$scratch/bad_number.csv"
if out=$(/usr/bin/python3 scripts/fusion-pair-spread.py "$scratch/bad_number.csv" "$scratch/FIDELITY.md" 2>&1); then
  echo "fusion_pair_spread: a row with n = 'x' was accepted"; exit 1
fi
grep -qF "bad_number.csv:2: field 'n' = 'x': must be an integer >= 1" <<<"$out" || { echo "fusion_pair_spread: $out"; exit 1; }
echo "fusion_pair_spread: ok"

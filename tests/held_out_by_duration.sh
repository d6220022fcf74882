#!/usr/bin/env bash
# scripts/held-out-by-duration.py on a held-out CSV built here (ctest held_out_by_duration): 20 P4
# linears of 5 ms at 0.25 of the P4's 5.5 TFLOP/s datasheet peak, priced 30 % too fast, fill one cell
# of each table; 19 bmm rows are too few and leave theirs blank; DeepBench's rows are not NeuSight's;
# a CSV without the held-out columns is refused by name.
# Usage: tests/held_out_by_duration.sh SCRATCH_DIR   (run from the source root)
set -euo pipefail
scratch=$1
mkdir -p "$scratch"
csv=$scratch/held.csv
echo "device,dataset,source,category,kernel,variant,precision,group,batch,m,n,k,flops,bytes,time_ns,harness_ns,kernel_ns,predicted_ns,error" >"$csv"
for i in $(seq 20); do  # 5.5e3 FLOP/ns x 5e6 ns x 0.25
  echo "p4,NeuSight,neusight,GEMM/linear,gemm,,fp32,gemm (cuda),1,1,1,1,6875000000,1,5010000,10000,5000000,3500000,-0.3" >>"$csv"
done
for i in $(seq 19); do
  echo "p4,NeuSight,neusight,bmm,gemm,,fp32,gemm batched (cuda),2,1,1,1,6875000000,1,5010000,10000,5000000,3500000,-0.3" >>"$csv"
done
echo "t4,DeepBench,DeepSpeech,GEMM/linear,gemm,,fp32,gemm (cuda),1,1,1,1,1000,1,50000,0,50000,60000,0.2" >>"$csv"
/usr/bin/python3 scripts/held-out-by-duration.py "$csv" "$scratch/FIDELITY.md"
section=$(sed -n '/begin: scripts\/held-out-by-duration.py/,/end: scripts\/held-out-by-duration.py/p' "$scratch/FIDELITY.md")
for want in "| p4 | linear |  |  | -30 % (20) |  |  |" "| p4 | bmm |  |  |  |  |  |" \
            "| p4 | linear |  |  | 0.25 |  |  |"; do
  grep -qxF -- "$want" <<<"$section" || { echo "held_out_by_duration: missing: $want"; echo "$section"; exit 1; }
done
if grep -q "| t4 |" <<<"$section"; then echo "held_out_by_duration: DeepBench's row was tabled"; exit 1; fi
echo "device,error" >"$scratch/bad.csv"
if out=$(/usr/bin/python3 scripts/held-out-by-duration.py "$scratch/bad.csv" "$scratch/FIDELITY.md" 2>&1); then
  echo "held_out_by_duration: a CSV without the held-out columns was accepted"; exit 1
fi
grep -qF "bad.csv: no column category, dataset, flops, kernel_ns" <<<"$out" || { echo "held_out_by_duration: $out"; exit 1; }
echo "held_out_by_duration: ok"

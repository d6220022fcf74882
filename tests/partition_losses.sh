#!/usr/bin/env bash
# Per-model learning rates follow the user's model index whatever order the plan runs the sub-arrays in
# (ctest cli_run_partition_losses). The plan runs the faster 1-model sub-array of --partition 2,1 first
# (multiplex_order); the executor numbered models in schedule order, so model 0 trained with model 2's
# rate and every loss was reported at another index. Each model's losses are its own in the fused array,
# under every partition. Usage: tests/partition_losses.sh MUTWO
set -euo pipefail
mutwo=$1
losses() {
  "$mutwo" run -m bert-mini -k 3 --lr 0.1,0.2,0.3 --device cpu --no-db --iters 2 --warmup 0 --json "$@" |
    /usr/bin/python3 -c 'import json, sys; print(" ".join(f"{x:.6f}" for x in json.load(sys.stdin)["measurement"]["losses"]))'
}
fused=$(losses)
for p in 2,1 1,2 1,1,1; do
  got=$(losses --partition "$p")
  [ "$got" = "$fused" ] || { echo "partition $p: losses $got, fused $fused"; exit 1; }
done
echo "partition_losses: ok ($fused)"

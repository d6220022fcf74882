#!/usr/bin/env bash
# The steady state with and without wrapped iteration boundaries (mutwo simulate --wrap,
# ir/unrolled_schedule.hpp) on multiplexed plans under memory limits that force swapping:
# one CSV row per (array, partition, policy, memory), both steady-state step times and peaks.
# The default cost source (waves) on the A100-40GB catalog entry: predictions, not measurements.
# Usage: scripts/wrap-steady-state.sh [path/to/mutwo] > wrap.csv
set -euo pipefail
mutwo=${1:-build/cli/mutwo}
echo "model,models,batch,partition,policy,memory,step_ns,wrapped_step_ns,change,peak_bytes,wrapped_peak_bytes"
row() {  # model models batch partition policy memory [extra flags...]
  local model=$1 k=$2 b=$3 part=$4 pol=$5 mem=$6
  shift 6
  local args=(simulate -m "$model" -k "$k" --batch "$b" --partition "$part" --policy "$pol" --order multiplexed
              --memory "$mem" --json "$@")
  local plain wrapped
  plain=$("$mutwo" "${args[@]}")
  wrapped=$("$mutwo" "${args[@]}" --wrap)
  /usr/bin/python3 - "$model" "$k" "$b" "$part" "$pol$([ $# -gt 0 ] && echo +offload)" "$mem" "$plain" "$wrapped" <<'PY'
import json, sys
model, k, b, part, pol, mem, plain, wrapped = sys.argv[1:]
p = json.loads(plain)["prediction"]; w = json.loads(wrapped)["prediction"]
if p["oom"]:
    change = "plan over the limit"
elif w["oom"]:
    change = "wrapped over the limit"
else:
    change = f"{(w['step_time_ns'] - p['step_time_ns']) / p['step_time_ns'] * 100:+.2f}%"
print(f"{model},{k},{b},\"{part}\",{pol},{mem},{p['step_time_ns']},{w['step_time_ns']},{change},"
      f"{p['peak_bytes']},{w['peak_bytes']}")
PY
}
for pol in vdnn capuchin mutwo; do
  row bert-base 8 16 2,2,2,2 "$pol" 6GiB --state-offload
  row bert-base 8 16 4,4 "$pol" 18GiB
  row gpt2 8 8 4,4 "$pol" 24GiB
  row gpt2 8 8 2,2,2,2 "$pol" 12GiB --state-offload
  row resnet50 8 32 4,4 "$pol" 16GiB
  row vit-b16 8 32 4,4 "$pol" 20GiB
done

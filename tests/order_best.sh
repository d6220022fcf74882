#!/usr/bin/env bash
# `--order best` keeps the faster of the multiplexed and back-to-back plans under the host timeline the
# prediction simulates (ctest cli_simulate_order_best). The plans were judged with no host timeline, so
# with the default eager host best kept back to back for 4 gpt2-mini x1 under mutwo at 2000 KiB, 15.518
# ms against multiplexed's 14.929 ms (first steps). Usage: tests/order_best.sh MUTWO
set -euo pipefail
mutwo=$1
first_ns() {
  "$mutwo" simulate -m gpt2-mini --models 4 --partition 1,1,1,1 --policy mutwo --memory 2000KiB --json "$@" |
    /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["prediction"]["first_step_ns"])'
}
for host in eager none; do
  best=$(first_ns --host-mode "$host" --order best)
  m=$(first_ns --host-mode "$host" --order multiplexed)
  b=$(first_ns --host-mode "$host" --order back-to-back)
  want=$((m <= b ? m : b))
  [ "$best" = "$want" ] || { echo "host $host: best $best ns, multiplexed $m, back to back $b"; exit 1; }
  echo "host $host: best $best ns (multiplexed $m, back to back $b)"
done

#!/usr/bin/env bash
# --top sets how many rows are printed, never which plan wins (ctest cli_search_top). Pruning rule 2
# took a partition's whole compute, optimizer steps included, as its lower bound; an offloaded plan
# with the optimizer on the host CPU runs under it, and at --top 1 the search skipped the partition
# whose plan wins at --top 10 (resnet-mini x4 at 500 KiB: 2+1+1 vdnn+offload 15.282 ms at --top 1,
# 1+1+1+1 none+offload 12.382 ms at --top 10). Usage: tests/search_top.sh MUTWO
set -euo pipefail
mutwo=$1
winner() {
  "$mutwo" search -m resnet-mini:4 --memory 500KiB --host-mode none --json "$@" |
    /usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)["rows"][0]; print(r["partition"], r["policy"], r["step_time_ns"])'
}
one=$(winner --top 1)
ten=$(winner --top 10)
[ "$one" = "$ten" ] || { echo "search_top: --top 1 wins $one, --top 10 wins $ten"; exit 1; }
echo "search_top: $one"

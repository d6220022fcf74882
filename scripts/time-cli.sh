#!/usr/bin/env bash
# Process time (user + sys) of the commands that must start in milliseconds: `mutwo --help`,
# `mutwo models` and `mutwo simulate --model bert-base`, the median of N runs each (issue 15's
# target: under 50 ms each on a release build). Also prints the wall time, the maximum resident
# set size, and whether the binary links LibTorch (it must not: only run/profile load it).
#
#   scripts/time-cli.sh [path/to/mutwo] [runs]      (defaults: build/cli/mutwo, 10)
#   MUTWO_TIME_EXTRA='run --model resnet-mini --device cpu --no-db --iters 1 --warmup 0' scripts/time-cli.sh
#     (adds one more command, e.g. to see what loading the executor module costs)
set -euo pipefail

mutwo=${1:-build/cli/mutwo}
runs=${2:-10}
if [[ ! -x $mutwo ]]; then
  echo "time-cli.sh: no executable at '$mutwo' (build it: cmake --build build --target mutwo)" >&2
  exit 2
fi

commands=("--help" "models" "simulate --model bert-base")
if [[ -n ${MUTWO_TIME_EXTRA:-} ]]; then commands+=("$MUTWO_TIME_EXTRA"); fi

echo "binary: $mutwo ($(ldd "$mutwo" | grep -c torch || true) LibTorch libraries linked)"
python3 - "$mutwo" "$runs" "${commands[@]}" <<'EOF'
import os, statistics, subprocess, sys, time

mutwo, runs, commands = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def once(args):
    start = time.perf_counter()
    proc = subprocess.Popen([mutwo] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"time-cli.sh: 'mutwo {' '.join(args)}' exited {os.waitstatus_to_exitcode(status)}")
    return (usage.ru_utime + usage.ru_stime) * 1e3, wall * 1e3, usage.ru_maxrss / 1024

rows = []
for command in commands:
    args = command.split()
    once(args)  # warm the page cache
    samples = [once(args) for _ in range(runs)]
    cpu = statistics.median(s[0] for s in samples)
    wall = statistics.median(s[1] for s in samples)
    rss = statistics.median(s[2] for s in samples)
    rows.append((f"mutwo {command}", cpu, min(s[0] for s in samples), wall, rss))

width = max(len(r[0]) for r in rows)
print(f"{'command':<{width}}  {'user+sys ms (median)':>20}  {'min':>7}  {'wall ms':>8}  {'max RSS MiB':>11}  target")
for i, (name, cpu, low, wall, rss) in enumerate(rows):
    verdict = "-" if i >= 3 else "ok" if cpu < 50 else "OVER 50 ms"
    print(f"{name:<{width}}  {cpu:>20.1f}  {low:>7.1f}  {wall:>8.1f}  {rss:>11.1f}  {verdict}")
print(f"({runs} runs each after one warm-up run)")
EOF

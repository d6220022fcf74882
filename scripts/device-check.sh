#!/usr/bin/env bash
# The GPU check (issue 22), for a lent GPU machine: the `device` tool runs it in the repository root,
# one stage (or a few) per call, each call inside its 10-minute limit, back to back while the
# machine is warm. Every stage works in build-device/ (the build and build-device/work, results so
# far) and ends by packing build-device/work into $OUT/device-check.tar.gz (split into 15 MiB
# parts past that: the tool brings back at most 8 files of 16 MiB), so the latest call returns
# everything measured so far; unpack with `tar xzf` (or `cat parts | tar xz`) into a folder and run
# scripts/validation-report.py on it.
#   build   configures mutwo against that machine's PyTorch LibTorch (CUDA) and the Debian headers
#           and static SQLite carried in .deps/root (scripts/fetch-device-deps.sh makes it; carry
#           ".deps"), and builds it (no checkmate: its COIN-OR CBC solver is not carried);
#   test    the executor's tests, the CUDA suite among them (test_exec_cuda);
#   matrix  predicted vs measured (item 4): six architectures, 4 models each, profiled (traces of
#           widths 4 and 2), then run plain, under a memory cap (an allocator fraction emulating a
#           smaller GPU) with a swap policy (vdnn), a recompute policy (checkpoint) and two
#           multiplexed sub-arrays (mutwo, [2,2]), and once as a CUDA graph; each prediction by the
#           measured source beside the measurement in results.db, each schedule saved, runs.tsv
#           listing them (re-predicted by the analytic and calibrated sources afterwards, no GPU);
#   speed   the executor against PyTorch eager (item 2): one model per family at its default batch,
#           fp32, amp-bf16 and a CUDA graph; fused arrays of 2, 4, 8 models; scripts/eager-baseline.py
#           trains the same with the device's torch (eager-*.csv);
#   bench   `mutwo bench-host` (host-link.json: pinned copies each way and both at once, 4 KiB to
#           256 MiB, latency and bandwidth fitted; a small op's dispatch and launch interval), then
#           `mutwo bench-ops` on its default grid (ops.csv) and a profile fitted from it
#           (ops-profile.json, the calibrated source of the H100);
#   compare `mutwo compare` of everything run.
# Usage: bash scripts/device-check.sh [STAGE...]   (default: all of them in order; each needs the
# build; matrix=LABEL,... runs those architectures only, e.g. matrix=resnet18,bert-base,gpt2). Reads the card; never changes its settings. The step log's tail is printed per step.
# Dry run without a GPU, the same stages on the CPU executor with the zoo's test-scale models and
# an existing build (ctest's device_check_dry_run runs it; MUTWO_CHECK_PYTHON names a python3 with
# torch and torchvision for the eager side, MUTWO_CHECK_WORK the work folder):
#   MUTWO_CHECK_DEVICE=cpu MUTWO_CHECK_SCALE=mini MUTWO_CHECK_BUILD=build OUT=/tmp/o \
#     MUTWO_CHECK_PYTHON=/usr/bin/python3 bash scripts/device-check.sh matrix speed bench compare
# (`build` with MUTWO_CHECK_DEVICE=cpu MUTWO_TORCH_PREFIX=<dir with TorchConfig.cmake>
# MUTWO_TORCH_ABI=1 checks the configure path against another LibTorch.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test matrix speed bench compare)
only_arrays=""  # matrix=LABEL,LABEL: those architectures only (a lease's 10-minute calls)
for s in "${stages[@]}"; do
  case $s in build | test | matrix | speed | bench | compare) ;; all) stages=(build test matrix speed bench compare) ;;
  matrix=*) only_arrays=${s#matrix=} ;;
  *) echo "device-check: unknown stage '$s'; valid: build test matrix[=LABEL,...] speed bench compare all" >&2; exit 2 ;; esac
done
build=${MUTWO_CHECK_BUILD:-build-device}
work=${MUTWO_CHECK_WORK:-build-device/work}
pack=${OUT:-build-device/out}
mkdir -p "$work/logs" "$work/traces" "$work/schedules" "$pack"
work=$(cd "$work" && pwd)
pack=$(cd "$pack" && pwd)
device=${MUTWO_CHECK_DEVICE:-cuda}
scale=${MUTWO_CHECK_SCALE:-full}
deps=$PWD/.deps/root
python=${MUTWO_CHECK_PYTHON:-python3}  # the device's, with its torch
db=$work/results.db
manifest=$work/runs.tsv
failures=()

# The six architectures of item 4 (label, model, batch per model), 4 models each: batches that let 4
# fused models train plainly in an H100's 80 GB (gpt2 at seq 1024: 5.9 GiB of activations a model
# at batch 2). mini: the zoo's test-scale models at their own batch, for a dry run on the CPU.
if [ "$scale" = mini ]; then
  arrays=("resnet resnet-mini 0" "bert bert-mini 0" "gpt2 gpt2-mini 0" "vit vit-mini 0"
    "mobilenet mobilenetv2-mini 0" "dlrm dlrm-mini 0")
  speed_models=(resnet-mini bert-mini)
  fused_models=(resnet-mini)
  fused_counts=(2 4)
  iters=(--iters 3 --warmup 1)
  eager_args=(--models resnet18 --batch 2 --image-size 32 --iters 2 --warmup 1)
  eager_fused_args=(--models resnet18 --batch 2 --image-size 32 --iters 2 --warmup 1 --copies 2,4)
else
  arrays=("resnet18 resnet18 32" "bert-base bert-base 16" "gpt2 gpt2 2" "vit-b16 vit-b16 16"
    "mobilenet-v2 mobilenet-v2 32" "dlrm dlrm 128")
  speed_models=(resnet18 bert-base gpt2 vit-b16 mobilenet-v2 dlrm)
  fused_models=(resnet18 bert-base)
  fused_counts=(2 4 8)
  iters=(--iters 10 --warmup 3)
  eager_args=(--models resnet18,bert-base,gpt2,vit-b16,mobilenet-v2)
  eager_fused_args=(--models resnet18,bert-base --copies 2,4,8)
fi

# Runs a named step with its output in logs/<name>.log; a failure is recorded, not fatal.
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== $name"
  if "$@" >"$work/logs/$name.log" 2>&1; then
    echo "   ok ($((SECONDS - start)) s)"
  else
    local rc=$?
    echo "   FAILED (exit $rc, $((SECONDS - start)) s): tail of logs/$name.log:"
    tail -n 25 "$work/logs/$name.log" | sed 's/^/   | /'
    failures+=("$name")
  fi
}

environment() {
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv || true
  "$python" -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda,
"cudnn", torch.backends.cudnn.version(), "cxx11 abi", torch._C._GLIBCXX_USE_CXX11_ABI,
"devices", torch.cuda.device_count(), file=sys.stdout)'
  command -v nvcc && nvcc --version | tail -n 2
  cmake --version | head -n 1
  c++ --version | head -n 1
  lscpu | grep -E "Model name|^CPU\(s\)" || true
  git rev-parse HEAD 2>/dev/null || true
}

configure() {
  [ -d "$deps" ] || { echo "no $deps: run scripts/fetch-device-deps.sh where Debian's registry is reachable and carry .deps"; return 1; }
  local torch_prefix abi generator=()
  torch_prefix=${MUTWO_TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')} || return 1
  # LibTorch's C++ ABI decides everyone's: pre-2.7 wheels use the old one (0).
  abi=${MUTWO_TORCH_ABI:-$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')} || return 1
  local with_cuda=ON
  [ "$device" = cpu ] && with_cuda=OFF
  export PATH="$deps/usr/bin:$PATH"
  command -v ninja >/dev/null && generator=(-G Ninja)
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$deps/usr;$deps/usr/lib/x86_64-linux-gnu/cmake;$deps/usr/share/cmake;$deps/usr/lib/cmake;$torch_prefix" \
    -DCMAKE_CXX_FLAGS="-D_GLIBCXX_USE_CXX11_ABI=$abi -DFMT_HEADER_ONLY=1" \
    -DSQLite3_INCLUDE_DIR="$deps/usr/include" \
    -DSQLite3_LIBRARY="$deps/usr/lib/x86_64-linux-gnu/libsqlite3.a" \
    -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DMUTWO_WITH_TORCH=ON -DMUTWO_WITH_CUDA=$with_cuda -DMUTWO_WITH_CBC=OFF -DMUTWO_BUILD_BENCH=OFF
}

build_all() {
  cmake --build "$build" -j "$(nproc)"
}

exec_tests() {
  ctest --test-dir "$build" -R "exec|cli_(run|profile)" --output-on-failure -j 4
}

mutwo() { "$build/cli/mutwo" "$@"; }

# A cap between the resident state and the plain peak: resident + 55 % of the activations of the
# array's plain step, as `mutwo simulate` predicts it on the matched catalog GPU.
cap_for() {
  mutwo simulate "$@" --memory 1TiB --json |
    python3 -c 'import json, sys; p = json.load(sys.stdin)["prediction"]
r, k = p["resident_bytes"], p["peak_bytes"]; print(f"{r + (k - r) * 55 // 100}B")'
}

# `mutwo run --json` with the schedule saved, one line in runs.tsv: label, run id, group, schedule,
# the traces of its measured source ("," between; "-" for none; paths relative to the work folder),
# the run's catalog GPU, its memory limit, its prediction's host mode, the device it ran on. A
# stored run counts as done, a measured OOM too (a result to compare); a run that is refused or
# fails leaves no line and fails the step; its log says why.
logged_run() {
  local label=$1 group=$2 traces=$3
  shift 3
  local schedule=$work/schedules/$label.json json
  json=$(mutwo run "$@" --device "$device" --db "$db" --save-schedule "$schedule" --json)
  printf '%s\n' "$json" >"$work/logs/run-$label.json"
  printf '%s\n' "$json" | python3 -c '
import json, sys
import os
label, group, schedule, traces, manifest, work = sys.argv[1:7]
rel = lambda path: path if path == "-" else os.path.relpath(path, work)  # the unpacked folder reads them
try:
    j = json.load(sys.stdin)
except ValueError:
    sys.exit(3)
if "run_id" not in j:
    sys.exit(3)
m = j.get("measurement") or {}
p = j.get("prediction") or {}
with open(manifest, "a") as f:
    f.write("\t".join([label, str(j["run_id"]), group, rel(schedule), ",".join(rel(t) for t in traces.split(",")),
                       j.get("gpu", ""), str(j.get("memory_limit_bytes", 0)), p.get("host_mode", ""),
                       j.get("device", "")]) + "\n")
print(label + ": run", j["run_id"], "predicted", p.get("step_time_ns"), "ns, measured", m.get("step_time_ns"), "ns")
' "$label" "$group" "$schedule" "$traces" "$manifest" "$work"
}

batch_args() { [ "$1" -gt 0 ] && echo "--batch $1"; }

# Item 4 for one architecture: label, model, batch.
matrix_arch() {
  local name=$1 model=$2 batch=$3
  local a=(--model "$model" $(batch_args "$batch"))
  local t4=$work/traces/$name-x4.json t2=$work/traces/$name-x2.json failed=0
  mutwo profile "${a[@]}" --models 4 --device "$device" -o "$t4" --db "$db" "${iters[@]}" || return 1
  mutwo profile "${a[@]}" --models 2 --device "$device" -o "$t2" --db "$db" "${iters[@]}" || return 1
  local m4=(--cost-source measured --trace "$t4") m2=(--cost-source measured --trace "$t2")
  logged_run "$name-plain" matrix "$t4" "${a[@]}" --models 4 "${m4[@]}" "${iters[@]}" || failed=1
  # Each plan under its own cap (resident + 55 % of its plain activations); a plan that does not fit
  # it runs anyway (--allow-oom), its predicted and measured OOM then compared.
  local cap cap22
  cap=$(cap_for "${a[@]}" --models 4 "${m4[@]}") || return 1
  cap22=$(cap_for "${a[@]}" --models 4 --partition 2,2 "${m2[@]}") || return 1
  echo "memory cap for $name x4 [4]: $cap; [2,2]: $cap22"
  logged_run "$name-swap-vdnn" matrix "$t4" "${a[@]}" --models 4 --policy vdnn --memory-cap "$cap" "${m4[@]}" \
    --allow-oom "${iters[@]}" || failed=1
  logged_run "$name-recompute-checkpoint" matrix "$t4" "${a[@]}" --models 4 --policy checkpoint --memory-cap "$cap" \
    "${m4[@]}" --allow-oom "${iters[@]}" || failed=1
  logged_run "$name-multiplexed-mutwo" matrix "$t2" "${a[@]}" --models 4 --partition 2,2 --policy mutwo \
    --memory-cap "$cap22" "${m2[@]}" --allow-oom "${iters[@]}" || failed=1
  if [ "$device" = cuda ]; then
    logged_run "$name-plain-cuda-graph" matrix "$t4" "${a[@]}" --models 4 "${m4[@]}" --cuda-graph "${iters[@]}" || failed=1
  fi
  return $failed
}

matrix() {
  local failed=0 entry ran=0
  for entry in "${arrays[@]}"; do
    read -r name model batch <<<"$entry"
    [ -n "$only_arrays" ] && [[ ",$only_arrays," != *",$name,"* ]] && continue
    step "matrix-$name" matrix_arch "$name" "$model" "$batch" || failed=1
    ran=$((ran + 1))
  done
  if [ "$ran" -eq 0 ]; then
    echo "device-check: matrix=$only_arrays names none of: $(for e in "${arrays[@]}"; do printf '%s ' "${e%% *}"; done)"
    failures+=(matrix)
  fi
  return $failed
}

# Item 2, mutwo's side: one model per family at its default batch (fp32, amp-bf16, a CUDA graph),
# then fused arrays; analytic predictions (the measured traces are the matrix's, at other batches).
speed_runs() {
  local failed=0 m k
  for m in "${speed_models[@]}"; do
    logged_run "speed-$m-x1-fp32" speed - --model "$m" "${iters[@]}" || failed=1
    if [ "$device" = cuda ]; then
      logged_run "speed-$m-x1-amp-bf16" speed - --model "$m" --precision amp-bf16 "${iters[@]}" || failed=1
      logged_run "speed-$m-x1-fp32-cuda-graph" speed - --model "$m" --cuda-graph "${iters[@]}" || failed=1
    fi
  done
  for m in "${fused_models[@]}"; do
    for k in "${fused_counts[@]}"; do
      logged_run "speed-$m-x$k-fp32" speed - --model "$m" --models "$k" "${iters[@]}" || failed=1
    done
  done
  return $failed
}

# Item 2, PyTorch's side: the same models trained by PyTorch eager with the device's torch.
eager_baseline() {
  local precisions=fp32
  [ "$device" = cuda ] && precisions=fp32,amp-bf16
  "$python" scripts/eager-baseline.py "${eager_args[@]}" --copies 1 --precision "$precisions" --device "$device" \
    --mutwo "$build/cli/mutwo" -o "$work/eager-x1.csv" || return 1
  "$python" scripts/eager-baseline.py "${eager_fused_args[@]}" --precision fp32 --device "$device" \
    --mutwo "$build/cli/mutwo" -o "$work/eager-fused.csv"
}

# `mutwo bench-ops` on the default grid (every kernel, every precision the GPU runs) -> ops.csv, and
# a profile fitted from it (the rows are all one catalog device: no --device needed).
bench_ops() {
  if [ "$device" != cuda ]; then  # the full grid would take hours on a CPU, and cpu rows are not fitted
    mutwo bench-host --device "$device" --sizes 4096,1048576,4194304 --iters 3 -o "$work/host-link.json" || return 1
    mutwo bench-ops --device "$device" --quick -o "$work/ops.csv"
    return
  fi
  # The host link (pinned copies each way and both at once) and the launch figures (item 3).
  mutwo bench-host --device "$device" -o "$work/host-link.json" || return 1
  mutwo bench-ops --device "$device" -o "$work/ops.csv" || return 1
  mutwo calibrate "$work/ops.csv" -o "$work/ops-profile.json"
}

compare() {
  mutwo compare --db "$db" && mutwo compare --db "$db" --json >"$work/compare.json"
}

# Packs the work folder into $OUT for the device tool to bring back (at most 8 files of 16 MiB).
pack_work() {
  rm -f "$pack"/device-check.tar.gz*
  tar czf "$pack/device-check.tar.gz" -C "$work" . || return 1
  local bytes
  bytes=$(stat -c %s "$pack/device-check.tar.gz")
  if [ "$bytes" -gt $((15 * 1024 * 1024)) ]; then
    split -b 15M -d "$pack/device-check.tar.gz" "$pack/device-check.tar.gz.part" && rm "$pack/device-check.tar.gz"
  fi
  ls -l "$pack"
}

step environment environment
for s in "${stages[@]}"; do
  case $s in
    build) step configure configure && step build build_all ;;
    test) step exec-tests exec_tests ;;
    matrix | matrix=*) matrix ;;
    speed) step speed speed_runs; step eager eager_baseline ;;
    bench) step bench-ops bench_ops ;;
    compare) step compare compare && cat "$work/logs/compare.log" ;;
  esac
done
pack_work >"$work/logs/pack.log" 2>&1 || failures+=(pack)
if [ ${#failures[@]} -gt 0 ]; then
  echo "device-check: FAILED: ${failures[*]} (logs in $work/logs, packed in $pack)"
  exit 1
fi
echo "device-check: ${stages[*]} passed; results.db, runs.tsv, traces, schedules and logs in $work, packed in $pack"

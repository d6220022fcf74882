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
#           multiplexed sub-arrays (mutwo, [2,2]; on a GPU also under PyTorch's expandable segments),
#           and once as a CUDA graph; each prediction by the
#           measured source beside the measurement in results.db, each schedule saved, runs.tsv
#           listing them (re-predicted by the waves, analytic and calibrated sources afterwards, no GPU);
#   speed   k fused models against k one after another (issue 36, item 5: fusion, eager-fusion) and
#           NeuSight's kernel shapes timed here (kernel-sample, scripts/kernel-sample.py), ResNet-50's
#           fp16 convolutions in both layouts (conv-layout, scripts/conv-layout-sample.py); then
#           the executor against PyTorch eager (item 2): one model per family at its default batch,
#           fp32, amp-bf16, a CUDA graph and fused Adam; fused arrays of 2, 4, 8 models; scripts/eager-baseline.py
#           trains the same with the device's torch (eager-*.csv);
#   bench   `mutwo bench-host` (host-link.json: pinned copies each way and both at once, 4 KiB to
#           256 MiB, latency and bandwidth fitted; a small op's dispatch and launch interval), then
#           `mutwo bench-ops` on its default grid (ops.csv) and a profile fitted from it
#           (ops-profile.json, the calibrated source of the H100);
#   compare `mutwo compare` of everything run;
#   lease   all of it in ONE device call inside a time budget (MUTWO_CHECK_BUDGET_S seconds, default
#           540: a call's 600 s less a margin), for a lease of 15 minutes of device time in all: the
#           kernel sample and eager's k models one after another (no build needed), then build only
#           `mutwo`, fusion (resnet18 b32 and bert-base b16, 1/2/4/8 fused, then each profiled),
#           bench-host, matrix resnet18, bert-base, gpt2, the CUDA suite, speed (resnet18, bert-base,
#           gpt2 alone: amp-bf16 and a CUDA graph beside fp32), eager, matrix vit-b16, mobilenet-v2,
#           dlrm, bench-ops (6 timed launches a shape), compare, in that order (the issue's targets
#           first), 6 timed steps after 2 warm-up. Each step is killed when
#           the budget runs out and skipped when less than its floor is left; runs already in runs.tsv
#           and steps already done are not repeated, so a second call resumes where the first stopped.
#           lease.tsv records each step (ok, failed, timed out, skipped, done before) with its seconds:
#           what did and did not run on the GPU. In every stage a `mutwo run` or `mutwo profile` is
#           ended after MUTWO_CHECK_RUN_TIMEOUT_S (default 150 s), so a hang fails its step only.
# Usage: bash scripts/device-check.sh [STAGE...]   (default: all of them but lease, in order; each
# needs the build; matrix=LABEL,... runs those architectures only, e.g. matrix=resnet18,bert-base).
# On a lease of 15 device minutes: `bash scripts/device-check.sh lease` with the tool's timeout_s=600,
# then, while the machine is warm and device time is left, once more with MUTWO_CHECK_BUDGET_S set
# under what is left. Reads the card; never changes its settings. The step log's tail is printed per
# step.
# Dry run without a GPU, the same stages on the CPU executor with the zoo's test-scale models and
# an existing build (ctest's device_check_lease_dry_run runs the lease so, device_check_dry_run the
# stages matrix=bert compare; MUTWO_CHECK_PYTHON names a python3 with torch and torchvision for the
# eager side, MUTWO_CHECK_WORK the work folder):
#   MUTWO_CHECK_DEVICE=cpu MUTWO_CHECK_SCALE=mini MUTWO_CHECK_BUILD=build OUT=/tmp/o \
#     MUTWO_CHECK_PYTHON=/usr/bin/python3 bash scripts/device-check.sh matrix speed bench compare
# (`build` with MUTWO_CHECK_DEVICE=cpu MUTWO_TORCH_PREFIX=<dir with TorchConfig.cmake>
# MUTWO_TORCH_ABI=1 checks the configure path against another LibTorch.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
script=$PWD/scripts/device-check.sh
# `device-check.sh _call FUNCTION ARGS...` (internal): one lease step in a process of its own, so that
# `timeout` can end it and everything it started at the budget.
internal_call=0
if [ "${1:-}" = _call ]; then
  internal_call=1
  shift
fi
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test matrix speed bench compare)
only_arrays=""  # matrix=LABEL,LABEL: those architectures only
if [ $internal_call -eq 0 ]; then
  for s in "${stages[@]}"; do
    case $s in build | test | matrix | speed | bench | compare | lease) ;; all) stages=(build test matrix speed bench compare) ;;
    matrix=*) only_arrays=${s#matrix=} ;;
    *) echo "device-check: unknown stage '$s'; valid: build test matrix[=LABEL,...] speed bench compare all lease" >&2; exit 2 ;; esac
  done
  for s in "${stages[@]}"; do
    [ "$s" = lease ] && export MUTWO_CHECK_LEASE=1
  done
fi
lease_mode=${MUTWO_CHECK_LEASE:-0}
budget_s=${MUTWO_CHECK_BUDGET_S:-540}
for v in MUTWO_CHECK_BUDGET_S MUTWO_CHECK_RUN_TIMEOUT_S MUTWO_CHECK_FLOOR_S; do
  case ${!v-0} in '' | *[!0-9]*) echo "device-check: $v must be whole seconds, not '${!v}'" >&2; exit 2 ;; esac
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
[ -d "$deps/usr/bin" ] && export PATH="$deps/usr/bin:$PATH"  # ninja, for the build in any process
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
  fusion_models=("resnet-mini 0")
  fusion_counts=(1 2)
  eager_fusion_args=(--models resnet18 --batch 2 --image-size 32 --iters 2 --warmup 1 --copies 1,2)
  kernel_sample_args=(--per-op 3 --max-gflop 0.05 --max-elements 1e6)
  fused_conv_args=(--quick --counts 1,2)
  conv_layout_args=(--quick)
else
  arrays=("resnet18 resnet18 32" "bert-base bert-base 16" "gpt2 gpt2 2" "vit-b16 vit-b16 16"
    "mobilenet-v2 mobilenet-v2 32" "dlrm dlrm 128")
  speed_models=(resnet18 bert-base gpt2 vit-b16 mobilenet-v2 dlrm)
  fused_models=(resnet18 bert-base)
  fused_counts=(2 4 8)
  iters=(--iters 10 --warmup 3)
  eager_args=(--models resnet18,bert-base,gpt2,vit-b16,mobilenet-v2)
  eager_fused_args=(--models resnet18,bert-base --copies 2,4,8)
  # Issue 36, item 5: k fused models against k one after another, at the matrix's batches (its traces
  # are the measured source's), mutwo's executor and PyTorch eager.
  fusion_models=("resnet18 32" "bert-base 16")
  fusion_counts=(1 2 4 8)
  eager_fusion_args=(--models resnet18,bert-base --batch resnet18=32,bert-base=16 --copies 1,2,4,8)
  kernel_sample_args=(--per-op 60)
  fused_conv_args=(--batch 32 --counts 1,2,4,8)
  conv_layout_args=(--batch 64 --precision fp16)
  if [ "$lease_mode" = 1 ]; then  # what fits one call beside the matrix
    speed_models=(resnet18 bert-base gpt2)
    iters=(--iters 6 --warmup 2)
    eager_args=(--models resnet18,bert-base,gpt2 --iters 6 --warmup 2)
    fused_models=()  # the fusion step's runs stand for them
    eager_fused_args=()
    eager_fusion_args+=(--iters 6 --warmup 2)
  fi
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
  # The toolkit of the nvcc on PATH (the one the device's torch was matched with), else /usr/local/cuda.
  local cuda_root=/usr/local/cuda nvcc_path cuda_args=()
  nvcc_path=$(command -v nvcc) && cuda_root=$(dirname "$(dirname "$(readlink -f "$nvcc_path")")")
  cuda_args=(-DCUDAToolkit_ROOT="$cuda_root" -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc")
  # PyTorch wheels' Caffe2 cuda.cmake looks for NVTX3 only under the consuming project's third_party/
  # and otherwise falls back to CUDA::nvToolsExt, which CUDA 12.9+ no longer has: the toolkit's own
  # nvtx3 headers, set in the cache, answer its find_path.
  [ -d "$cuda_root/include/nvtx3" ] && cuda_args+=(-Dnvtx3_dir="$cuda_root/include")
  # zlib: the machine's own libz.so.1 (zlib1g-dev's libz.so in .deps points at Debian's file name,
  # and its libz.a is not built for the shared executor module).
  local zlib=() z
  # CMAKE_POLICY_VERSION_MINIMUM: CMake 4 (pip's, on the device) refuses package configs that ask for
  # policies older than 3.5; older CMakes ignore it.
  for z in /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1; do
    [ -e "$z" ] && { zlib=(-DZLIB_LIBRARY="$z" -DZLIB_INCLUDE_DIR="$deps/usr/include"); break; }
  done
  echo "configure: CUDA toolkit $cuda_root, LibTorch $torch_prefix, C++ ABI $abi"
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$deps/usr;$deps/usr/lib/x86_64-linux-gnu/cmake;$deps/usr/share/cmake;$deps/usr/lib/cmake;$torch_prefix" \
    -DCMAKE_CXX_FLAGS="-D_GLIBCXX_USE_CXX11_ABI=$abi -DFMT_HEADER_ONLY=1" \
    -DSQLite3_INCLUDE_DIR="$deps/usr/include" \
    -DSQLite3_LIBRARY="$deps/usr/lib/x86_64-linux-gnu/libsqlite3.a" \
    "${cuda_args[@]}" "${zlib[@]}" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    -DMUTWO_WITH_TORCH=ON -DMUTWO_WITH_CUDA=$with_cuda -DMUTWO_WITH_CBC=OFF -DMUTWO_BUILD_BENCH=OFF
}

build_all() {
  cmake --build "$build" -j "$(nproc)"
}

exec_tests() {
  ctest --test-dir "$build" -R "exec|cli_(run|profile)" --output-on-failure -j 4
}

# A run or profile that hangs on the GPU (a stream waiting on an event never recorded, say) is ended
# after MUTWO_CHECK_RUN_TIMEOUT_S (default 150 s; 0: no limit) and fails its step, rather than
# holding the rest of a lease; the largest of them should take well under a minute on an H100.
run_timeout_s=${MUTWO_CHECK_RUN_TIMEOUT_S:-150}
mutwo() {
  case $1 in
    run | profile) timeout -k 5 "$run_timeout_s" "$build/cli/mutwo" "$@" ;;
    *) "$build/cli/mutwo" "$@" ;;
  esac
}

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
  if [ -s "$manifest" ] && cut -f1 "$manifest" | grep -qxF "$label"; then  # a resumed lease
    echo "$label: stored by an earlier call"
    return 0
  fi
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
  # A trace is written whole at the end (a resumed lease keeps one an earlier call finished).
  [ -s "$t4" ] || mutwo profile "${a[@]}" --models 4 --device "$device" -o "$t4" --db "$db" "${iters[@]}" || return 1
  [ -s "$t2" ] || mutwo profile "${a[@]}" --models 2 --device "$device" -o "$t2" --db "$db" "${iters[@]}" || return 1
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
    # The same plan under PyTorch's expandable segments, the fix its out-of-memory message names for
    # fragmentation, which failed the leases' packed plans (docs/VALIDATION-H100.md): does the plan
    # then fit its cap, and does the cap still bind? (group "allocator": the report's allocator section)
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True logged_run "$name-multiplexed-mutwo-expandable" allocator \
      "$t2" "${a[@]}" --models 4 --partition 2,2 --policy mutwo --memory-cap "$cap22" "${m2[@]}" --allow-oom \
      "${iters[@]}" || failed=1
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

# Item 2, mutwo's side: one model per family at its default batch (fp32, amp-bf16, a CUDA graph,
# fused Adam),
# then fused arrays; predictions by the default source, waves (the measured traces are the
# matrix's, at other batches).
speed_runs() {
  local failed=0 m k
  for m in "${speed_models[@]}"; do
    logged_run "speed-$m-x1-fp32" speed - --model "$m" "${iters[@]}" || failed=1
    if [ "$device" = cuda ]; then
      logged_run "speed-$m-x1-amp-bf16" speed - --model "$m" --precision amp-bf16 "${iters[@]}" || failed=1
      logged_run "speed-$m-x1-fp32-cuda-graph" speed - --model "$m" --cuda-graph "${iters[@]}" || failed=1
      # torch.optim's fused=True through ATen's _fused_adam_ (1 kernel, 7 passes a weight), unmeasured so far.
      logged_run "speed-$m-x1-fp32-adam-fused" speed - --model "$m" --optimizer adam-fused "${iters[@]}" || failed=1
    fi
  done
  for m in "${fused_models[@]}"; do
    for k in "${fused_counts[@]}"; do
      logged_run "speed-$m-x$k-fp32" speed - --model "$m" --models "$k" "${iters[@]}" || failed=1
    done
  done
  return $failed
}

# Issue 36, item 5, mutwo's side: 1, 2, 4, 8 fused models at the matrix's batches (default source).
# Then each array profiled (traces/<model>-x<k>.json, the names the matrix's profiles of the same
# model and batch have, so it does not profile them again): the measured source's prices of every k,
# hence its predicted gain.
fusion_runs() {
  local failed=0 entry m b k t
  for entry in "${fusion_models[@]}"; do
    read -r m b <<<"$entry"
    for k in "${fusion_counts[@]}"; do
      logged_run "fusion-$m-x$k-fp32" fusion "$work/traces/$m-x$k.json" --model "$m" $(batch_args "$b") \
        --models "$k" "${iters[@]}" || failed=1
    done
  done
  for entry in "${fusion_models[@]}"; do
    read -r m b <<<"$entry"
    for k in "${fusion_counts[@]}"; do
      t=$work/traces/$m-x$k.json
      [ -s "$t" ] || mutwo profile --model "$m" $(batch_args "$b") --models "$k" --device "$device" -o "$t" \
        --db "$db" "${iters[@]}" || failed=1
    done
  done
  return $failed
}

# Issue 36, item 5, PyTorch's side: the same models, k trained one after another per step. It needs no
# build (the parameter check against the zoo runs where the build is there), so a lease measures it
# before building.
eager_fusion() {
  local check=()
  [ -x "$build/cli/mutwo" ] && check=(--mutwo "$build/cli/mutwo")
  "$python" scripts/eager-baseline.py "${eager_fusion_args[@]}" --precision fp32 --device "$device" "${check[@]}" \
    -o "$work/eager-fusion.csv"
}

# Issue 36, item 5: NeuSight's linear, bmm, layer-norm and softmax shapes timed with NeuSight's harness
# (scripts/kernel-sample.py), validation data for the cross-GPU kernel model. Needs no build.
# Then HFTA's fused convolution at k = 1 ... 8, cuDNN's autotuner off and on (scripts/fused-conv-sample.py):
# whether a fused convolution takes its k models' kernels one after another, as the cost sources price it.
kernel_sample() {
  "$python" scripts/kernel-sample.py "${kernel_sample_args[@]}" --device "$device" -o "$work/kernels" \
    --fusion-output "$work/bmm-fusion" || return 1
  "$python" scripts/fused-conv-sample.py "${fused_conv_args[@]}" --device "$device" -o "$work/fused-conv.csv"
}

# Issue 32: ResNet-50's convolutions in fp16, NCHW and channels-last, cuDNN's autotuner off and on
# (scripts/conv-layout-sample.py): the published mixed-precision runs trained channels-last with the
# autotuner, which no kernel the wave model was fitted on did. Needs no build.
conv_layout() {
  "$python" scripts/conv-layout-sample.py "${conv_layout_args[@]}" --device "$device" -o "$work/conv-layout"
}

# Item 2, PyTorch's side: the same models trained by PyTorch eager with the device's torch.
eager_baseline() {
  local precisions=fp32
  [ "$device" = cuda ] && precisions=fp32,amp-bf16
  "$python" scripts/eager-baseline.py "${eager_args[@]}" --copies 1 --precision "$precisions" --device "$device" \
    --mutwo "$build/cli/mutwo" -o "$work/eager-x1.csv" || return 1
  [ ${#eager_fused_args[@]} -eq 0 ] && return 0
  "$python" scripts/eager-baseline.py "${eager_fused_args[@]}" --precision fp32 --device "$device" \
    --mutwo "$build/cli/mutwo" -o "$work/eager-fused.csv"
}

# `mutwo bench-host`: the full size grid on a GPU, three sizes on the CPU (a dry run).
bench_host() {
  if [ "$device" = cuda ]; then
    mutwo bench-host --device "$device" -o "$work/host-link.json"
  else
    mutwo bench-host --device "$device" --sizes 4096,1048576,4194304 --iters 3 -o "$work/host-link.json"
  fi
}

# `mutwo bench-ops` on the default grid (every kernel, every precision the GPU runs) -> ops.csv, and
# a profile fitted from it (the rows are all one catalog device: no --device needed).
bench_ops() {
  # The host link (pinned copies each way and both at once) and the launch figures (item 3).
  bench_host || return 1
  if [ "$device" != cuda ]; then  # the full grid would take hours on a CPU, and cpu rows are not fitted
    mutwo bench-ops --device "$device" --quick -o "$work/ops.csv"
    return
  fi
  mutwo bench-ops --device "$device" -o "$work/ops.csv" || return 1
  mutwo calibrate "$work/ops.csv" -o "$work/ops-profile.json"
}

compare() {
  if [ ! -e "$db" ]; then
    echo "compare: nothing measured yet (no $db)"
    return 0
  fi
  mutwo compare --db "$db" && mutwo compare --db "$db" --json >"$work/compare.json"
}

# The lease stage: its steps and budget (scripts/device-check-lease.sh).
source "$PWD/scripts/device-check-lease.sh"

# Packs the work folder into $OUT for the device tool to bring back (at most 8 files of 16 MiB).
# A step the budget cut short may leave a process finishing its last write (`mutwo` stops at SIGTERM
# after the write in progress), which GNU tar reports as "file changed as we read it" (exit 1): pack
# again after it settles, and at the third try keep the archive, the cut step being recorded as such.
pack_work() {
  rm -f "$pack"/device-check.tar.gz*
  local try rc
  for try in 1 2 3; do
    rc=0
    tar czf "$pack/device-check.tar.gz" -C "$work" . || rc=$?
    [ $rc -ne 1 ] && break
    echo "pack: a file changed while packing (try $try of 3)"
    sleep 2
  done
  [ $rc -le 1 ] || return 1
  local bytes
  bytes=$(stat -c %s "$pack/device-check.tar.gz")
  if [ "$bytes" -gt $((15 * 1024 * 1024)) ]; then
    split -b 15M -d "$pack/device-check.tar.gz" "$pack/device-check.tar.gz.part" && rm "$pack/device-check.tar.gz"
  fi
  ls -l "$pack"
}

if [ $internal_call -eq 1 ]; then
  "${stages[@]}"
  exit
fi
lease_skipped=()
step environment environment
for s in "${stages[@]}"; do
  case $s in
    build) step configure configure && step build build_all ;;
    test) step exec-tests exec_tests ;;
    matrix | matrix=*) matrix ;;
    speed) step fusion fusion_runs; step eager-fusion eager_fusion; step kernel-sample kernel_sample; step conv-layout conv_layout
      step speed speed_runs; step eager eager_baseline ;;
    bench) step bench-ops bench_ops ;;
    compare) step compare compare && cat "$work/logs/compare.log" ;;
    lease) lease ;;
  esac
done
pack_work >"$work/logs/pack.log" 2>&1 || failures+=(pack)
if [ ${#failures[@]} -gt 0 ]; then
  echo "device-check: FAILED: ${failures[*]} (logs in $work/logs, packed in $pack)"
  exit 1
fi
if [ ${#lease_skipped[@]} -gt 0 ]; then
  echo "device-check: lease incomplete, skipped or ended for time: ${lease_skipped[*]} (call again to resume; lease.tsv says what ran)"
  exit 0
fi
echo "device-check: ${stages[*]} passed; results.db, runs.tsv, traces, schedules and logs in $work, packed in $pack"

#!/usr/bin/env bash
# The GPU check, one command for a lent GPU machine (the `device` tool runs it in the repository
# root; it writes everything under $OUT when set, else build-device/out):
#   1. configures mutwo against that machine's PyTorch LibTorch (CUDA) and the Debian headers and
#      static SQLite carried in .deps/root (scripts/fetch-device-deps.sh makes it; carry ".deps");
#   2. builds it (no checkmate: its COIN-OR CBC solver is not carried);
#   3. runs the executor's tests, the CUDA suite among them (test_exec_cuda);
#   4. profiles and runs two small model arrays (4 x resnet18 at batch 32, 4 x bert-base at
#      batch 16): plain, sub-arrays predicted from their measured traces, and swap/recompute plans
#      under a memory cap (an allocator fraction emulating a smaller GPU), one run as a CUDA graph;
#   4b. trains the same models with plain PyTorch eager (scripts/eager-baseline.py: 1 and 4 models
#      one after another, fp32 and amp-bf16; parameter counts checked against the zoo) -> eager-*.csv,
#      the baseline the executor's steps and HFTA's fusion gain are compared with;
#   5. times the kernels of `mutwo bench-ops` on its default grid (ops.csv) and fits a calibration
#      profile from them (ops-profile.json);
#   6. prints `mutwo compare` of everything it ran and leaves results.db, the traces and the logs
#      in $OUT.
# Usage: bash scripts/device-check.sh [all|build|test|runs]   (default all; each stage needs the
# ones before it in the same build-device/ folder). Reads the card; never changes its settings.
# Dry run without a GPU (checks the configure/build path against another LibTorch and the carried
# headers): MUTWO_CHECK_DEVICE=cpu MUTWO_TORCH_PREFIX=<dir with TorchConfig.cmake>
# MUTWO_TORCH_ABI=1 bash scripts/device-check.sh build
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stage=${1:-all}
out=${OUT:-build-device/out}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
build=build-device
device=${MUTWO_CHECK_DEVICE:-cuda}
deps=$PWD/.deps/root
failures=()

# Runs a named step with its output in logs/<name>.log; a failure is recorded, not fatal.
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== $name"
  if "$@" >"$out/logs/$name.log" 2>&1; then
    echo "   ok ($((SECONDS - start)) s)"
  else
    local rc=$?
    echo "   FAILED (exit $rc, $((SECONDS - start)) s): tail of logs/$name.log:"
    tail -n 25 "$out/logs/$name.log" | sed 's/^/   | /'
    failures+=("$name")
  fi
}

environment() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
  python3 -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda,
"cudnn", torch.backends.cudnn.version(), "cxx11 abi", torch._C._GLIBCXX_USE_CXX11_ABI,
"devices", torch.cuda.device_count(), file=sys.stdout)'
  command -v nvcc && nvcc --version | tail -n 2
  cmake --version | head -n 1
  c++ --version | head -n 1
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

array_runs() {
  local name=$1
  shift
  local array=("$@")
  local db=$out/results.db
  mutwo profile "${array[@]}" --models 2 --device "$device" -o "$out/$name-x2.trace.json" --db "$db" || return 1
  mutwo profile "${array[@]}" --models 4 --device "$device" -o "$out/$name-x4.trace.json" --db "$db" || return 1
  mutwo run "${array[@]}" --models 4 --device "$device" --db "$db" || return 1
  mutwo run "${array[@]}" --models 4 --device "$device" --db "$db" --cost-source measured --trace "$out/$name-x4.trace.json" || return 1
  mutwo run "${array[@]}" --models 4 --partition 2,2 --device "$device" --db "$db" --cost-source measured \
    --trace "$out/$name-x2.trace.json" || return 1
  local cap
  cap=$(cap_for "${array[@]}" --models 4 --partition 2,2 --gpu h100-sxm-80gb) || return 1
  echo "memory cap for $name x4 [2,2]: $cap"
  local failed=0
  for policy in capuchin mutwo dtr; do
    mutwo run "${array[@]}" --models 4 --partition 2,2 --policy "$policy" --memory-cap "$cap" --device "$device" \
      --db "$db" --cost-source measured --trace "$out/$name-x2.trace.json" || failed=1
  done
  [ "$device" = cuda ] && { mutwo run "${array[@]}" --models 4 --device "$device" --db "$db" --cuda-graph || failed=1; }
  return $failed
}

# The same arrays trained by PyTorch eager itself (issue 22, item 2), with the device's torch.
eager_baseline() {
  python3 scripts/eager-baseline.py --models resnet18 --batch 32 --copies 1,4 --precision fp32,amp-bf16 \
    --device "$device" --mutwo "$build/cli/mutwo" -o "$out/eager-resnet18.csv" || return 1
  python3 scripts/eager-baseline.py --models bert-base --batch 16 --copies 1,4 --precision fp32,amp-bf16 \
    --device "$device" --mutwo "$build/cli/mutwo" -o "$out/eager-bert-base.csv"
}

# `mutwo bench-ops` on the default grid (every kernel, every precision the GPU runs) -> ops.csv, and
# a profile fitted from it (the rows are all one catalog device: no --device needed).
bench_ops() {
  if [ "$device" != cuda ]; then  # the full grid would take hours on a CPU, and cpu rows are not fitted
    mutwo bench-ops --device "$device" --quick -o "$out/ops.csv"
    return
  fi
  mutwo bench-ops --device "$device" -o "$out/ops.csv" || return 1
  mutwo calibrate "$out/ops.csv" -o "$out/ops-profile.json"
}

compare() {
  mutwo compare --db "$out/results.db" && mutwo compare --db "$out/results.db" --json >"$out/compare.json"
}

step environment environment
if [[ $stage == all || $stage == build ]]; then
  step configure configure
  step build build_all
fi
if [[ $stage == all || $stage == test ]]; then
  step exec-tests exec_tests
fi
if [[ $stage == all || $stage == runs ]]; then
  rm -f "$out/results.db" "$out/results.db-wal" "$out/results.db-shm"
  step resnet18 array_runs resnet18 --model resnet18 --batch 32
  step bert-base array_runs bert-base --model bert-base --batch 16
  step eager eager_baseline
  step bench-ops bench_ops
  step compare compare
  cat "$out/logs/compare.log" 2>/dev/null
fi
if [ ${#failures[@]} -gt 0 ]; then
  echo "device-check: FAILED: ${failures[*]} (logs in $out/logs)"
  exit 1
fi
echo "device-check: all steps passed; results.db, traces and logs in $out"

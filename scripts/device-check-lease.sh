# The lease of scripts/device-check.sh (its stage `lease`, described in its header): the steps that
# fit one device call inside MUTWO_CHECK_BUDGET_S, each killed at the budget and skipped below its
# floor, resumed by a second call. Sourced by device-check.sh after its settings and steps are set;
# not run on its own.
# The lease's build: `mutwo` alone (the CPU executor's suites run in CI); the CUDA suite is built by
# its own step, after the measurements.
build_lease() {
  cmake --build "$build" -j "$(nproc)" --target mutwo
}

cuda_tests() {
  cmake --build "$build" -j "$(nproc)" --target test_exec_cuda || return 1
  ctest --test-dir "$build" -R '^test_exec_cuda$' --output-on-failure
}

# bench-ops a kernel group at a time (GEMM first: the calibrated source's largest share), each group's
# CSV kept whole when a later one runs out of time; ops.csv joins them and a profile is fitted.
bench_ops_lease() {
  local group kernels csvs=() more=(--warmup 2 --iters 6)
  [ "$device" = cuda ] || more=(--quick)
  for group in gemm:gemm conv:conv other:relu,gelu,add,softmax,layernorm,batchnorm2d; do
    kernels=${group#*:}
    group=${group%%:*}
    [ -s "$work/ops-$group.csv" ] ||
      mutwo bench-ops --device "$device" --kernels "$kernels" "${more[@]}" -o "$work/ops-$group.csv" || return 1
    csvs+=("$work/ops-$group.csv")
  done
  awk 'FNR == 1 && NR != 1 { next } { print }' "${csvs[@]}" >"$work/ops.csv.tmp" && mv "$work/ops.csv.tmp" "$work/ops.csv"
  [ "$device" = cuda ] || return 0  # cpu rows calibrate nothing (mutwo calibrate refuses them)
  mutwo calibrate "$work/ops.csv" -o "$work/ops-profile.json"
}

# One lease step: NAME, FLOOR (the seconds it needs at least), then the function and its arguments,
# run by a process of this script's own under `timeout` at what is left of the budget (less the
# pack's reserve). Each outcome is a line of lease.tsv: the call (1 for the first lease call on this
# work folder), name, outcome, seconds taken, seconds left before it. Returns 1 when the step failed
# or timed out, 2 when skipped. A step ended or skipped for time makes the lease incomplete (exit 0,
# the next call resumes it); one that failed fails the check.
lease_reserve_s=20
budgeted() {
  local name=$1 floor=$2
  shift 2
  local left=$((lease_deadline - SECONDS - lease_reserve_s)) start=$SECONDS rc outcome
  [ "$scale" = mini ] && floor=$((floor / 10 + 1))  # the dry run's test-scale models take seconds
  floor=${MUTWO_CHECK_FLOOR_S:-$floor}               # a test's: every step's floor
  if [ -e "$work/lease-done/$name" ]; then
    printf '%s\t%s\tdone before\t0\t%s\n' "$lease_call" "$name" "$left" >>"$work/lease.tsv"
    echo "== $name: done by an earlier call"
    return 0
  fi
  if [ "$left" -lt "$floor" ]; then
    printf '%s\t%s\tskipped\t0\t%s\n' "$lease_call" "$name" "$left" >>"$work/lease.tsv"
    echo "== $name: skipped ($left s left of the budget, it needs $floor s)"
    lease_skipped+=("$name")
    return 2
  fi
  echo "== $name (at most $left s)"
  timeout -k 10 "$left" bash "$script" _call "$@" >"$work/logs/$name.log" 2>&1
  rc=$?
  case $rc in
    0) outcome=ok ;;
    124 | 137) outcome="timed out" ;;
    *) outcome="failed ($rc)" ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$lease_call" "$name" "$outcome" "$((SECONDS - start))" "$left" >>"$work/lease.tsv"
  if [ $rc -eq 0 ]; then
    mkdir -p "$work/lease-done" && touch "$work/lease-done/$name"
    echo "   ok ($((SECONDS - start)) s)"
    return 0
  fi
  echo "   $outcome after $((SECONDS - start)) s: tail of logs/$name.log:"
  tail -n 25 "$work/logs/$name.log" | sed 's/^/   | /'
  if [ "$outcome" = "timed out" ]; then
    lease_skipped+=("$name")  # cut by the budget: the next call resumes it
  else
    failures+=("$name")
  fi
  return 1
}

# The whole check in one call, the issue's targets first (issue 36, item 5: the fusion question and
# the kernel sample before anything else); see the usage at the top.
lease() {
  lease_deadline=$((SECONDS + budget_s))
  lease_call=$(($(cat "$work/lease-calls" 2>/dev/null || echo 0) + 1))
  echo "$lease_call" >"$work/lease-calls"
  lease_skipped=()
  local entry name model batch
  # PyTorch's side needs no build: measured first, so a build that fails still leaves them.
  budgeted kernel-sample 30 kernel_sample
  budgeted conv-layout 30 conv_layout
  budgeted eager-fusion 30 eager_fusion
  if [ "$device" = cpu ] && [ -x "$build/cli/mutwo" ]; then
    echo "== configure, build: the cpu dry run uses the existing build $build"
  else
    budgeted configure 10 configure || return 1
    budgeted build 60 build_lease || return 1
  fi
  budgeted fusion 60 fusion_runs
  budgeted bench-host 20 bench_host
  for entry in "${arrays[@]:0:3}"; do
    read -r name model batch <<<"$entry"
    budgeted "matrix-$name" 60 matrix_arch "$name" "$model" "$batch"
  done
  # The CUDA suite checks the executor's GPU path; the measurements above are the issue's targets.
  [ "$device" = cuda ] && budgeted test-cuda 30 cuda_tests
  budgeted speed 60 speed_runs
  budgeted eager 45 eager_baseline
  for entry in "${arrays[@]:3}"; do
    read -r name model batch <<<"$entry"
    budgeted "matrix-$name" 60 matrix_arch "$name" "$model" "$batch"
  done
  budgeted bench-ops 45 bench_ops_lease
  # compare reads the database only: run whatever is left, it takes seconds, and again on every call.
  lease_reserve_s=0
  rm -f "$work/lease-done/compare"
  budgeted compare 1 compare && cat "$work/logs/compare.log"
  return 0
}

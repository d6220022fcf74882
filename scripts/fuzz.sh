#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# (build-fuzz/, configured as scripts/sanitize.sh does, tests included; only the targets are built here), seeds each corpus from tests/fixtures (and
# ../shared when present), and runs every target for RUNS executions (default 2000: the smoke run
# .ci/run does; pass 1000000 for the full run). A crash, leak, sanitizer report or an input slower
# than 1 s stops it non-zero; libFuzzer writes the input as crash-*/leak-*/timeout-* in build-fuzz/.
# Naming targets after RUNS runs only those. FUZZ_MAX_LEN caps an input's bytes (default 262144;
# a corpus of large traces runs 10-20x faster at 16384: tests/fixtures/fuzz/README.md says which
# run used which).
#   bash scripts/fuzz.sh [RUNS [TARGET...]]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-2000}
build=build-fuzz
targets=(fuzz_trace_json fuzz_schedule_json fuzz_kineto fuzz_execution_trace fuzz_dtr_log fuzz_spec_toml fuzz_results_db
         fuzz_calibration_input fuzz_device_toml fuzz_wave_model fuzz_published_csv)
if [ "$#" -gt 1 ]; then targets=("${@:2}"); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DMUTWO_FUZZ=ON \
  -DMUTWO_SANITIZE=address,undefined -DMUTWO_WITH_TORCH=OFF -DMUTWO_BUILD_TESTS=ON -DMUTWO_BUILD_BENCH=OFF \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld >/dev/null
cmake --build "$build" --target "${targets[@]}"

# Seeds: the fixtures each reader takes, decompressed (the targets read text), at most 256 KiB each.
seed() {  # seed <target> <files...>
  local dir="$build/corpus/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    local name; name=$(basename "$f" .gz)
    # (gzip stops on a SIGPIPE once head has its 256 KiB: not a failure)
    if [[ $f == *.gz ]]; then (gzip -dc "$f" 2>/dev/null || true) | head -c 262144 > "$dir/$name"
    else head -c 262144 "$f" > "$dir/$name"; fi
  done
}
shared=../shared
seed fuzz_trace_json tests/fixtures/traces/*.json tests/fixtures/malformed/*.json tests/fixtures/exported/*.json tests/fixtures/fuzz/trace_json-*
seed fuzz_schedule_json tests/fixtures/*/*schedule*.json tests/fixtures/fuzz/schedule_json-*
seed fuzz_kineto tests/fixtures/kineto/*.json* "$shared"/kineto/*.json
# ... and two gzip streams as they are (the target gunzips what starts with the magic).
for f in tests/fixtures/kineto/cpu_cnn_adam_legacy.json.gz tests/fixtures/kineto/mi250_minitoy_train.json.gz; do
  cp "$f" "$build/corpus/fuzz_kineto/$(basename "$f")"
done
seed fuzz_execution_trace tests/fixtures/execution_trace/{mlp,cnn,simple_add}_et.json.gz "$shared"/execution_trace/*.json
seed fuzz_dtr_log tests/fixtures/dtr/*.log* tests/fixtures/fuzz/dtr_log-*
seed fuzz_spec_toml experiments/*.toml tests/fixtures/experiments/*.toml
seed fuzz_results_db tests/fixtures/compare/not-a-database.txt
seed fuzz_calibration_input tests/fixtures/calibration/*.csv tests/fixtures/calibration/neusight/ln/*.csv.gz
seed fuzz_device_toml costmodel/devices/*.toml
seed fuzz_wave_model costmodel/models/*.json
seed fuzz_published_csv docs/published_throughput.csv docs/wikipedia_seq512_lengths.csv tests/fixtures/published/*.csv
# A real database to mutate: a tiny sweep, by a mutwo already built (CI's build-ci, or build/).
for m in build-ci/cli/mutwo build/cli/mutwo; do
  if [ -x "$m" ]; then
    rm -f "$build/seed.db"
    "$m" experiment tests/fixtures/experiments/tiny_strategies.toml --db "$build/seed.db" --out "$build" >/dev/null 2>&1 &&
      cp "$build/seed.db" "$build/corpus/fuzz_results_db/tiny_strategies.db" || true
    break
  fi
done
# The targets run side by side, one per core (each is one process): a target's report is printed,
# in the list's order, once it has finished.
fuzz_one() {  # fuzz_one <target>: its exit status in $build/<target>.rc
  local rc=0
  (cd "$build" && ASAN_OPTIONS=detect_leaks=1 ./fuzz/"$1" -runs="$runs" -timeout=1 -rss_limit_mb=4096 \
     -max_len="${FUZZ_MAX_LEN:-262144}" -print_final_stats=1 "corpus/$1" > "$1.log" 2>&1) || rc=$?
  echo "$rc" > "$build/$1.rc"
}
jobs_max=$(nproc)
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t"
  rm -f "$build/$t.rc"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
failed=()
for t in "${targets[@]}"; do
  echo "== $t: $(ls "$build/corpus/$t" | wc -l) seeds, $runs runs"
  grep -E "^stat::number_of_executed_units|ERROR|SUMMARY|Test unit written" "$build/$t.log" || true
  rc=$(cat "$build/$t.rc" 2>/dev/null || echo "none")
  [ "$rc" = 0 ] || failed+=("$t (exit $rc, $build/$t.log)")
done
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz: failed: %s\n' "${failed[@]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, $runs runs each, no failure"

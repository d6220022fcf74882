#!/usr/bin/env bash
# An output flag naming a file the command reads is refused before anything is written (ctest
# outputs_over_inputs): an exported model file (--model) under simulate, search, trace, run and profile,
# and a device file (--gpu) under run and profile, each of which used to replace its input and exit 0.
# Usage: tests/outputs_over_inputs.sh MUTWO SCRATCH_DIR   (run from the source root)
set -euo pipefail
mutwo=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
cp tests/fixtures/exported/mlp.json costmodel/devices/l4.toml "$scratch/"
cd "$scratch"
check() {  # want_flag want_input command...
  local flag=$1 input=$2
  shift 2
  local out
  if out=$("$mutwo" "$@" 2>&1); then echo "outputs_over_inputs: accepted: $*"; exit 1; fi
  grep -q "^error: $flag '[^']*' is the $input file read" <<<"$out" || { echo "outputs_over_inputs: $*: $out"; exit 1; }
}
check --save-schedule --model simulate -m mlp.json --save-schedule mlp.json
check --timeline --model simulate -m mlp.json --timeline ./mlp.json
check --output --model search -m mlp.json:2 --memory 1GiB -o mlp.json
check --output --model trace -m mlp.json -o ./mlp.json
check --save-schedule --model run -m mlp.json --save-schedule mlp.json --iters 1 --warmup 0 --db r.db
check --output --model profile -m mlp.json -o mlp.json --iters 1 --warmup 0
check --save-schedule --gpu run -m resnet-mini --gpu l4.toml --save-schedule ./l4.toml --db r.db
check --output --gpu profile -m resnet-mini --gpu l4.toml -o l4.toml --db r.db
cd - >/dev/null
cmp "$scratch/mlp.json" tests/fixtures/exported/mlp.json
cmp "$scratch/l4.toml" costmodel/devices/l4.toml
[ ! -e "$scratch/r.db" ] || { echo "outputs_over_inputs: a refused run made r.db"; exit 1; }
echo "outputs_over_inputs: ok"

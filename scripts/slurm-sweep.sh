#!/usr/bin/env bash
# One experiment spec swept as a Slurm job array: array task i runs shard i of N (0-based, every
# N-th configuration) into its own database, shards/<spec>-<i>.db, and writes that shard's CSV into
# shards/<spec>-<i>/ (not results/: concurrent tasks would overwrite one another's CSV), so the
# tasks never share a file.
#
# Submit from the repository root (the job runs in the submission directory; logs/ must exist
# before the job starts, Slurm does not create it):
#
#   mkdir -p logs
#   sbatch --array=0-3 scripts/slurm-sweep.sh mutwo_throughput 4     # 4 shards: --shard 0/4 ... 3/4
#   sbatch --array=0-3 scripts/slurm-sweep.sh experiments/my_spec.toml    # N from the array (4)
#
# SPEC is a shipped spec's name or a *.toml path (relative to the submission directory). N is the
# number of shards: the second argument, else the array's size (SLURM_ARRAY_TASK_COUNT), which
# then has to be 0-(N-1). To re-run some shards, give N: `sbatch --array=2 ... SPEC 4`.
#
# Then merge the shards, write the CSV and draw the figures once every task has succeeded
# (afterok on an array job waits for all of its tasks). The second `mutwo experiment`, on the
# merged database, finds every configuration stored, runs nothing and only writes the CSV:
#
#   jid=$(sbatch --parsable --array=0-3 scripts/slurm-sweep.sh mutwo_throughput 4)
#   sbatch --dependency=afterok:${jid%%;*} --job-name=mutwo-merge --output=logs/%j-merge.out \
#     --wrap 'build/cli/mutwo db merge results.db shards/*.db &&
#             build/cli/mutwo experiment mutwo_throughput --db results.db --out results &&
#             python3 scripts/plot.py results.db --out results'
#
# (shards/*.db merges every spec's shards; `mutwo db merge` skips runs results.db already holds,
# so merging again, or after more shards finished, adds only what is new. plot.py needs
# matplotlib, e.g. Debian's python3-matplotlib.)
#
# Resuming: a configuration already in a shard's database (same config hash and mutwo version) is
# skipped, so submitting the same array again finishes what a timed-out or failed task left.
# Slurm sends SIGTERM 5 minutes before the time limit (--signal below); mutwo then starts no new
# configuration and writes the running ones whole.
#
# Environment: MUTWO, the mutwo binary (default build/cli/mutwo, or a command on PATH).
# Without Slurm (a local check of one shard): SLURM_ARRAY_TASK_ID=0 bash scripts/slurm-sweep.sh SPEC 4
#
#SBATCH --job-name=mutwo-sweep
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=16
#SBATCH --mem=32G
#SBATCH --time=12:00:00
#SBATCH --output=logs/%A_%a.out
#SBATCH --signal=B:TERM@300
set -euo pipefail

die() {
  echo "slurm-sweep.sh: error: $*" >&2
  exit 1
}

[[ $# -ge 1 && $# -le 2 ]] || die "usage: sbatch --array=0-(N-1) scripts/slurm-sweep.sh SPEC [N]"
spec=$1
cd "${SLURM_SUBMIT_DIR:-.}"

index=${SLURM_ARRAY_TASK_ID:-}
[[ -n $index ]] || die "SLURM_ARRAY_TASK_ID is not set: submit with sbatch --array=0-(N-1)"
if [[ $# -eq 2 ]]; then
  count=$2
else
  count=${SLURM_ARRAY_TASK_COUNT:-}
  [[ -n $count ]] || die "N not given and SLURM_ARRAY_TASK_COUNT is not set"
  if [[ ${SLURM_ARRAY_TASK_MIN:-0} != 0 || ${SLURM_ARRAY_TASK_MAX:-$((count - 1))} != $((count - 1)) ]]; then
    die "the array is not 0-$((count - 1)) (${SLURM_ARRAY_TASK_MIN:-?}-${SLURM_ARRAY_TASK_MAX:-?}); pass N explicitly"
  fi
fi
[[ $index =~ ^[0-9]+$ && $count =~ ^[0-9]+$ ]] || die "shard '$index/$count' is not two whole numbers"
((count >= 1)) || die "N must be at least 1"
((index < count)) || die "array task $index is not a shard of $count (use --array=0-$((count - 1)))"

mutwo=${MUTWO:-build/cli/mutwo}
command -v "$mutwo" >/dev/null || die "mutwo binary '$mutwo' not found (set MUTWO, or build it: cmake --build build)"
if [[ $spec == *.toml ]]; then
  [[ -f $spec ]] || die "spec file '$spec' not found (relative to $PWD)"
fi

name=$(basename "$spec" .toml)
db=shards/$name-$index.db
jobs=${SLURM_CPUS_PER_TASK:-0} # 0: one per CPU core (outside Slurm)
mkdir -p shards
echo "$(date -Is) $(hostname): $spec shard $index/$count -> $db, $jobs jobs, job ${SLURM_JOB_ID:-none}" >&2
# exec: mutwo itself receives Slurm's SIGTERM and stops cleanly.
exec "$mutwo" experiment "$spec" --db "$db" --shard "$index/$count" --jobs "$jobs" --out "shards/$name-$index"

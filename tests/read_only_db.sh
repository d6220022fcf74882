#!/usr/bin/env bash
# Readers of a results database (compare, db merge's inputs, scripts/plot.py) by a user who may not
# write to it (ctest read_only_db). SQLite's read-only connection to a WAL file makes -wal and -shm
# beside it and leaves them, and fails in a folder the user cannot write to ("attempt to write a
# readonly database"); experiments/sqlite.hpp, read_only, says how mutwo reads instead. Cases: the file
# in a folder the reader may write to (read, nothing left beside it); in one it may not (read, and
# merged into a database of its own); there with a -wal a writer left and no -shm (refused, naming why).
# Root may write anything, so as root the reader is nobody; skipped (77) where that user cannot run mutwo.
# Usage: tests/read_only_db.sh MUTWO SCRATCH_DIR   (run from the source root)
set -euo pipefail
mutwo=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch/open" "$scratch/sealed" "$scratch/left" "$scratch/out"
"$mutwo" experiment tests/fixtures/experiments/tiny_policies.toml --db "$scratch/w.db" --out "$scratch/csv" \
  >/dev/null
for d in open sealed left; do cp "$scratch/w.db" "$scratch/$d/w.db"; done
: >"$scratch/left/w.db-wal"  # an empty WAL: what a writer killed before its first commit leaves
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "read_only_db: no setpriv to read as another user"; exit 77; }
  reader=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 777 "$scratch/open" "$scratch/out"
  chmod 755 "$scratch/sealed" "$scratch/left"
else
  reader=()
  chmod a-w "$scratch/open/w.db" "$scratch/sealed" "$scratch/left"
fi
"${reader[@]}" test -x "$mutwo" || { echo "read_only_db: the reader cannot run $mutwo"; exit 77; }
fail() { echo "read_only_db: $*"; exit 1; }

for d in open sealed; do
  out=$("${reader[@]}" "$mutwo" compare --db "$scratch/$d/w.db" --json 2>&1) || fail "compare in $d: $out"
  grep -q '"runs": 9' <<<"$out" || fail "compare in $d read no 9 runs: $out"
  for f in "$scratch/$d/w.db-wal" "$scratch/$d/w.db-shm"; do [ ! -e "$f" ] || fail "compare left $f"; done
done
out=$("${reader[@]}" "$mutwo" db merge "$scratch/out/m.db" "$scratch/sealed/w.db" 2>&1) || fail "merge: $out"
grep -q "m.db now holds 9 runs" <<<"$out" || fail "merge: $out"

if out=$("${reader[@]}" "$mutwo" compare --db "$scratch/left/w.db" 2>&1); then fail "left -wal read: $out"; fi
grep -q "a writer left '$scratch/left/w.db-wal' beside it.*its -shm file in '$scratch/left'" <<<"$out" ||
  fail "left -wal: $out"
[ ! -e "$scratch/left/w.db-shm" ] || fail "a refused read made $scratch/left/w.db-shm"

if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && "${reader[@]}" test -r scripts/plot.py; then
  for d in open sealed; do
    out=$("${reader[@]}" env MPLCONFIGDIR="$scratch/out" /usr/bin/python3 scripts/plot.py "$scratch/$d/w.db" \
      --experiment tiny_policies --out "$scratch/out/$d" 2>&1) || fail "plot.py in $d: $out"
    for f in "$scratch/$d/w.db-wal" "$scratch/$d/w.db-shm"; do [ ! -e "$f" ] || fail "plot.py left $f"; done
  done
  if out=$("${reader[@]}" /usr/bin/python3 scripts/plot.py "$scratch/left/w.db" --out "$scratch/out/left" 2>&1); then
    fail "plot.py read a file beside a -wal it cannot share: $out"
  fi
  grep -q "a writer left" <<<"$out" || fail "plot.py, left -wal: $out"
fi
echo "read_only_db: ok"

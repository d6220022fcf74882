"""Reads the held-out CSV that `mutwo calibrate --waves --leave-one-out ... --held-out-csv FILE` writes
(costmodel/wave_held_out_csv.hpp), for the scripts that table it (held-out-by-duration.py,
conv-algorithms.py): its rows with their line numbers, a file without a needed column refused by name."""
import csv
import sys


def held_out_rows(path, required, tool):
    """Yields (line, row) for every data row of `path`; exits naming `tool` and the missing columns."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = set(required) - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"{tool}: {path}: no column {', '.join(sorted(missing))} "
                     "(write it with mutwo calibrate --waves --leave-one-out --held-out-csv)")
        yield from enumerate(reader, start=2)

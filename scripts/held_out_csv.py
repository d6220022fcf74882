"""Reads the held-out CSV that `mutwo calibrate --waves --leave-one-out ... --held-out-csv FILE` writes
(costmodel/wave_held_out_csv.hpp), for the scripts that table it (held-out-by-duration.py,
conv-algorithms.py, fusion-pair-spread.py): its rows with their line numbers, a file without a needed column
refused by name, and the arguments they share."""
import argparse
import csv
import os
import sys

# The source root: the scripts' defaults (docs/FIDELITY.md, the device files, NeuSight's data) sit under it.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def held_out_rows(path, required, tool):
    """Yields (line, row) for every data row of `path`; exits naming `tool` and the missing columns."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = set(required) - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"{tool}: {path}: no column {', '.join(sorted(missing))} "
                     "(write it with mutwo calibrate --waves --leave-one-out --held-out-csv)")
        yield from enumerate(reader, start=2)


def report_parser(doc):
    """The arguments every script that tables a held-out CSV takes: the CSV and the report it writes its
    section into (default docs/FIDELITY.md); `doc` is the script's docstring, whose first paragraph
    describes it."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("held_out_csv")
    parser.add_argument("report", nargs="?", default=os.path.join(ROOT, "docs", "FIDELITY.md"))
    return parser

#!/usr/bin/python3
"""Runs every command of the README that needs no GPU, as written, in a scratch directory (issue 20).

    /usr/bin/python3 scripts/run-readme.py build/cli/mutwo [--scratch DIR] [--list]

Commands are the lines of the README's ```sh blocks (a trailing backslash joins the next line),
without comments. Left out: the two set-up commands (they are what CI runs), and commands whose
comment says "needs a GPU". `mutwo` and `./build/cli/mutwo` run the given binary; a command whose
comment starts with "error" must fail with an "error:" line, every other must exit 0. The scratch
directory links the repository's tests/, scripts/, experiments/, docs/ and costmodel/ (the device files), so paths resolve as
from the repository root and every file a command writes lands in the scratch directory. Commands
that need python3-torch (scripts/export_model.py) are skipped, and said so, where it is missing.
Exit status 1 if any command did not do what its line says.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commands(readme):
    out = []
    for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
        pending = ""
        for raw in block.splitlines():
            line = pending + raw.strip()
            pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            if not line or line.startswith("#"):
                continue
            code, _, comment = line.partition(" #")
            out.append((code.strip(), comment.strip()))
    return out


def has_torch():
    return subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mutwo", help="the mutwo binary")
    parser.add_argument("--scratch", help="scratch directory (default: a new temporary one)")
    parser.add_argument("--list", action="store_true", help="print the commands and what is expected; run nothing")
    parser.add_argument("--command-timeout", type=float, default=900, metavar="S",
                        help="seconds one command may take before it counts as failed (default 900; the "
                             "sanitized builds' ctest passes more: tests/CMakeLists.txt)")
    args = parser.parse_args()
    mutwo = os.path.abspath(args.mutwo)
    with open(os.path.join(ROOT, "README.md")) as f:
        lines = commands(f.read())
    scratch = args.scratch or tempfile.mkdtemp(prefix="mutwo-readme-")
    os.makedirs(scratch, exist_ok=True)
    for d in ("tests", "scripts", "experiments", "docs", "costmodel"):
        link = os.path.join(scratch, d)
        if not os.path.lexists(link):
            os.symlink(os.path.join(ROOT, d), link)
    torch = has_torch()
    # The Python module beside the binary (<build>/python, python/CMakeLists.txt): the README's
    # `import mutwo` lines and scripts/export_model.py find it as a user with PYTHONPATH set does.
    env = dict(os.environ)
    env["PYTHONPATH"] = env["MUTWO_PYTHONPATH"] = os.path.join(os.path.dirname(os.path.dirname(mutwo)), "python")
    failures, ran = 0, 0
    for code, comment in lines:
        if code.startswith("bash scripts/setup.sh"):
            continue  # the set-up commands: CI itself
        if "needs a GPU" in comment:
            print(f"skip (needs a GPU): {code}")
            continue
        if ("export_model.py" in code or "import torch" in code) and not torch:
            print(f"skip (no python3-torch here): {code}")
            continue
        expect_error = comment.startswith("error")
        command = re.sub(r"^(\./build/cli/)?mutwo\b", shlex.quote(mutwo), code)
        command = re.sub(r"(^|&& )python3\b", r"\1/usr/bin/python3", command)
        command = command.replace("--mutwo build/cli/mutwo", "--mutwo " + shlex.quote(mutwo))
        if args.list:
            print(f"{'error' if expect_error else 'ok   '} {command}")
            continue
        start = time.monotonic()
        ran += 1
        try:
            r = subprocess.run(["bash", "-c", command], cwd=scratch, env=env, capture_output=True, text=True,
                               timeout=args.command_timeout)
        except subprocess.TimeoutExpired:
            print(f"FAIL {time.monotonic() - start:6.1f} s  timed out (--command-timeout {args.command_timeout:g} s)  {code}")
            failures += 1
            continue
        seconds = time.monotonic() - start
        ok = (r.returncode != 0 and "error:" in r.stderr) if expect_error else r.returncode == 0
        print(f"{'ok  ' if ok else 'FAIL'} {seconds:6.1f} s  rc {r.returncode}  {code}")
        if not ok:
            failures += 1
            print("  stderr: " + "\n  stderr: ".join(r.stderr.strip().splitlines()[-5:]))
    if not args.list:
        print(f"run-readme: {ran} commands run in {scratch}, {failures} did not do what the README says")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A quick robustness check of the execution-trace import, its profiler join and exported model
files (not a fuzzer; issue 20 asks for libFuzzer targets): seeded random mutations of the
fixtures (values replaced by wrong types, huge or negative numbers, fields deleted), each run
through `mutwo simulate`. Every run must exit 0 or 1 with an "error:" line; a signal, another
status or a silent failure is reported and its input kept as /tmp/mutwo-mutant-N.json.

    /usr/bin/python3 scripts/mutate-imports.py [build/cli/mutwo]
"""
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile

MUTWO = sys.argv[1] if len(sys.argv) > 1 else "build/cli/mutwo"
FIX = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures")
VALUES = [None, -1, 0, 1, 2**62, -2**62, "x", [], {}, [1, 2], 1.5, True, [0, 0, 0, 0, 0, "cpu"],
          [5, 6, -1, 3, 4, "cpu"], "cpu_op", "kernel", "cuda_runtime"]
bad = 0


def check(args, mutant):
    global bad
    r = subprocess.run([MUTWO, "simulate"] + args, capture_output=True, text=True, timeout=60)
    if r.returncode not in (0, 1) or (r.returncode == 1 and "error:" not in r.stderr):
        bad += 1
        path = f"/tmp/mutwo-mutant-{bad}.json"
        with open(path, "w") as f:
            json.dump(mutant, f)
        print(f"status {r.returncode} on {path}: {r.stderr[:200]}")


def mutate(obj, rng):
    key = rng.choice(list(obj.keys()))
    if isinstance(obj[key], list) and obj[key] and rng.random() < 0.6:
        j = rng.randrange(len(obj[key]))
        if isinstance(obj[key][j], list) and obj[key][j] and rng.random() < 0.5:
            obj[key][j][rng.randrange(len(obj[key][j]))] = rng.choice(VALUES)
        else:
            obj[key][j] = rng.choice(VALUES)
    elif rng.random() < 0.2:
        del obj[key]
    else:
        obj[key] = rng.choice(VALUES)


def main():
    rng = random.Random(7)
    et_dir = os.path.join(FIX, "execution_trace")
    et = json.load(gzip.open(os.path.join(et_dir, "mlp_et.json.gz")))
    kineto = json.load(gzip.open(os.path.join(et_dir, "simple_add_kineto.json.gz")))
    model = json.load(open(os.path.join(FIX, "exported", "tiny_resnet.json")))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutant.json")
        runs = 0
        for _ in range(300):  # execution traces, joined with their real profile
            d = json.loads(json.dumps(et))
            for _ in range(rng.randint(1, 4)):
                mutate(rng.choice(d["nodes"]), rng)
            json.dump(d, open(path, "w"))
            check(["--trace", path, "--trace", os.path.join(et_dir, "mlp_profile.json.gz"), "--json"], d)
            runs += 1
        for _ in range(200):  # Kineto traces joined with their real execution trace
            d = json.loads(json.dumps(kineto))
            for _ in range(rng.randint(1, 5)):
                e = rng.choice(d["traceEvents"])
                mutate(e["args"] if isinstance(e.get("args"), dict) and e["args"] and rng.random() < 0.5 else e, rng)
            json.dump(d, open(path, "w"))
            check(["--trace", os.path.join(et_dir, "simple_add_et.json.gz"), "--trace", path, "--json"], d)
            runs += 1
        for _ in range(150):  # exported model files
            d = json.loads(json.dumps(model))
            for _ in range(rng.randint(1, 3)):
                mutate(rng.choice(d["graph"][rng.choice(["ops", "tensors"])]), rng)
            json.dump(d, open(path, "w"))
            check(["--model", path, "--models", "2"], d)
            runs += 1
    print(f"{runs} mutated inputs, {bad} without a clean error")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

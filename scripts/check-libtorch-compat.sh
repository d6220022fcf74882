#!/usr/bin/env bash
# Compiles (syntax only) every translation unit that includes LibTorch -- exec/, its CUDA backend
# and the executor's test suites -- against a newer LibTorch's headers than the Debian 1.13 this
# project builds with, so that a GPU lease (whose PyTorch is 2.x: 2.11 on the lent H100/H200) does not
# spend its minutes on API drift. The headers are Debian trixie's libtorch-dev (2.6), downloaded by
# apt into a scratch folder, never installed; the CUDA backend reads ATen's CUDA headers from it and
# CUDA's from /usr/local/cuda, as the build's compile-only check does.
# Usage: bash scripts/check-libtorch-compat.sh BUILD_DIR [FILTER...]   (BUILD_DIR: a configured
# LibTorch build, for its compile_commands.json; FILTER: only files whose path contains it).
# About 9 minutes on 2 cores; not part of CI (it downloads a package from another Debian release).
set -euo pipefail
build=$(cd "${1:?usage: check-libtorch-compat.sh BUILD_DIR [FILTER...]}" && pwd)
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -f "$build/compile_commands.json" ] || { echo "check-libtorch-compat: no $build/compile_commands.json" >&2; exit 2; }
scratch=${MUTWO_COMPAT_DIR:-/tmp/mutwo-libtorch-compat}
suite=${MUTWO_COMPAT_SUITE:-trixie}
mkdir -p "$scratch/lists/partial" "$scratch/cache/archives/partial" "$scratch/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
  >"$scratch/sources.list"
apt_opts=(-oDir::Etc::SourceList="$scratch/sources.list" -oDir::Etc::SourceParts=/dev/null
  -oDir::State::Lists="$scratch/lists" -oDir::Cache="$scratch/cache" -oAPT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
version=$(apt-cache "${apt_opts[@]}" show libtorch-dev | sed -n 's/^Version: //p' | sort -V | tail -n 1)
(cd "$scratch/debs" && apt-get "${apt_opts[@]}" download "libtorch-dev=$version" >/dev/null)
rm -rf "$scratch/root"
dpkg -x "$scratch"/debs/libtorch-dev_*.deb "$scratch/root"
echo "check-libtorch-compat: libtorch-dev $version ($suite) headers in $scratch/root"

python3 - "$build" "$root" "$scratch/root" "$@" <<'PY'
import json, os, shlex, subprocess, sys
build, root, headers, filters = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
# Searched before the system directories, so these headers win over Debian 1.13's in /usr/include.
extra = [f"-isystem{headers}/usr/include", f"-isystem{headers}/usr/include/torch/csrc/api/include"]
failed, checked = [], 0
for c in json.load(open(os.path.join(build, "compile_commands.json"))):
    rel = os.path.relpath(c["file"], root)
    if "torch/csrc/api/include" not in c["command"]:  # only the units that include LibTorch
        continue
    if filters and not any(f in rel for f in filters):
        continue
    args, out, skip = shlex.split(c["command"]), [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif a not in ("-MD", "-MMD"):
            out.append(a)
    cmd = [out[0]] + extra + out[1:] + ["-fsyntax-only", "-w"]
    r = subprocess.run(cmd, cwd=c["directory"], capture_output=True, text=True)
    checked += 1
    print(("ok     " if r.returncode == 0 else "FAILED ") + rel, flush=True)
    if r.returncode:
        failed.append(rel)
        print("\n".join([l for l in r.stderr.splitlines() if "error" in l][:20]))
print(f"check-libtorch-compat: {checked - len(failed)} of {checked} units compile against these headers")
sys.exit(1 if failed or checked == 0 else 0)
PY

#!/usr/bin/env bash
# Unpacks the Debian packages a lent GPU machine lacks into .deps/root (git-ignored), for the
# `device` tool to carry there: that machine has PyTorch (its LibTorch), nvcc and CMake, but no
# package registry. Run here, on a machine with Debian's registry; idempotent.
#   header-only: nlohmann-json, CLI11, doctest, fmt (built header-only there: FMT_HEADER_ONLY);
#   Eigen (header-only), toml++ (its headers and shared library: the build's rpath finds it);
#   SQLite's headers and static libsqlite3.a; zlib's headers and libz.a; ninja.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
packages=(nlohmann-json3-dev libcli11-dev doctest-dev libfmt-dev libfmt9 libeigen3-dev libtomlplusplus-dev libtomlplusplus3
  libsqlite3-dev zlib1g-dev ninja-build)
root=.deps/root
debs=.deps/debs
mkdir -p "$root" "$debs"
(cd "$debs" && apt-get download "${packages[@]}" >/dev/null)
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$root"; done
echo "fetch-device-deps: ${#packages[@]} packages unpacked into $root ($(du -sh "$root" | cut -f1))"

#!/usr/bin/env bash
# Installs every build and test dependency of mutwo from Debian packages.
# Non-interactive and idempotent: packages already present are left as they are.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang lld
  libeigen3-dev doctest-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  libfmt-dev libsqlite3-dev libbenchmark-dev zlib1g-dev libjemalloc-dev
  python3-matplotlib python3-torch python3-torchvision
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pandas python3-scipy
  coinor-libcbc-dev
  libtorch-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all ${#packages[@]} dependencies present"

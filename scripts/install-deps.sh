#!/usr/bin/env bash
# Installs everything hived needs to build, test and plot on Debian 12, as root.
# Idempotent: packages already present are left as they are.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang clang-format clang-tidy libclang-rt-14-dev pkg-config
  libboost-graph-dev libabsl-dev libyaml-cpp-dev catch2 libbenchmark-dev nlohmann-json3-dev
  gnuplot-nox time golang-go python3
  libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev prometheus curl
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: need root to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

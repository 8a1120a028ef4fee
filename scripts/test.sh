#!/usr/bin/env bash
# The README's test command: install what is needed, build (Debug with libstdc++
# assertions) and run the whole test suite with CTest. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
preset="${HIVED_TEST_PRESET:-dev}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" -j "$(nproc)"

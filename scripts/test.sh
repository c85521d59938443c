#!/usr/bin/env bash
# Quick start, tests: set up, build, run the whole suite through ctest, then fuzz each reader for
# NEURONSIM_FUZZ_SECONDS (default 20; 0 skips) per target (scripts/fuzz.sh, docs/hardening.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
fuzz_seconds=${NEURONSIM_FUZZ_SECONDS:-20}
[ "$fuzz_seconds" = 0 ] || scripts/fuzz.sh "$fuzz_seconds"

#!/usr/bin/env bash
# Quick start, tests: set up, build, run the whole suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"

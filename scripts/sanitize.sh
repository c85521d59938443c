#!/usr/bin/env bash
# Builds every suite with AddressSanitizer and UBSan (asan preset, GCC, build-asan/) and runs
# them through ctest: scripts/sanitize.sh [CTEST_ARGS...]. Any sanitizer report fails its test.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_init_order=1
ctest --preset asan -j "$(nproc)" "$@"

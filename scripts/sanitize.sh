#!/usr/bin/env bash
# Builds every suite with AddressSanitizer and UBSan (asan preset: GCC, -O1, build-asan/) and runs
# all of them, the Python tests included, through ctest: scripts/sanitize.sh [CTEST_ARGS...].
# Any sanitizer report fails its test. Not part of CI: see docs/hardening.md for its cost.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_init_order=1
status=0
ctest --preset asan -j "$(nproc)" "$@" || status=$?
echo "sanitize.sh: build and suites took $(((SECONDS - start) / 60)) min"
exit "$status"

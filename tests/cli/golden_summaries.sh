#!/usr/bin/env bash
# Tiny runs' simulated summaries equal the goldens in tests/golden (a timing change is a visible diff).
exec python3 "$(dirname "$0")/../golden/golden.py" "$1"

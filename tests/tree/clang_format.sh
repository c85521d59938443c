#!/usr/bin/env bash
# Fails when a tracked C++ file differs from clang-format-14's output (the repo's .clang-format).
# Fix with: git ls-files '*.cpp' '*.h' | xargs clang-format-14 -i
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if ! command -v clang-format-14 >/dev/null; then
  echo "error: clang-format-14 not found (scripts/setup.sh installs it)"
  exit 1
fi
enter_git_checkout "${1:-.}" format
git ls-files -z -- '*.cpp' '*.h' | xargs -0 -P 2 -n 32 clang-format-14 --dry-run --Werror

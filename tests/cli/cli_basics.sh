#!/usr/bin/env bash
# The command line's top level: help, unknown commands, unknown options exit 2 with one line.
set -u
bin=$1
fail=0
check() { # check NAME EXPECTED_STATUS COMMAND...
  local name=$1 want=$2; shift 2
  local err; err=$("$@" 2>&1 >/dev/null); local got=$?
  if [ "$got" != "$want" ]; then echo "FAIL $name: exit $got, want $want ($err)"; fail=1; fi
  if [ "$want" = 2 ] && [ "$(printf '%s\n' "$err" | grep -c '^error: ')" != 1 ]; then
    echo "FAIL $name: expected exactly one 'error:' line, got: $err"; fail=1
  fi
}
check help 0 "$bin" --help
# --version prints the project() version of the top CMakeLists.txt.
want=$(sed -n 's/^project(neuronsim VERSION \([0-9.]*\) .*/neuronsim \1/p' "$(dirname "$0")/../../CMakeLists.txt")
got=$("$bin" --version); status=$?
[ "$status" = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] || { echo "FAIL --version: '$got' (exit $status), want '$want'"; fail=1; }
check no-args 2 "$bin"
check unknown-command 2 "$bin" frobnicate
out=$("$bin" --help)
for sub in run list asm report view diff calibrate; do
  printf '%s\n' "$out" | grep -q "^  $sub  " || { echo "FAIL help lists $sub"; fail=1; }
done
# list KERNEL... shows those kernels, in the order given.
names=$("$bin" list conv3d matmul | grep '^[a-z]' | tr '\n' ' ')
[ "$names" = "conv3d matmul " ] || { echo "FAIL list conv3d matmul shows: $names"; fail=1; }
all=$("$bin" list | grep -c '^[a-z]')
[ "$all" -gt 2 ] || { echo "FAIL list shows $all kernels"; fail=1; }
[ $fail = 0 ] && echo "cli_basics: 1 passed, 0 failed" || echo "cli_basics: 0 passed, 1 failed"
exit $fail

#!/usr/bin/env bash
# --dry-run on run, asm and sweep: a valid command line says so, exits 0 and writes nothing; an
# invalid one fails exactly as the real run would, before anything runs.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

# expect_dry NAME ARGS...: `$bin ARGS --dry-run` exits 0, prints "dry run" and writes nothing.
expect_dry() {
  local name=$1
  shift
  local text rc
  text=$(cd "$tmp" && "$bin" "$@" --dry-run 2>&1)
  rc=$?
  if [ "$rc" != 0 ]; then bad "$name: exit $rc ($text)"; return; fi
  if ! printf '%s\n' "$text" | grep -q "dry run"; then bad "$name: no 'dry run' line: $text"; return; fi
  if [ -n "$(cd "$tmp" && ls -A | grep -v -x -e a.npy -e b.npy -e out)" ] || [ -n "$(ls -A "$tmp/out")" ]; then
    bad "$name: wrote $(ls -A "$tmp" "$tmp/out")"; return
  fi
  ok
}

mkdir -p "$tmp/out"
"$py" -c "import numpy as np; np.save('$tmp/a.npy', np.ones((64, 32), np.float32)); np.save('$tmp/b.npy', np.ones((64, 32), np.float32))"

expect_dry "run with every output" run matmul --shape lhsT=256x128 --shape rhs=256x64 --check \
  --trace t.json --csv t.csv --summary-json s.json --dump-asm m.nsasm --output-dir out
expect_dry "run with input files" run matmul --input lhsT=a.npy --input rhs=b.npy --output-dir out
expect_dry "asm" asm "$PWD/tests/programs/add_matmul.nsasm" --timing-only --trace t.json
expect_dry "sweep" sweep matmul_tutorial --param variant=t1_tiled,t1_hoisted --param loop_buffers \
  --json sweep.json --csv sweep.csv
text=$("$bin" sweep matmul_tutorial --param variant=t1_tiled,t1_hoisted --param loop_buffers=1,2 \
  --shard 2/3 --dry-run 2>&1)
printf '%s\n' "$text" | grep -q "1 of 4 configurations" && ok || bad "sweep shard count: $text"

# What a real run refuses, a dry run refuses the same way.
expect_error "bad parameter value" "parameter variant takes one of" \
  run matmul_tutorial --variant t1_nope --dry-run
expect_error "shapes that do not fit" "lhsT has shape \[4,5\] and rhs \[3,5\]" \
  run matmul --shape lhsT=4x5 --shape rhs=3x5 --dry-run
expect_error "missing input file" "missing.npy" run matmul --input lhsT="$tmp/missing.npy" --dry-run
expect_error "input of the wrong shape" "shape" \
  run matmul --input lhsT="$tmp/a.npy" --shape rhs=128x64 --dry-run
expect_error "output in a missing directory" "does not exist" \
  run matmul --trace "$tmp/nodir/t.json" --dry-run
expect_error "asm input not declared" "declares no tensor 'z'" \
  asm tests/programs/add_matmul.nsasm --input z="$tmp/a.npy" --dry-run
expect_error "sweep unknown parameter" "unknown parameter" sweep matmul --param nope=1 --dry-run
expect_error "a kernel that does not fit SBUF" "but SBUF has" \
  run matmul --shape lhsT=128x128 --shape rhs=128x100000 --mode both --dry-run
expect_error "dry run twice" "" run matmul --dry-run --dry-run

finish dry_run

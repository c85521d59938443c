#!/usr/bin/env bash
# neuronsim run: bad kernels, options, shapes, parameters and files print one "error:" line,
# exit 2, and write nothing.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

out="$tmp/out"
expect_error "unknown kernel" "unknown kernel 'nope'" run nope
expect_error "no kernel" "expected a KERNEL" run
expect_error "unknown option" "unknown option --frobnicate" run matmul --frobnicate 3 --output-dir "$out"
expect_error "sweep's --param" "^error: run matmul: unknown option --param (sweep's; run takes a parameter as a flag: --n-tile 128)$" \
  run matmul --param n_tile=128,256
expect_error "sweep's --param, int3" "run conv3d: unknown option --param (sweep's; run takes a parameter as a flag: --stride 1,2,2)$" \
  run conv3d --param=stride=1:2:2,2
expect_error "kernel param of another kernel" "run matmul: unknown option --kernel-size (a parameter of avg_pooling_3d_backward, max_pooling_3d_backward, avg_pooling_3d, max_pooling_3d; matmul.s are in neuronsim run matmul --help)" run matmul --kernel-size 2
expect_error "schedule param of another kernel" "run conv3d: unknown option --dx-slot-copies (a parameter of conv3d_bwd; " run conv3d --dx-slot-copies=on
expect_error "bad shape text" "shape '4xq'" run matmul --shape lhsT=4xq --shape rhs=4x4 --output-dir "$out"
expect_error "zero in shape" "shape '0x4'" run matmul --shape lhsT=0x4 --shape rhs=4x4
expect_error "K mismatch" "lhsT has shape \[4,5\] and rhs \[3,5\]" run matmul --shape lhsT=4x5 --shape rhs=3x5 \
  --output-dir "$out" --summary-json "$tmp/s.json"
expect_error "unknown input name" "no input named 'bias'" run matmul --shape bias=4
expect_error "bad dtype" "--dtype takes fp32 or bf16" run matmul --dtype fp64
expect_error "bad seed" "--seed" run matmul --seed -1
expect_error "missing npy" "missing.npy" run matmul --input lhsT="$tmp/missing.npy" --shape rhs=4x4
expect_error "bad machine" "" run matmul --machine nosuchmachine
expect_error "timing-only with check" "timing-only" run matmul --timing-only --check
expect_error "summary in missing dir" "does not exist" run matmul --summary-json "$tmp/nodir/s.json"

[ ! -e "$out" ] && [ ! -e "$tmp/s.json" ] && ok || bad "nothing written on errors"

finish run_errors

#!/usr/bin/env bash
# run's warnings and their --strict errors: a forced schedule parameter that changes nothing here
# warns (one line, the run goes on) and under --strict is one error line with nothing printed or
# written; a --strict failure of asm prints no summary either; a missing required input names the
# flags and the shape that give it.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

# 1. --slot-copies on conv3d's default shape (no rolling planes): a warning, the run completes.
"$bin" run conv3d --slot-copies on --timing-only >"$tmp/w.out" 2>"$tmp/w.err"
[ $? = 0 ] && [ "$(cat "$tmp/w.err")" = "warning: run conv3d: --slot-copies on has no effect here (auto and off build the same program)" ] &&
  grep -q "^conv3d on trn2" "$tmp/w.out" && ok || bad "ineffective schedule parameter warns: $(cat "$tmp/w.err")"
expect_error "strict ineffective schedule parameter" \
  "run conv3d: --strict: --slot-copies on has no effect here (auto and off build the same program)" \
  run conv3d --slot-copies on --strict --summary-json "$tmp/s1.json"
expect_error "strict ineffective parameter of another kernel" \
  "run matmul: --strict: --block-m 2 has no effect here (auto, 1 and 4 build the same program)" \
  run matmul --block-m 2 --strict --dry-run
# Above kEffectCheckInstructions (5,000) only --strict compares: 9,248 instructions here.
err=$("$bin" run matmul --dtype bf16 --shape lhsT=4096x4096 --shape rhs=4096x4096 --block-m 2 --dry-run 2>&1 >/dev/null) &&
  [ -z "$err" ] && ok || bad "large program compared without --strict: $err"
expect_error "strict compares a large program" \
  "run matmul: --strict: --block-m 2 has no effect here (auto, 1 and 4 build the same program)" \
  run matmul --dtype bf16 --shape lhsT=4096x4096 --shape rhs=4096x4096 --block-m 2 --strict --dry-run
# A parameter that does apply, and one forced to auto, stay quiet.
err=$("$bin" run matmul --mode kblocked --block-m 2 --strict --timing-only 2>&1 >/dev/null) &&
  [ -z "$err" ] && ok || bad "effective schedule parameter: $err"
err=$("$bin" run conv3d --slot-copies auto --strict --timing-only 2>&1 >/dev/null) &&
  [ -z "$err" ] && ok || bad "auto: $err"
# A block parameter on a tutorial variant with fixed blocks is valid but changes nothing: a
# warning like the rest (it was an error before session 11); a value that means nothing on any
# path is an error even where this shape never reads the parameter.
err=$("$bin" run matmul_tutorial --tiles-in-block-m 4 --timing-only 2>&1 >/dev/null) &&
  [ "$err" = "warning: run matmul_tutorial: --tiles-in-block-m 4 has no effect here (auto builds the same program)" ] &&
  ok || bad "tutorial block parameter on t1_tiled: $err"
expect_error "strict tutorial block parameter" \
  "run matmul_tutorial: --strict: --tiles-in-block-m 4 has no effect here" \
  run matmul_tutorial --tiles-in-block-m 4 --strict --dry-run
err=$("$bin" run conv3d_bwd --dw-stationary dy --dw-depth-group 2 --dry-run 2>&1 >/dev/null) &&
  [ "$err" = "warning: run conv3d_bwd: --dw-depth-group 2 has no effect here (auto, 1 and 4 build the same program)" ] &&
  ok || bad "dw_depth_group with dy stationary: $err"
expect_error "range of a knob mode both does not read" "^error: matmul: block_m 0 is below 1$" \
  run matmul --block-m 0 --dry-run
expect_error "machine range of a knob mode both does not read" \
  "^error: matmul: block_m 9 is not in 1..8 (8: the machine's PSUM banks)$" run matmul --block-m 9 --dry-run
expect_error "range of a dw knob without dw" "^error: conv3d_bwd: dw_acc_banks 7 is not in 1..6" \
  run conv3d_bwd --compute-dw false --dw-acc-banks 7 --dry-run
expect_error "range of a stride-path knob at stride 1" "^error: conv3d_transpose: x_loads 0 is not in 1..64$" \
  run conv3d_transpose --x-loads 0 --dry-run
expect_error "sweep value out of range" "^error: matmul: block_m 0 is below 1$" \
  sweep matmul --param block_m=0,1 --dry-run

# 2. A --strict failure prints no summary: stdout stays empty, no file appears.
mkdir -p "$tmp/p"
cat >"$tmp/p/race.nsasm" <<'ASM'
tensor x [128,64] fp32 input
tensor y [128,64] fp32 output
semaphore s
sync dma_copy queue=0 dst=sbuf:fp32[0:128]@0x0[[1,64]] srcs=hbm:fp32:x[0:128:64]@0[[1,64]] signal=s+1
vector tensor_copy dst=sbuf:fp32[0:128]@0x100[[1,64]] srcs=sbuf:fp32[0:128]@0x0[[1,64]]
sync dma_copy queue=1 dst=hbm:fp32:y[0:128:64]@0[[1,64]] srcs=sbuf:fp32[0:128]@0x100[[1,64]] wait=s>=1
ASM
"$py" -c "import numpy as np; np.save('$tmp/x.npy', np.ones((128, 64), np.float32))"
out=$("$bin" asm "$tmp/p/race.nsasm" --input "x=$tmp/x.npy" --strict --summary-json "$tmp/s2.json" 2>/dev/null)
rc=$?
[ "$rc" = 2 ] && [ -z "$out" ] && [ ! -e "$tmp/s2.json" ] && ok || bad "asm --strict failure: exit $rc, stdout '$out'"
expect_error "asm strict race" "--strict: .* race" asm "$tmp/p/race.nsasm" --input "x=$tmp/x.npy" --strict
out=$("$bin" run conv3d --slot-copies on --strict 2>/dev/null)
[ -z "$out" ] && [ ! -e "$tmp/s1.json" ] && ok || bad "run --strict failure printed: $out"

# 3. A missing required input: the flags and the shape that give it.
"$py" -c "import numpy as np; np.save('$tmp/l.npy', np.ones((512, 256), np.float32)); np.save('$tmp/x5.npy', np.ones((1, 4, 4, 4, 4), np.float32))"
expect_error "required input, default fits" \
  "matmul: input rhs is required: give --input rhs=FILE.npy or --shape rhs=512x1024 (its default shape: defaults apply only when no --input is given)" \
  run matmul --input "lhsT=$tmp/l.npy"
expect_error "required input, default does not fit" \
  "conv3d: input filters is required: give --input filters=FILE.npy or --shape filters=AxBxCxDxE (its default 3x3x3x128x128 does not fit: filters has C_in 128 but x_in has 4 channels)" \
  run conv3d --input "x_in=$tmp/x5.npy"
# A default shape beside a given one that does not fit it: the error names the default taken
# (or derived, as pooling's input_tensor), not only the rule.
expect_error "default beside a given shape" \
  "conv3d: filters has C_in 128 but x_in has 4 channels (filters took its default shape 3x3x3x128x128)" \
  run conv3d --shape x_in=1x4x8x8x8 --timing-only
expect_error "derived default beside a given shape" \
  "grad_output has shape \\[1,1,4,4,4\\] .* (input_tensor took its default shape 2x64x16x16x16)" \
  run avg_pooling_3d_backward --shape grad_output=1x1x4x4x4 --timing-only

finish run_warnings

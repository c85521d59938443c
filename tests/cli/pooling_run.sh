#!/usr/bin/env bash
# The pooling kernels through `neuronsim run`: default shapes with --check in both layouts and
# dtypes, forward then backward through .npy files (checked against a Python reference), and
# bad parameters exiting 2 with one error line.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

expect_check "avg backward default" run avg_pooling_3d_backward --check
expect_check "max backward NDHWC" run max_pooling_3d_backward --check --data-format NDHWC
expect_check "avg forward bf16" run avg_pooling_3d --check --dtype bf16
expect_check "max forward NDHWC->NCDHW" run max_pooling_3d --check --data-format NDHWC --output-format NCDHW \
  --shape input_tensor=2x6x7x5x9 --kernel-size 3 --stride 2 --padding 1
expect_check "avg backward uneven" run avg_pooling_3d_backward --check --shape input_tensor=1x130x5x6x7 \
  --kernel-size 3,2,2 --stride 1,2,3 --padding 1,0,1

# Forward max pool, then its backward, through .npy files; values are multiples of 0.5 with ties.
"$py" - "$tmp" <<'PY'
import sys
from npy import read_npy, write_npy
tmp = sys.argv[1]
n = 2 * 3 * 5 * 4 * 6
write_npy(tmp + '/x.npy', (2, 3, 5, 4, 6), [((i * 7) % 5) * 0.5 - 1.0 for i in range(n)])
write_npy(tmp + '/g.npy', (2, 3, 3, 2, 4), [(i % 9) - 4.0 for i in range(2 * 3 * 3 * 2 * 4)])
PY
win="--kernel-size 3,2,2 --stride 2,2,2 --padding 1,0,1"
"$bin" run max_pooling_3d --input input_tensor="$tmp/x.npy" $win --output-dir "$tmp/fwd" > "$tmp/fwd.txt" 2>&1 \
  && ok || { bad "max forward from npy"; cat "$tmp/fwd.txt"; }
"$bin" run max_pooling_3d_backward --input input_tensor="$tmp/x.npy" --input output_tensor="$tmp/fwd/out.npy" \
  --input grad_output="$tmp/g.npy" $win --output-dir "$tmp/bwd" > "$tmp/bwd.txt" 2>&1 \
  && ok || { bad "max backward from npy"; cat "$tmp/bwd.txt"; }
"$py" - "$tmp" <<'PY' && ok || bad "npy results equal the Python reference"
import sys
from npy import read_npy, write_npy
tmp = sys.argv[1]
(B, C, D, H, W), x = read_npy(tmp + '/x.npy')
_, g = read_npy(tmp + '/g.npy')
k, s, p = (3, 2, 2), (2, 2, 2), (1, 0, 1)
O = [(n + 2 * pp - kk) // ss + 1 for n, kk, ss, pp in zip((D, H, W), k, s, p)]
xi = lambda b, c, d, h, w: (((b * C + c) * D + d) * H + h) * W + w
oi = lambda b, c, d, h, w: (((b * C + c) * O[0] + d) * O[1] + h) * O[2] + w
out = [0.0] * (B * C * O[0] * O[1] * O[2])
gin = [0.0] * len(x)
for b in range(B):
  for c in range(C):
    for od in range(O[0]):
      for oh in range(O[1]):
        for ow in range(O[2]):
          taps = [(od * s[0] + a - p[0], oh * s[1] + e - p[1], ow * s[2] + f - p[2])
                  for a in range(k[0]) for e in range(k[1]) for f in range(k[2])]
          taps = [t for t in taps if 0 <= t[0] < D and 0 <= t[1] < H and 0 <= t[2] < W]
          m = max(x[xi(b, c, *t)] for t in taps)
          out[oi(b, c, od, oh, ow)] = m
          first = next(t for t in taps if x[xi(b, c, *t)] == m)
          gin[xi(b, c, *first)] += g[oi(b, c, od, oh, ow)]
shape, fwd = read_npy(tmp + '/fwd/out.npy')
assert shape == (B, C, *O), shape
assert fwd == out, 'forward differs'
shape, bwd = read_npy(tmp + '/bwd/grad_input.npy')
assert shape == (B, C, D, H, W), shape
assert all(abs(a - b) <= 1e-6 for a, b in zip(bwd, gin)), 'backward differs'
PY

expect_error "padding above k/2" "max_pooling_3d_backward: padding 2 exceeds kernel_size/2 on D" \
  run max_pooling_3d_backward --kernel-size 3 --padding 2,1,1
expect_error "output_tensor mismatch" "max_pooling_3d_backward: output_tensor has shape \[2,64,8,8,4\] but grad_output has \[2,64,8,8,8\]" \
  run max_pooling_3d_backward --shape output_tensor=2x64x8x8x4
expect_error "grad_output mismatch" "avg_pooling_3d_backward: grad_output has shape" \
  run avg_pooling_3d_backward --shape input_tensor=1x2x8x8x8 --shape grad_output=1x2x4x4x5
expect_error "bad layout" "NCDHW" run avg_pooling_3d --data-format NCHW
expect_error "kernel larger than input" "kernel_size 5 exceeds the padded input 4 on W" \
  run max_pooling_3d --shape input_tensor=1x1x8x8x4 --kernel-size 5,5,5 --padding 2,2,0

finish pooling_run

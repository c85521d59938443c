#!/usr/bin/env bash
# conv3d and conv3d_transpose through `neuronsim run`: default shapes and odd flags with --check,
# .npy in and out against a small Python reference, and bad shapes/parameters exiting 2 with one
# error line naming the kernel.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

expect_check "conv3d default" run conv3d --check
expect_check "conv3d bf16 bias gelu" run conv3d --check --dtype bf16 --shape x_in=2x3x5x6x7 --shape filters=3x2x3x3x9 \
  --shape bias=9 --padding 1,0,2,1,0,1 --stride 2,1,2 --dilation 1,2,1 --activation-fn gelu
expect_check "conv3d_transpose default" run conv3d_transpose --check
expect_check "conv3d_transpose CO_CI flip" run conv3d_transpose --check --shape x_in=1x5x3x4x2 --shape filters=3x3x3x7x5 \
  --shape bias=7 --stride 2 --padding 1 --output-padding 1,0,1 --filter-shape KDHW_CO_CI \
  --flip-filter-taps-in-kernel true --activation-fn relu --lnc-shard true
expect_check "conv3d_bwd default" run conv3d_bwd --check
expect_check "conv3d_bwd bf16 derived dy" run conv3d_bwd --check --dtype bf16 --shape x_in=2x3x5x6x7 \
  --shape filters=2x3x2x3x4 --stride 2,1,2 --padding 1,0,0,1,1,0 --dilation 1,2,1
expect_check "conv3d_bwd dw only" run conv3d_bwd --check --compute-dx false --compute-db false

# x [1,2,3,3,4] and filters [2,1,2,2,3] as .npy; the output against direct Python loops.
"$py" - "$tmp" <<'PY'
import sys
from npy import read_npy, write_npy
tmp = sys.argv[1]
write_npy(tmp + '/x.npy', (1, 2, 3, 3, 4), [((i * 5) % 7) * 0.25 - 0.75 for i in range(72)])
write_npy(tmp + '/w.npy', (2, 1, 2, 2, 3), [((i * 3) % 5) * 0.5 - 1.0 for i in range(24)])
PY
"$bin" run conv3d --input x_in="$tmp/x.npy" --input filters="$tmp/w.npy" --padding 1,0,0,0,1,1 --stride 1,1,2 \
  --output-dir "$tmp/fwd" > "$tmp/fwd.txt" 2>&1 && ok || { bad "conv3d from npy"; cat "$tmp/fwd.txt"; }
"$bin" run conv3d_transpose --input x_in="$tmp/x.npy" --input filters="$tmp/w.npy" --stride 2,1,2 --padding 0,1,0,0,1,0 \
  --output-dir "$tmp/tr" > "$tmp/tr.txt" 2>&1 && ok || { bad "conv3d_transpose from npy"; cat "$tmp/tr.txt"; }
"$py" - "$tmp" <<'PY' && ok || bad "npy results equal the Python reference"
import sys
from npy import read_npy, write_npy
tmp = sys.argv[1]
(_, C, D, H, W), x = read_npy(tmp + '/x.npy')
(KD, KH, KW, _, CO), w = read_npy(tmp + '/w.npy')
X = lambda c, d, h, i: x[((c * D + d) * H + h) * W + i]
Wt = lambda kd, kh, kw, c, o: w[(((kd * KH + kh) * KW + kw) * C + c) * CO + o]
# conv3d: padding (1,0,0,0,1,1), stride (1,1,2)
od, oh, ow = D + 1 - KD + 1, H - KH + 1, (W + 2 - KW) // 2 + 1
ref = []
for o in range(CO):
    for a in range(od):
        for b in range(oh):
            for c in range(ow):
                s = 0.0
                for kd in range(KD):
                    for kh in range(KH):
                        for kw in range(KW):
                            d, h, i = a - 1 + kd, b + kh, 2 * c - 1 + kw
                            if 0 <= d < D and 0 <= h < H and 0 <= i < W:
                                for ci in range(C): s += X(ci, d, h, i) * Wt(kd, kh, kw, ci, o)
                ref.append(s)
shape, out = read_npy(tmp + '/fwd/out.npy')
assert shape == (1, CO, od, oh, ow), shape
assert max(abs(p - q) for p, q in zip(out, ref)) < 1e-4
# conv3d_transpose: stride (2,1,2), padding (0,1,0,0,1,0), pre-flipped taps (W = filters reversed)
td, th, tw = (D - 1) * 2 + KD - 1, H + KH - 1, (W - 1) * 2 + KW - 1
acc = [0.0] * (CO * td * th * tw)
for ci in range(C):
    for d in range(D):
        for h in range(H):
            for i in range(W):
                for kd in range(KD):
                    for kh in range(KH):
                        for kw in range(KW):
                            a, b, c = 2 * d + kd, h + kh, 2 * i - 1 + kw
                            if 0 <= a < td and 0 <= b < th and 0 <= c < tw:
                                for o in range(CO):
                                    acc[((o * td + a) * th + b) * tw + c] += X(ci, d, h, i) * Wt(KD - 1 - kd, KH - 1 - kh, KW - 1 - kw, ci, o)
shape, out = read_npy(tmp + '/tr/out.npy')
assert shape == (1, CO, td, th, tw), shape
assert max(abs(p - q) for p, q in zip(out, acc)) < 1e-4
PY

expect_error "C_in mismatch" "conv3d: filters has C_in 8 but x_in has 4 channels" run conv3d --shape x_in=1x4x5x5x5 \
  --shape filters=3x3x3x8x2
expect_error "bias shape" "conv3d: bias" run conv3d --shape x_in=1x4x5x5x5 --shape filters=3x3x3x4x2 --shape bias=3
expect_error "too small" "conv3d: padded x_in depth" run conv3d --shape x_in=1x4x2x5x5 --shape filters=3x3x3x4x2
expect_error "output_padding" "conv3d_transpose: output_padding" run conv3d_transpose --stride 2 --output-padding 2
expect_error "activation" "activation_fn" run conv3d --activation-fn softmax
expect_error "bwd dy shape" "conv3d_bwd: dy has shape \[1,8,4,4,5\] but stride/padding give \[1,8,4,4,4\]" \
  run conv3d_bwd --shape x_in=1x8x4x4x4 --shape filters=1x1x1x8x8 --shape dy=1x8x4x4x5
expect_error "bwd nothing" "conv3d_bwd: compute_dx, compute_dw and compute_db are all false" run conv3d_bwd \
  --compute-dx false --compute-dw false --compute-db false
expect_error "filter_shape" "filter_shape" run conv3d_transpose --filter-shape KDHW

finish conv_run

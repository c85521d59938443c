#!/usr/bin/env bash
# neuronsim asm on tests/programs/causal_softmax.nsasm (affine_select, tensor_reduce, activation
# with bias and reduce_dst, tensor_scalar by a [P,1] vector, nc_transpose, tensor_copy): outputs
# match a softmax computed here; the timed model's outputs equal the interpreter's bit for bit.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"
prog=tests/programs/causal_softmax.nsasm

"$py" - "$tmp/x.npy" <<'EOF'
import sys
from npy import write_npy
write_npy(sys.argv[1], (32, 64), [((p * 13 + j * 7) % 17) / 4.0 - 2 for p in range(32) for j in range(64)])
EOF

"$bin" asm "$prog" --interpret --input "x=$tmp/x.npy" --output-dir "$tmp/interp" >/dev/null 2>"$tmp/err" ||
  bad "interpreted run: $(cat "$tmp/err")"

"$py" - "$tmp/interp" <<'EOF' || bad "outputs differ from the softmax computed here"
import math, sys
from npy import read_npy
x = lambda p, j: ((p * 13 + j * 7) % 17) / 4.0 - 2
want = [[0.0] * 64 for _ in range(32)]
for p in range(32):
    m = max(x(p, j) for j in range(p + 1))
    s = sum(math.exp(x(p, j) - m) for j in range(p + 1))
    for j in range(p + 1):
        want[p][j] = math.exp(x(p, j) - m) / s
shape, y = read_npy(sys.argv[1] + '/y.npy')
shape_t, yt = read_npy(sys.argv[1] + '/yt.npy')
assert shape == (32, 64) and shape_t == (64, 32), (shape, shape_t)
worst = 0.0
for p in range(32):
    for j in range(64):
        worst = max(worst, abs(y[p * 64 + j] - want[p][j]))
        if j > p and y[p * 64 + j] != 0.0:
            print('y[%d][%d] = %r above the diagonal' % (p, j, y[p * 64 + j])); sys.exit(1)
        if yt[j * 32 + p] != y[p * 64 + j]:
            print('yt[%d][%d] != y[%d][%d]' % (j, p, p, j)); sys.exit(1)
print('max abs error %.3g' % worst)
sys.exit(0 if worst <= 2e-6 else 1)
EOF

if out=$("$bin" asm "$prog" --input "x=$tmp/x.npy" --output-dir "$tmp/timed" --summary-json "$tmp/timed.json" 2>&1); then
  for f in y yt; do cmp -s "$tmp/interp/$f.npy" "$tmp/timed/$f.npy" || bad "timed $f.npy differs from the interpreter's"; done
  if ! printf '%s\n' "$out" | grep -q "^  vector  *[0-9.]*  *[0-9.]*%  *3$"; then bad "timed totals: $out"; fi
  timing_only=$("$bin" asm "$prog" --timing-only --trace "$tmp/t.json" --summary-json "$tmp/s.json" 2>&1) ||
    bad "timing-only run: $timing_only"
  ns() { "$py" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["total_ns"])' "$1"; }
  [ "$(ns "$tmp/s.json")" = "$(ns "$tmp/timed.json")" ] ||
    bad "timing-only total_ns $(ns "$tmp/s.json") differs from the timed run's $(ns "$tmp/timed.json")"
  "$bin" report "$tmp/t.json" >/dev/null 2>&1 || bad "report cannot read asm's trace"
  [ "$(printf '%s\n' "$out" | head -1)" = "$(printf '%s\n' "$timing_only" | head -1)" ] ||
    bad "timing-only summary line differs: '$(printf '%s\n' "$timing_only" | head -1)' vs '$(printf '%s\n' "$out" | head -1)'"
else
  bad "timed run: $out"
fi

[ "$failed" = 0 ] && ok
finish asm_softmax

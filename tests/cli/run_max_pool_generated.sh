#!/usr/bin/env bash
# A generated max_pooling_3d_backward run uses the true forward maxima as output_tensor, so
# every window (non-overlapping, kernel 2) routes its gradient to exactly one input element.
set -u
bin=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" run max_pooling_3d_backward --shape input_tensor=1x3x4x6x8 --seed 7 --check \
    --output-dir "$tmp" >/dev/null || { echo "run_max_pool_generated: 0 passed, 1 failed"; exit 1; }
python3 - "$tmp/grad_input.npy" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
header = struct.unpack("<H", data[8:10])[0]
values = struct.unpack("<%df" % ((len(data) - 10 - header) // 4), data[10 + header:])
windows = 3 * 2 * 3 * 4
nonzero = sum(1 for v in values if v != 0)
ok = nonzero == windows
print(f"grad_input has {nonzero} nonzero elements, {windows} windows")
print("run_max_pool_generated: %d passed, %d failed" % (ok, not ok))
sys.exit(0 if ok else 1)
PY

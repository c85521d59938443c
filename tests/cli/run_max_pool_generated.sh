#!/usr/bin/env bash
# A generated max_pooling_3d_backward run uses the true forward maxima as output_tensor, so
# every window (non-overlapping, kernel 2) routes its gradient to exactly one input element.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"
"$bin" run max_pooling_3d_backward --shape input_tensor=1x3x4x6x8 --seed 7 --check \
  --output-dir "$tmp" >/dev/null && ok || bad "run --check"
"$py" - "$tmp/grad_input.npy" <<'PY' && ok || bad "one nonzero gradient per window"
import sys
from npy import read_npy
_, values = read_npy(sys.argv[1])
windows = 3 * 2 * 3 * 4
nonzero = sum(1 for v in values if v != 0)
print(f"grad_input has {nonzero} nonzero elements, {windows} windows")
sys.exit(0 if nonzero == windows else 1)
PY
finish run_max_pool_generated

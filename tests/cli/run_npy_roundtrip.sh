#!/usr/bin/env bash
# neuronsim run matmul with .npy inputs (float32 and float64, written here with numpy.save):
# --output-dir writes out.npy whose values equal a matmul computed here in Python.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

"$py" - "$tmp" <<'PY'
import sys
from npy import write_matrix
tmp = sys.argv[1]
K, M, N = 150, 70, 530
write_matrix(tmp + '/lhsT.npy', K, M, lambda k, m: ((k * 5 + m * 3) % 9) - 4, '<f4')
write_matrix(tmp + '/rhs.npy', K, N, lambda k, n: ((k + 2 * n) % 7) * 0.5 - 1.5, '<f8')
PY

"$bin" run matmul --input lhsT="$tmp/lhsT.npy" --input rhs="$tmp/rhs.npy" --output-dir "$tmp/out" --check \
  > "$tmp/run.txt" 2>&1
[ $? -eq 0 ] && ok || { bad "run with --input"; cat "$tmp/run.txt"; }

"$py" - "$tmp/out/out.npy" <<'PY' && ok || bad "out.npy equals the Python matmul"
import sys
from npy import read_npy
K, M, N = 150, 70, 530
shape, out = read_npy(sys.argv[1])
assert shape == (M, N), shape
lhsT = lambda k, m: ((k * 5 + m * 3) % 9) - 4
rhs = lambda k, n: ((k + 2 * n) % 7) * 0.5 - 1.5
for m in range(M):
    for n in range(N):
        ref = sum(lhsT(k, m) * rhs(k, n) for k in range(K))
        assert out[m * N + n] == ref, (m, n, out[m * N + n], ref)
PY

finish run_npy_roundtrip

#!/usr/bin/env bash
# neuronsim run matmul with .npy inputs (float32 and float64, written here with struct only):
# --output-dir writes out.npy whose values equal a matmul computed here in Python.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

python3 - "$tmp" <<'PY'
import struct, sys
tmp = sys.argv[1]
def write_npy(path, rows, cols, f, descr):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, rows, cols)
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    code = {'<f4': 'f', '<f8': 'd'}[descr]
    values = [f(i, j) for i in range(rows) for j in range(cols)]
    with open(path, 'wb') as out:
        out.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        out.write(struct.pack('<%d%s' % (len(values), code), *values))
K, M, N = 150, 70, 530
write_npy(tmp + '/lhsT.npy', K, M, lambda k, m: ((k * 5 + m * 3) % 9) - 4, '<f4')
write_npy(tmp + '/rhs.npy', K, N, lambda k, n: ((k + 2 * n) % 7) * 0.5 - 1.5, '<f8')
PY

"$bin" run matmul --input lhsT="$tmp/lhsT.npy" --input rhs="$tmp/rhs.npy" --output-dir "$tmp/out" --check \
  > "$tmp/run.txt" 2>&1
[ $? -eq 0 ] && ok || { bad "run with --input"; cat "$tmp/run.txt"; }

python3 - "$tmp/out/out.npy" <<'PY' && ok || bad "out.npy equals the Python matmul"
import ast, struct, sys
data = open(sys.argv[1], 'rb').read()
assert data[:6] == b'\x93NUMPY', 'magic'
major = data[6]
hlen = struct.unpack('<H', data[8:10])[0] if major == 1 else struct.unpack('<I', data[8:12])[0]
start = 10 if major == 1 else 12
header = ast.literal_eval(data[start:start + hlen].decode('latin1'))
assert header['descr'] == '<f4' and not header['fortran_order'], header
K, M, N = 150, 70, 530
assert tuple(header['shape']) == (M, N), header['shape']
out = struct.unpack('<%df' % (M * N), data[start + hlen:])
lhsT = lambda k, m: ((k * 5 + m * 3) % 9) - 4
rhs = lambda k, n: ((k + 2 * n) % 7) * 0.5 - 1.5
for m in range(M):
    for n in range(N):
        ref = sum(lhsT(k, m) * rhs(k, n) for k in range(K))
        assert out[m * N + n] == ref, (m, n, out[m * N + n], ref)
PY

finish run_npy_roundtrip

#!/usr/bin/env bash
# neuronsim asm end to end: tests/programs/add_matmul.nsasm on the interpreter gives w^T @ (a + b)
# (checked against values computed here), and bad inputs or files exit 2 with one error line.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"
prog=tests/programs/add_matmul.nsasm

# Inputs: a [64,32] float32, b [64,32] float64 (converted on load), w [64,16] float32; plus a
# wrongly shaped a. Values are multiples of 0.5 so every sum is exact in fp32.
"$py" - "$tmp" <<'EOF'
import sys
from npy import write_matrix
tmp = sys.argv[1]
write_matrix(tmp + '/a.npy', 64, 32, lambda i, j: ((i * 7 + j * 3) % 11) - 5, '<f4')
write_matrix(tmp + '/b.npy', 64, 32, lambda i, j: ((i + 2 * j) % 5) * 0.5, '<f8')
write_matrix(tmp + '/w.npy', 64, 16, lambda k, m: ((k * 3 + m) % 7) - 3, '<f4')
write_matrix(tmp + '/a_wrong.npy', 32, 64, lambda i, j: 0.0, '<f4')
EOF

# 1. The program runs on the interpreter and writes out.npy.
inputs=(--input "a=$tmp/a.npy" --input "b=$tmp/b.npy" --input "w=$tmp/w.npy")
if "$bin" asm "$prog" --interpret "${inputs[@]}" --output-dir "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"; then
  ok
else
  bad "interpreted run exited $? ($(cat "$tmp/stderr"))"
fi
if [ -s "$tmp/stderr" ]; then bad "interpreted run wrote to stderr: $(cat "$tmp/stderr")"; else ok; fi

# 2. out.npy holds w^T @ (a + b), computed here independently.
if "$py" - "$tmp/out/out.npy" <<'EOF'
import sys
from npy import read_npy
shape, got = read_npy(sys.argv[1])
assert shape == (16, 32), shape
a = lambda i, j: ((i * 7 + j * 3) % 11) - 5
b = lambda i, j: ((i + 2 * j) % 5) * 0.5
w = lambda k, m: ((k * 3 + m) % 7) - 3
bad = 0
for m in range(16):
    for n in range(32):
        want = sum(w(k, m) * (a(k, n) + b(k, n)) for k in range(64))
        if got[m * 32 + n] != want:
            if bad < 5:
                print('out[%d][%d] = %r, want %r' % (m, n, got[m * 32 + n], want))
            bad += 1
sys.exit(1 if bad else 0)
EOF
then ok; else bad "out.npy does not equal w^T @ (a + b)"; fi

# 3. Errors: exit 2, exactly one 'error:' line naming the culprit, nothing written.
expect_error missing-input "input tensor 'w' not given: --input w=FILE.npy of shape 64x16 (or --timing-only, which needs no values)" \
  asm "$prog" --interpret --input "a=$tmp/a.npy" --input "b=$tmp/b.npy" --output-dir "$tmp/out2"
if [ -e "$tmp/out2" ]; then bad "missing-input: wrote $tmp/out2"; else ok; fi
expect_error no-such-file "nope.nsasm" asm "$tmp/nope.nsasm" --interpret
expect_error python-kernel "^error: asm: examples/softmax.py:softmax_v1 is a Python kernel, not assembly; run it with neuronsim run FILE.py:KERNEL$" \
  asm examples/softmax.py:softmax_v1
printf 'tensor a [4] fp32 input\nvector memset dst=sbuf:fp32[0:1]@0[[1,4]] colour=red\n' >"$tmp/bad.nsasm"
expect_error bad-syntax "bad.nsasm:2: unknown field 'colour'" asm "$tmp/bad.nsasm" --interpret
printf 'gpsimd memset dst=psum:fp32[0:1]@0[[1,4]]\n' >"$tmp/invalid.nsasm"
expect_error invalid-program "instruction 0 at $tmp/invalid.nsasm:1 (memset): dst: GpSimd cannot access PSUM" \
  asm "$tmp/invalid.nsasm" --interpret
expect_error wrong-shape "tensor 'a' is declared \[64,32\]" \
  asm "$prog" --interpret --input "a=$tmp/a_wrong.npy" --input "b=$tmp/b.npy" --input "w=$tmp/w.npy"
expect_error not-an-input "tensor 'out' is not declared input" \
  asm "$prog" --interpret "${inputs[@]}" --input "out=$tmp/a.npy"
expect_error machine-geometry "instruction 5 at $prog:26 (activation): dst: bytes \[1024, 1152) outside the 1024-byte sbuf partition" \
  asm "$prog" --interpret "${inputs[@]}" --set sbuf_partition_bytes=1024
expect_error unknown-machine "trn3" asm "$prog" --interpret "${inputs[@]}" --machine trn3
expect_error interpret-timing-only "--timing-only and --interpret exclude each other" asm "$prog" --interpret --timing-only
expect_error interpret-trace "drop --trace" asm "$prog" --interpret "${inputs[@]}" --trace "$tmp/t.json"
expect_error unknown-option "unknown option --colour" asm "$prog" --colour red
expect_error two-files "expected one FILE" asm "$prog" "$prog"
expect_error bad-input-spec "--input 'a': expected NAME=VALUE" asm "$prog" --interpret --input a

# 4. A read of never-written SBUF is a warning naming the instruction, its file line and the
#    operand, not an error. (Errors and warnings name an instruction's line: FILE:LINE.)
printf 'tensor y [1,4] fp32 output\nvector tensor_copy dst=sbuf:fp32[0:1]@0x10[[1,4]] srcs=sbuf:fp32[0:1]@0x0[[1,4]]\nsync dma_copy queue=0 dst=hbm:fp32:y[0:1:4]@0[[1,4]] srcs=sbuf:fp32[0:1]@0x10[[1,4]]\n' >"$tmp/uninit.nsasm"
if err=$("$bin" asm "$tmp/uninit.nsasm" --interpret 2>&1 >/dev/null); then
  want="warning: instruction 0 at $tmp/uninit.nsasm:2 (tensor_copy) reads uninitialized memory in srcs[0]"
  if [ "$err" = "$want" ]; then ok; else bad "uninitialized read: stderr '$err', want '$want'"; fi
else
  bad "uninitialized read: exit $? ($err)"
fi

# 5. --help.
if "$bin" asm --help | grep -q -- "--output-dir"; then ok; else bad "asm --help"; fi

# 6. The timed model (default) runs the same program and reports time per engine.
if out=$("$bin" asm "$prog" "${inputs[@]}" --output-dir "$tmp/timed" 2>&1); then
  if printf '%s\n' "$out" | grep -q "^  tensor  *[0-9.]*  *[0-9.]*%  *1$"; then ok; else bad "timed totals: $out"; fi
  if cmp -s "$tmp/out/out.npy" "$tmp/timed/out.npy"; then ok; else bad "timed out.npy differs from the interpreter's"; fi
  # A wait nothing signals is a deadlock: exit 2, one line, nothing written.
  printf 'tensor y [1,4] fp32 output\nsemaphore s\nvector memset dst=sbuf:fp32[0:1]@0x0[[1,4]] value=1 wait=s>=1\nsync dma_copy queue=0 dst=hbm:fp32:y[0:1:4]@0[[1,4]] srcs=sbuf:fp32[0:1]@0x0[[1,4]]\n' >"$tmp/deadlock.nsasm"
  expect_error deadlock "deadlock: vector instruction 0 at $tmp/deadlock.nsasm:3 waits for semaphore s >= 1" \
    asm "$tmp/deadlock.nsasm" --output-dir "$tmp/deadlock_out"
  if [ -e "$tmp/deadlock_out" ]; then bad "deadlock: wrote $tmp/deadlock_out"; else ok; fi
  # A read not ordered after the write is a race: one warning naming both instructions.
  sed 's/ wait=s>=1//' "$tmp/deadlock.nsasm" >"$tmp/race.nsasm"
  err=$("$bin" asm "$tmp/race.nsasm" 2>&1 >/dev/null)
  if [ "$(printf '%s\n' "$err" | grep -c "^warning: race: .*instruction 0 at $tmp/race.nsasm:3 (memset.*instruction 1 at $tmp/race.nsasm:4 (dma_copy")" = 1 ] &&
    [ "$(printf '%s\n' "$err" | grep -c 'race: race')" = 0 ]; then ok; else bad "race warning: $err"; fi
else
  bad "timed run: $out"
fi

finish asm_program

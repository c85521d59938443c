#!/usr/bin/env bash
# The bad-input suite: every command refuses each kind of bad argument, file, shape, parameter or
# output path with one "error:" line naming the culprit (and the limit, for sizes), exit 2, quickly,
# and writes nothing. Each `kind` below is one regression; the count is printed at the end.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

f="$tmp/f"  # fixtures
w="$tmp/w"  # where outputs are asked for; must stay as the fixtures left it
mkdir -p "$f" "$w/dir" "$w/od/out.npy"
echo keep >"$w/existing.json"
ln -s existing.json "$w/link.json"
kinds=0
# kind NAME PATTERN ARGS...: one bad-input kind, refused.
kind() {
  kinds=$((kinds + 1))
  expect_error "$@"
}

# Fixtures: real .npy files from numpy, malformed ones by hand, programs, traces, machine files.
"$py" - "$f" <<'EOF'
import struct, sys
import numpy as np
f = sys.argv[1]
np.save(f + '/a.npy', np.ones((4, 4), np.float32))
np.save(f + '/i4.npy', np.ones((4, 4), np.int32))
np.save(f + '/be.npy', np.ones((4, 4), np.dtype('>f4')))
np.save(f + '/fortran.npy', np.asfortranarray(np.ones((4, 3), np.float32)))
np.save(f + '/big_shape_ok.npy', np.ones((3, 5), np.float32))

def raw(name, header, data=b'', major=1):
    text = header + ' ' * (63 - (len(header) + (10 if major == 1 else 12)) % 64) + '\n'
    length = struct.pack('<H' if major == 1 else '<I', len(text))
    open(f + '/' + name, 'wb').write(b'\x93NUMPY' + bytes([major, 0]) + length + text.encode() + data)

# 16 bytes of data under a header that declares (4, 2^62 + 1).
raw('huge_shape.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (4, %d), }" % (2**62 + 1), b'\0' * 16)
raw('over_limit.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (70000, 70000), }", b'\0' * 16)
raw('truncated.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", b'\0' * 60)
raw('extra.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", b'\0' * 68)
raw('malformed.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), 'shape': (2,)}", b'\0' * 64)
raw('nine_axes.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", b'\0' * 4)
raw('version9.npy', "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", b'\0' * 64, major=9)
# A v2 header length of 2^31: refused before any of it is read.
open(f + '/long_header.npy', 'wb').write(b'\x93NUMPY\x02\x00' + struct.pack('<I', 2**31) + b'{')
open(f + '/not_npy.npy', 'wb').write(b'this is not numpy at all')
EOF
printf 'tensor a [4] fp32 input\nvector memset dst=sbuf:fp32[0:1]@0[[1,4]] colour=red\n' >"$f/syntax.nsasm"
printf 'tensor a [100000,100000,100000] fp32 input\n' >"$f/huge_tensor.nsasm"
printf 'tensor a [65536,65536] fp32 input\ntensor b [65536,65536] fp32 output\n' >"$f/memory.nsasm"
printf 'tensor y [1,4] fp32 output\nvector memset dst=sbuf:fp32[0:1]@0x0[[1,4]] value=1\nsync dma_copy queue=0 dst=hbm:fp32:y[0:1:4]@0[[1,4]] srcs=sbuf:fp32[0:1]@0x0[[1,4]]\n' >"$f/race.nsasm"
printf 'tensor y [1,4] fp32 output\nvector tensor_copy dst=sbuf:fp32[0:1]@0x10[[1,4]] srcs=sbuf:fp32[0:1]@0x0[[1,4]]\nsync dma_copy queue=0 dst=hbm:fp32:y[0:1:4]@0[[1,4]] srcs=sbuf:fp32[0:1]@0x10[[1,4]]\n' >"$f/uninit.nsasm"
printf 'tensor y [1,4] fp32 output\nvector memset dst=sbuf:fp32[0:1]@0x0[[1,4]] value=1\n' >"$f/nostore.nsasm"
printf '{"params": {"dma_latency_ns": {"value": "fast", "source": "assumption: test"}}}\n' >"$f/bad_machine.json"
head -c 2000000 /dev/zero | tr '\0' ' ' >"$f/huge_machine.json"
echo '{"traceEvents": []}' >"$f/foreign_trace.json"
echo '{"traceEvents": [' >"$f/broken_trace.json"
"$bin" run matmul --shape lhsT=128x64 --shape rhs=128x64 --trace "$f/t.json" --summary-json "$f/s.json" >/dev/null 2>&1 ||
  bad "fixture trace"
echo '{"sweep": {"configurations": 1}, "results": []}' >"$f/sweep.json"
: >"$f/empty.nsasm"
mkdir "$f/dir.py"
printf 'import neuronsim\0\n' >"$f/binary.py"
"$py" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$w/socket"
mm=(run matmul --shape lhsT=128x64 --shape rhs=128x64)

# --- top level
kind "no command" "no command given" 
kind "unknown command" "unknown command 'frobnicate'" frobnicate
kind "unknown top-level option" "unknown option --frobnicate" --frobnicate

# --- run: arguments
kind "unknown kernel" "unknown kernel 'nope'" run nope
kind "no kernel" "expected a KERNEL" run
kind "unknown option with a value" "run matmul: unknown option --frobnicate" run matmul --frobnicate 3 --output-dir "$w/o1"
kind "unknown option last" "run matmul: unknown option --frobnicate" run matmul --frobnicate
kind "missing value swallows no flag" "--trace: needs a value, not the option '--check'" run matmul --trace --check
kind "missing value at the end" "--summary-json" run matmul --summary-json
kind "repeated scalar option" "--dtype given 2 times" run matmul --dtype bf16 --dtype fp32
kind "repeated flag" "--check given 2 times" run matmul --check --check
kind "options before KERNEL" "options go after KERNEL" run --dtype bf16 matmul
kind "stray argument" "unexpected argument 'extra'" run matmul extra
kind "parameter of another kernel" "unknown option --kernel-size" run matmul --kernel-size 2
kind "mistyped option" "run matmul: unknown option --dtyp (did you mean --dtype?)" run matmul --dtyp bf16
kind "mistyped parameter" "run matmul: unknown option --ntile (did you mean --n-tile?)" run matmul --ntile 256
kind "mistyped asm option" "asm: unknown option --inptu (did you mean --input?)" asm "$f/race.nsasm" --inptu a=b
kind "mistyped machine parameter" "--set pe_ghzz=1: unknown machine parameter 'pe_ghzz' (did you mean pe_ghz?)" \
  run matmul --set pe_ghzz=1
kind "bad dtype" "--dtype takes fp32 or bf16" run matmul --dtype fp64
kind "negative seed" "--seed takes a non-negative integer" run matmul --seed -1
kind "seed too large" "--seed takes a non-negative integer" run matmul --seed 99999999999999999999
kind "timing-only with check" "timing-only computes no outputs to --check" run matmul --timing-only --check
kind "timing-only with interpret" "exclude each other" run matmul --timing-only --interpret
kind "interpret with trace" "--interpret measures no time" run matmul --interpret --trace "$w/t.json"
kind "timing-only with output-dir" "drop --output-dir" run matmul --timing-only --output-dir "$w/o2"

# --- run: shapes
kind "bad shape text" "shape '4xq'" run matmul --shape lhsT=4xq --shape rhs=4x4
kind "zero extent" "shape '0x4'" run matmul --shape lhsT=0x4 --shape rhs=4x4
kind "shape over the element limit" "100000,100000,100000\]: 1000000000000000 elements, over the limit of 4294967296" \
  run avg_pooling_3d_backward --shape input_tensor=1x1x100000x100000x100000
kind "shape product overflows" "more than 2^63 elements, over the limit" \
  run matmul --shape lhsT=999999999999x999999999999 --shape rhs=4x4
kind "too many axes" "9 axes, over the limit of 8" run matmul --shape lhsT=1x1x1x1x1x1x1x1x1 --shape rhs=4x4
kind "output over the element limit" "output out has shape \[70000,70000\]" \
  run matmul --timing-only --shape lhsT=1x70000 --shape rhs=1x70000
kind "unknown input name" "no input named 'bias'" run matmul --shape bias=4
kind "shape given twice" "--shape lhsT given twice" run matmul --shape lhsT=4x4 --shape lhsT=4x4
kind "input and shape" "lhsT has both --input and --shape" run matmul --input lhsT="$f/a.npy" --shape lhsT=4x4
kind "input given twice" "--input lhsT given twice" run matmul --input lhsT="$f/a.npy" --input lhsT="$f/a.npy"
kind "kernel shape rule" "lhsT has shape \[4,5\] and rhs \[3,5\]" run matmul --shape lhsT=4x5 --shape rhs=3x5 \
  --output-dir "$w/o3" --summary-json "$w/s.json"
kind "more host memory than available" "needs about .* of host memory (.*) but .* is available" \
  run matmul --shape lhsT=65536x65536 --shape rhs=65536x65536

# --- run: parameters
kind "parameter overflow" "parameter padding value 9223372036854775807 is out of range (at most 16777216" \
  run avg_pooling_3d --padding 9223372036854775807
kind "parameter beyond int64" "parameter stride value 99999999999999999999 is out of range" run conv3d --stride 99999999999999999999
kind "parameter not an integer" "parameter stride takes integers, not 'abc'" run conv3d --stride abc
kind "parameter count" "kernel_size takes 1 or 3 integers" run avg_pooling_3d --kernel-size 1,2
kind "enum parameter" "data_format takes one of NCDHW, NDHWC, not 'XYZ'" run avg_pooling_3d --data-format XYZ
kind "bool parameter" "compute_dx takes true or false, not 'maybe'" run conv3d_bwd --compute-dx maybe
kind "pooling padding rule" "padding 3 exceeds kernel_size/2" run avg_pooling_3d --kernel-size 2 --padding 3

# --- run: input files
kind "missing npy" "missing.npy: cannot open" run matmul --input lhsT="$f/missing.npy" --shape rhs=4x4
kind "directory as npy" "cannot open: it is a directory" run matmul --input lhsT="$f" --shape rhs=4x4
kind "npy bad magic" "not a .npy file (bad magic)" run matmul --input lhsT="$f/not_npy.npy"
kind "device as npy (read no further than the magic)" "/dev/zero: not a .npy file" run matmul --input lhsT=/dev/zero
kind "npy header over the limit" "npy header of 2147483648 bytes, over the limit of 65536" \
  run matmul --input lhsT="$f/long_header.npy"
kind "npy shape over the element limit" "extent over the limit of 4294967296" run matmul --input lhsT="$f/huge_shape.npy"
kind "npy shape product over the limit" "4900000000 elements, over the limit of 4294967296" \
  run matmul --input lhsT="$f/over_limit.npy"
kind "npy too many axes" "more than 8 axes" run matmul --input lhsT="$f/nine_axes.npy"
kind "npy truncated data" "truncated data: shape (4, 4) needs 64 bytes, file has 60" run matmul --input lhsT="$f/truncated.npy"
kind "npy extra data" "does not match the data: 68 bytes for 64" run matmul --input lhsT="$f/extra.npy"
kind "npy repeated key" "malformed npy header: an unexpected or repeated key 'shape'" run matmul --input lhsT="$f/malformed.npy"
kind "npy version" "unsupported .npy format version 9.0" run matmul --input lhsT="$f/version9.npy"
kind "npy integer dtype" "unsupported dtype '<i4'" run matmul --input lhsT="$f/i4.npy"
kind "npy big-endian" "unsupported dtype '>f4'" run matmul --input lhsT="$f/be.npy"
kind "npy Fortran order" "Fortran-order arrays are not supported" run matmul --input lhsT="$f/fortran.npy"

# --- run FILE.py:KERNEL: the file
kind "python kernel directory" "dir.py: cannot open: it is a directory" run "$f/dir.py:k"
kind "python kernel binary file" "Python file '.*binary.py' is not a text file (it holds a NUL byte)" run "$f/binary.py:k"

# --- run: machine
kind "unknown machine" "--machine nosuchmachine: not a preset" run matmul --machine nosuchmachine
kind "machine file too large" "machine file '.*huge_machine.json' is 1.9 MiB, over the limit of 1.0 MiB" \
  run matmul --machine "$f/huge_machine.json"
kind "machine directory" "cannot open: it is a directory" run matmul --machine "$f"
printf '{"params": {\n' >"$f/broken_machine.json"
kind "machine not JSON" "^error: .*broken_machine.json: not valid JSON (parse error at line 2, column 1: " \
  run matmul --machine "$f/broken_machine.json"
kind "machine device" "machine file '/dev/zero' is not a text file" run matmul --machine /dev/zero
kind "machine value type" "dma_latency_ns" run matmul --machine "$f/bad_machine.json"
kind "machine file of another kind" "s.json: not a machine file: it has no \"params\" object" \
  run matmul --machine "$f/s.json"
kind "unknown machine key" "unknown machine parameter 'warp_drive'" run matmul --set warp_drive=9
kind "machine value text" "is not a number" run matmul --set dma_latency_ns=fast
kind "machine too large to simulate" "run matmul: needs about .* (SBUF and PSUM .*) but .* is available" \
  run matmul --timing-only --set partitions=1024 --set sbuf_partition_bytes=1073741824
kind "machine geometry out of range" "--set: partitions = 100000000: must be within \[1, 1024\]" \
  run matmul --timing-only --set partitions=100000000

# --- run: output paths, all checked before the run
kind "output directory missing" "directory '.*nodir' does not exist" "${mm[@]}" --summary-json "$w/nodir/s.json"
kind "output is a directory" "--trace .*/dir: is a directory" "${mm[@]}" --trace "$w/dir"
kind "output is a socket" "--csv .*/socket: is a socket" "${mm[@]}" --csv "$w/socket"
kind "output-dir is a file" "--output-dir .*existing.json: exists and is not a directory" \
  "${mm[@]}" --output-dir "$w/existing.json"
kind "output-dir file is a directory" "--output-dir .*/od/out.npy: is a directory" \
  "${mm[@]}" --output-dir "$w/od" --summary-json "$w/s2.json"
kind "two options, one file" "--trace .*/same.json and --summary-json .*/same.json name the same file" \
  "${mm[@]}" --trace "$w/same.json" --summary-json "$w/same.json"
kind "one file through a symlink" "name the same file" \
  "${mm[@]}" --summary-json "$w/existing.json" --trace "$w/link.json"
kind "output-dir file and a flag" "--dump-asm .*/od2/out.npy and --output-dir .*/od2/out.npy name the same file" \
  "${mm[@]}" --dump-asm "$w/od2/out.npy" --output-dir "$w/od2"
kind "empty output name" "--trace: needs a file name" "${mm[@]}" --trace ""

# --- run --strict, asm --strict: races and never-written reads become errors, nothing written
kind "strict race" "asm .*race.nsasm: --strict: 1 race and 0 reads of never-written memory (first: race: " \
  asm "$f/race.nsasm" --strict --output-dir "$w/o4" --summary-json "$w/s3.json"
kind "strict unwritten output" "asm .*nostore.nsasm: --strict: output 'y' is never written (no instruction stores to it)" \
  asm "$f/nostore.nsasm" --strict --output-dir "$w/o6"
if err=$("$bin" asm "$f/nostore.nsasm" 2>&1 >/dev/null) &&
  [ "$err" = "warning: output 'y' is never written (no instruction stores to it)" ]; then ok; else
  bad "unwritten output: want one warning, got: $err"
fi
kind "strict uninitialized read" "--strict: 0 races and 1 read of never-written memory (first: instruction 0 at .*uninit.nsasm:2 (tensor_copy)" \
  asm "$f/uninit.nsasm" --interpret --strict --output-dir "$w/o5"

# --- asm
kind "asm no file" "asm: expected one FILE, got 0" asm
kind "asm two files" "asm: expected one FILE, got 2" asm "$f/race.nsasm" "$f/race.nsasm"
kind "asm missing file" "nope.nsasm: cannot open" asm "$f/nope.nsasm"
kind "asm directory" "cannot open: it is a directory" asm "$f"
kind "asm binary file" "assembly file '/dev/zero' is not a text file" asm /dev/zero
kind "asm empty file" "asm .*empty.nsasm: no instructions (a program runs at least one)" asm "$f/empty.nsasm"
kind "asm syntax" "syntax.nsasm:2: unknown field 'colour'" asm "$f/syntax.nsasm" --interpret
kind "asm tensor over the element limit" "huge_tensor.nsasm:1: tensor 'a' has shape \[100000,100000,100000\]: 1000000000000000 elements, over the limit of 4294967296 per tensor" \
  asm "$f/huge_tensor.nsasm" --timing-only
kind "asm more host memory than available" "asm .*memory.nsasm: needs about .* of host memory" \
  asm "$f/memory.nsasm" --input "a=$f/a.npy" --output-dir "$w/o6"
kind "asm input shape from the header" "a.npy has shape \[4,4\] but tensor 'a' is declared \[65536,65536\]" \
  asm "$f/memory.nsasm" --timing-only --input "a=$f/a.npy"
kind "asm unknown tensor" "declares no tensor 'zz'" asm "$f/race.nsasm" --input "zz=$f/a.npy"
kind "asm unknown option" "asm: unknown option --colour" asm "$f/race.nsasm" --colour red
kind "asm dump-asm is run's" "asm: unknown option --dump-asm" asm "$f/race.nsasm" --dump-asm "$w/x.nsasm"

# --- report, view, diff
kind "report missing trace" "missing.json: cannot open" report "$f/missing.json"
kind "report run summary" "s.json is a run summary (from --summary-json), not a trace; write one with neuronsim run or asm ... --trace FILE.json" \
  report "$f/s.json"
kind "view run summary" "s.json is a run summary" view "$f/s.json" -o "$w/v.html"
kind "diff run summary" "s.json is a run summary" diff "$f/t.json" "$f/s.json"
kind "report sweep result" "sweep.json is a sweep result (from sweep --json), not a trace" report "$f/sweep.json"
kind "report not JSON" "trace '.*broken_trace.json' is not valid JSON" report "$f/broken_trace.json"
kind "report foreign trace" "has no neuronsim section" report "$f/foreign_trace.json"
kind "report device" "trace '/dev/zero' is not a text file" report /dev/zero
kind "report bad top" "report: --top takes a positive integer, not '0'" report "$f/t.json" --top 0
kind "report csv into a missing directory" "--csv .*/nodir/r.csv: directory" report "$f/t.json" --csv "$w/nodir/r.csv"
kind "report two traces" "report: expected one TRACE.json, got 2 (try neuronsim report --help)" report "$f/t.json" "$f/t.json"
kind "view output is a directory" "-o .*/dir: is a directory" view "$f/t.json" -o "$w/dir"
ln -s t.json "$f/t_link.json"
kind "view output is the trace" "trace .*/t.json and -o .*/t.json name the same file" view "$f/t.json" -o "$f/t.json"
kind "report csv is the trace through a symlink" "trace .*/t.json and --csv .*/t_link.json name the same file" \
  report "$f/t.json" --csv "$f/t_link.json"
[ "$(head -c 15 "$f/t.json")" = '{"traceEvents":' ] && ok || bad "the trace was overwritten"
kind "view no trace" "view: expected one TRACE.json, got 0 (try neuronsim view --help)" view
kind "diff one trace" "diff: expected two traces A.json B.json, got 1 (try neuronsim diff --help)" diff "$f/t.json"
kind "diff unknown option" "diff: unknown option --frobnicate" diff "$f/t.json" "$f/t.json" --frobnicate
kind "diff names the first missing trace first" "nope_a.json: cannot open" diff "$f/nope_a.json" "$f/nope_b.json"

# --- list, calibrate
kind "list unknown kernel" "unknown kernel 'foo' (known: matmul, " list foo
kind "calibrate argument" "calibrate: unexpected argument 'foo'" calibrate foo
kind "calibrate unknown option" "calibrate: unknown option --frobnicate" calibrate --frobnicate
kind "calibrate missing value" "calibrate: --machine: needs a value, not the option '--set'" calibrate --machine --set x=1
kind "calibrate repeated option" "calibrate: --machine given 2 times" calibrate --machine trn1 --machine trn2

# --- standard output that cannot be written
kinds=$((kinds + 1))
if err=$("$bin" list 2>&1 >/dev/full); then bad "list >/dev/full exited 0"; else
  [ "$err" = "error: cannot write standard output: No space left on device" ] && ok || bad "list >/dev/full: $err"
fi

# Nothing written anywhere by the refused commands: the output area holds the fixtures only.
left=$(cd "$w" && find . -mindepth 1 | sort | tr '\n' ' ')
want=". ./dir ./existing.json ./link.json ./od ./od/out.npy ./socket "
[ "$left " = "$(printf '%s' "$want" | sed 's/^\. //') " ] && ok || bad "files left behind: '$left'"
[ "$(cat "$w/existing.json")" = keep ] && ok || bad "existing.json was changed"

echo "bad_inputs: $kinds kinds of bad input"
finish bad_inputs

#!/usr/bin/env bash
# Output files: special files written in place (never replaced), symlinks followed, all outputs
# committed together or none, temporaries removed on SIGTERM; timing-only runs hold no tensor data;
# --strict passes clean runs; `run KERNEL --help` lists every parameter; pooling strides larger
# than the input run.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"
mm=(run matmul --shape lhsT=128x64 --shape rhs=128x96)

# 1. A character device is written in place, not replaced by a regular file (we may be root).
if "$bin" "${mm[@]}" --trace /dev/null --summary-json /dev/null >/dev/null 2>"$tmp/err"; then
  bad "two options naming /dev/null were accepted"
else
  grep -q "name the same file" "$tmp/err" && ok || bad "/dev/null twice: $(cat "$tmp/err")"
fi
"$bin" "${mm[@]}" --trace "$tmp/t.json" >/dev/null 2>&1 || bad "trace fixture"
"$bin" "${mm[@]}" --summary-json /dev/null >/dev/null 2>"$tmp/err" && [ -c /dev/null ] && ok ||
  bad "--summary-json /dev/null: $(cat "$tmp/err"); $(ls -l /dev/null)"
"$bin" view "$tmp/t.json" -o /dev/null >/dev/null 2>"$tmp/err" && [ -c /dev/null ] && ok ||
  bad "view -o /dev/null: $(cat "$tmp/err"); $(ls -l /dev/null)"

# 2. A FIFO is written in place: the reader gets the summary, the FIFO stays a FIFO.
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from_fifo" &
reader=$!
"$bin" "${mm[@]}" --summary-json "$tmp/fifo" >/dev/null 2>"$tmp/err" || bad "summary into a FIFO: $(cat "$tmp/err")"
wait $reader
[ -p "$tmp/fifo" ] && "$py" -c 'import json,sys; assert json.load(open(sys.argv[1]))["kernel"] == "matmul"' \
  "$tmp/from_fifo" && ok || bad "FIFO: not a FIFO any more, or no summary read from it"

# 3. A symlink is followed: the file it names gets the content, the link stays.
echo old >"$tmp/real.json"
ln -s real.json "$tmp/link.json"
"$bin" "${mm[@]}" --summary-json "$tmp/link.json" >/dev/null 2>&1
[ -L "$tmp/link.json" ] && grep -q '"kernel": "matmul"' "$tmp/real.json" && ok || bad "symlink replaced or not followed"

# 4. All or none: a failure at the last write leaves no output, new or replaced.
echo keep >"$tmp/keep.json"
bwd=(run conv3d_bwd --shape dy=1x4x3x4x5 --shape x_in=1x6x3x4x5 --shape filters=1x1x1x6x4)
expect_error "full device at the end" "--summary-json /dev/full: cannot write: No space left on device" \
  "${bwd[@]}" --output-dir "$tmp/od" --trace "$tmp/keep.json" --summary-json /dev/full
[ ! -e "$tmp/od" ] && [ "$(cat "$tmp/keep.json")" = keep ] && ok || bad "outputs written before the failing one: $(ls "$tmp")"
[ -z "$(find "$tmp" /tmp -maxdepth 1 -name '.*neuronsim-*' 2>/dev/null)" ] && ok || bad "temporaries left: $(ls -a "$tmp")"

# 5. SIGTERM while the outputs are staged (blocked opening a FIFO nobody reads) removes every temporary.
mkdir "$tmp/sig"
mkfifo "$tmp/sig/blocked"
"$bin" "${mm[@]}" --trace "$tmp/sig/t.json" --csv "$tmp/sig/blocked" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -n "$(find "$tmp/sig" -name '.t.json.neuronsim-*')" ] && break; sleep 0.1; done
staged=$(find "$tmp/sig" -name '.t.json.neuronsim-*')
kill -TERM $pid
wait $pid
status=$?
[ -n "$staged" ] && ok || bad "SIGTERM: the trace was never staged"
[ "$status" = 143 ] && [ "$(ls -A "$tmp/sig")" = blocked ] && ok || bad "SIGTERM: exit $status, left: $(ls -A "$tmp/sig")"

# 6. Timing-only holds no tensor data: an unused 20000x20000 asm tensor and a 1 GiB .npy input
#    whose data is never read (peak memory well below their size).
peak_mib() { "$py" -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$@"; }
printf 'tensor big [20000,20000] fp32 input\ntensor y [1,4] fp32 output\nvector memset dst=sbuf:fp32[0:1]@0x0[[1,4]] value=1\nsync dma_copy queue=0 dst=hbm:fp32:y[0:1:4]@0[[1,4]] srcs=sbuf:fp32[0:1]@0x0[[1,4]]\n' >"$tmp/unused.nsasm"
peak=$(peak_mib "$bin" asm "$tmp/unused.nsasm" --timing-only) && [ "$peak" -lt 400 ] && ok ||
  bad "asm --timing-only with an unused 1.6 GB tensor peaked at ${peak:-?} MiB"
"$py" -c 'import numpy as np, sys; np.lib.format.open_memmap(sys.argv[1], "w+", np.float32, (16384, 16384))' "$tmp/big.npy"
peak=$(peak_mib "$bin" run matmul --timing-only --input "lhsT=$tmp/big.npy" --shape rhs=16384x128) && [ "$peak" -lt 400 ] && ok ||
  bad "run --timing-only with a 1 GiB input peaked at ${peak:-?} MiB"

# 7. --strict passes a clean run (and --check still checks).
expect_check "strict clean run" run matmul --strict --check
"$py" -c 'import numpy as np, sys; np.save(sys.argv[1], np.linspace(-2, 2, 32 * 64, dtype=np.float32).reshape(32, 64))' "$tmp/x.npy"
"$bin" asm tests/programs/causal_softmax.nsasm --strict --input "x=$tmp/x.npy" --output-dir "$tmp/softmax" >/dev/null 2>&1 &&
  [ -e "$tmp/softmax/y.npy" ] && ok || bad "asm --strict on a clean program"

# 8. `run KERNEL --help` lists every parameter `list` shows for it.
for kernel in $("$bin" list | grep -E '^[a-z0-9_]+$'); do
  help=$("$bin" run "$kernel" --help)
  missing=""
  for flag in $("$bin" list | awk -v k="$kernel" '/^[a-z0-9_]+$/ {on = ($1 == k)} on && /^  --/ {print $1}'); do
    printf '%s\n' "$help" | grep -q -- "$flag " || missing="$missing $flag"
  done
  [ -z "$missing" ] && printf '%s\n' "$help" | grep -q -- "--strict" && ok || bad "run $kernel --help lacks$missing"
done

# 9. Pooling strides larger than the input are legal (PyTorch): one window per axis.
for kernel in avg_pooling_3d max_pooling_3d avg_pooling_3d_backward max_pooling_3d_backward; do
  expect_check "$kernel stride 70000" run "$kernel" --shape input_tensor=1x2x5x6x7 --kernel-size 2 --stride 70000,3,9 --check
done

finish outputs

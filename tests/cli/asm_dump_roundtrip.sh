#!/usr/bin/env bash
# Programs dumped by `neuronsim run KERNEL --dump-asm` run through `neuronsim asm` unchanged:
# every registered kernel gives the same simulated time, and matmul the same output bits.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

# total_ns from a summary JSON.
summary_ns() { "$py" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["total_ns"])' "$1"; }

kernels=$("$bin" list | grep -E '^[a-z0-9_]+$')
[ -n "$kernels" ] || bad "neuronsim list shows no kernels"
for kernel in $kernels; do
  for dtype in fp32 bf16; do
    name="$kernel-$dtype"
    if ! "$bin" run "$kernel" --dtype "$dtype" --timing-only --dump-asm "$tmp/$name.nsasm" \
      --summary-json "$tmp/$name.json" >/dev/null 2>"$tmp/err"; then
      bad "$name: run failed: $(cat "$tmp/err")"
      continue
    fi
    if ! out=$("$bin" asm "$tmp/$name.nsasm" --timing-only --summary-json "$tmp/$name.asm.json" 2>&1); then
      bad "$name: asm of the dump failed: $out"
      continue
    fi
    want=$(summary_ns "$tmp/$name.json")
    got=$(summary_ns "$tmp/$name.asm.json")
    if [ "$want" = "$got" ]; then ok; else bad "$name: asm $got ns, run $want ns"; fi
  done
done

# matmul with given inputs: run and asm of its dump write the same bits.
"$py" - "$tmp" <<'EOF'
import sys
from npy import write_matrix
write_matrix(sys.argv[1] + '/lhsT.npy', 192, 96, lambda i, j: ((i * 5 + j) % 9) * 0.25 - 1)
write_matrix(sys.argv[1] + '/rhs.npy', 192, 640, lambda i, j: ((i + j * 3) % 7) * 0.5 - 1.5)
EOF
inputs=(--input "lhsT=$tmp/lhsT.npy" --input "rhs=$tmp/rhs.npy")
if "$bin" run matmul "${inputs[@]}" --output-dir "$tmp/run" --dump-asm "$tmp/mm.nsasm" >/dev/null 2>"$tmp/err" &&
  "$bin" asm "$tmp/mm.nsasm" "${inputs[@]}" --output-dir "$tmp/asm" >/dev/null 2>>"$tmp/err"; then
  if cmp -s "$tmp/run/out.npy" "$tmp/asm/out.npy"; then ok; else bad "matmul: asm out.npy differs from run's"; fi
else
  bad "matmul with inputs: $(cat "$tmp/err")"
fi

finish asm_dump_roundtrip

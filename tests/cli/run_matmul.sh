#!/usr/bin/env bash
# neuronsim run matmul: --check passes on the default and odd shapes in fp32 and bf16, the
# summary JSON has the DESIGN.md keys, --dump-asm gives a program `neuronsim asm` runs, and
# --trace writes JSON. Also `neuronsim list` names matmul.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

"$bin" list > "$tmp/list.txt" 2>&1 && grep -q '^matmul' "$tmp/list.txt" && ok || bad "list names matmul"

"$bin" run matmul --check > "$tmp/default.txt" 2>&1
[ $? -eq 0 ] && grep -q 'check: normalized error .*: ok' "$tmp/default.txt" && ok || { bad "default --check"; cat "$tmp/default.txt"; }

"$bin" run matmul --shape lhsT=130x129 --shape rhs=130x513 --check --seed 3 > "$tmp/odd.txt" 2>&1
[ $? -eq 0 ] && ok || { bad "odd fp32 --check"; cat "$tmp/odd.txt"; }

"$bin" run matmul --dtype bf16 --shape lhsT=260x200 --shape rhs=260x700 --check \
  --summary-json "$tmp/summary.json" --dump-asm "$tmp/prog.nsasm" --trace "$tmp/trace.json" > "$tmp/bf16.txt" 2>&1
[ $? -eq 0 ] && ok || { bad "bf16 --check"; cat "$tmp/bf16.txt"; }

"$py" - "$tmp/summary.json" <<'PY' && ok || bad "summary keys"
import json, sys
s = json.load(open(sys.argv[1]))
keys = ["kernel", "machine", "dtype", "total_ns", "instructions", "engines", "dma", "flops", "mfu_percent",
        "hbm_bytes", "mbu_percent", "roofline_ns", "roofline_percent", "host_seconds", "sim_instructions_per_second"]
missing = [k for k in keys if k not in s]
assert not missing, missing
assert s["kernel"] == "matmul" and s["dtype"] == "bf16", s
assert s["flops"] == 2 * 260 * 200 * 700, s["flops"]
for e in ["tensor", "vector", "scalar", "gpsimd", "sync"]:
    assert set(["busy_ns", "active_percent", "instructions"]) <= set(s["engines"][e]), e
assert set(["bytes", "transfers", "active_percent", "achieved_gbps"]) <= set(s["dma"])
assert 0 < s["roofline_percent"] <= 100.0 + 1e-9, s["roofline_percent"]
PY

"$py" -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/trace.json" && ok || bad "trace is JSON"
"$bin" asm "$tmp/prog.nsasm" --timing-only > "$tmp/asm.txt" 2>&1 && ok || { bad "dumped asm runs"; cat "$tmp/asm.txt"; }

"$bin" run matmul --timing-only --shape lhsT=1024x512 --shape rhs=1024x2048 --dtype bf16 > "$tmp/timing.txt" 2>&1
[ $? -eq 0 ] && grep -q 'MFU' "$tmp/timing.txt" && ok || { bad "timing-only"; cat "$tmp/timing.txt"; }

"$bin" run matmul --help > "$tmp/help.txt" 2>&1 && grep -q 'lhsT' "$tmp/help.txt" && ok || bad "run matmul --help"

finish run_matmul

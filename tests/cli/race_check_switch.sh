#!/usr/bin/env bash
# --no-race-check changes host time only: run (timing-only on the one-thread path, with numerics,
# with a trace), a Python kernel and sweep give the same summaries, outputs, traces and table
# rows as with race detection, on trn2 and trn1; the switch meets --strict and --interpret with
# one error line.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

# same_json NAME A B: equal after strip_host.
same_json() {
  [ "$(strip_host "$2")" = "$(strip_host "$3")" ] && ok || bad "$1: $(basename "$2") differs with --no-race-check"
}

# both NAME ARGS...: `$bin ARGS` with and without --no-race-check, its summary JSON compared.
both() {
  local name=$1
  shift
  "$bin" "$@" --summary-json "$tmp/$name.on.json" >/dev/null 2>"$tmp/$name.err" &&
    "$bin" "$@" --no-race-check --summary-json "$tmp/$name.off.json" >/dev/null 2>>"$tmp/$name.err" ||
    { bad "$name: $(cat "$tmp/$name.err")"; return; }
  same_json "$name" "$tmp/$name.on.json" "$tmp/$name.off.json"
}

# Timing-only and untraced: the one-thread path.
for machine in trn2 trn1; do
  both "matmul_$machine" run matmul --dtype bf16 --shape lhsT=777x300 --shape rhs=777x513 --timing-only --machine $machine
  both "conv3d_bwd_$machine" run conv3d_bwd --shape dy=1x32x6x10x10 --shape x_in=1x32x6x10x10 \
    --shape filters=3x3x3x32x32 --padding 1 --dtype bf16 --timing-only --machine $machine
  both "max_pool_bwd_$machine" run max_pooling_3d_backward --kernel-size 3 --stride 2 --padding 1 \
    --shape input_tensor=2x9x7x6x5 --timing-only --machine $machine
  both "convt_$machine" run conv3d_transpose --shape x_in=1x64x4x8x8 --shape filters=2x2x2x64x32 --stride 2 \
    --dtype bf16 --timing-only --machine $machine
done
both tutorial run matmul_tutorial --variant t1_optimized --dtype bf16 --timing-only
both softmax_py run examples/softmax.py:softmax_v2 --shape x=300x200 --timing-only

# With numerics: the same outputs, bit for bit.
for switch in "" --no-race-check; do
  "$bin" run conv3d_bwd --shape dy=1x4x3x4x5 --shape x_in=1x6x3x4x5 --shape filters=1x1x1x6x4 $switch \
    --summary-json "$tmp/numerics$switch.json" --output-dir "$tmp/out$switch" >/dev/null 2>&1 || bad "numerics $switch"
done
same_json numerics "$tmp/numerics.json" "$tmp/numerics--no-race-check.json"
for f in dx dw db; do cmp -s "$tmp/out/$f.npy" "$tmp/out--no-race-check/$f.npy" && ok || bad "numerics: $f.npy differs"; done

# A trace and no race check: the run still works and records the same trace.
for switch in "" --no-race-check; do
  "$bin" run matmul --shape lhsT=300x200 --shape rhs=300x260 --timing-only $switch \
    --trace "$tmp/t$switch.json" >/dev/null 2>&1 || bad "trace $switch"
done
same_json trace "$tmp/t.json" "$tmp/t--no-race-check.json"

# sweep: the same table and the same results, host cost and the header's race_check aside.
sweep=(sweep conv3d_bwd --shape dy=1x32x6x10x10 --shape x_in=1x32x6x10x10 --shape filters=3x3x3x32x32
  --param padding=1 --dtype bf16 --param dw_overlap=auto,off,spread --param dx_psum_buffers=auto,2 --jobs 2)
"$bin" "${sweep[@]}" --json "$tmp/sweep.on.json" --csv "$tmp/sweep.on.csv" >"$tmp/sweep.on.txt" 2>/dev/null &&
  "$bin" "${sweep[@]}" --no-race-check --json "$tmp/sweep.off.json" --csv "$tmp/sweep.off.csv" \
    >"$tmp/sweep.off.txt" 2>/dev/null || bad "sweep"
# The same rows; the title says the race check was off, so a pasted table says it too.
cmp -s <(tail -n +2 "$tmp/sweep.on.txt") <(tail -n +2 "$tmp/sweep.off.txt") && ok || bad "sweep: the tables differ"
[ "$(head -1 "$tmp/sweep.off.txt")" = "$(head -1 "$tmp/sweep.on.txt" | sed 's/(bf16)/(bf16, no race check)/')" ] &&
  ! grep -q 'race check' "$tmp/sweep.on.txt" && ok ||
  bad "sweep: titles $(head -1 "$tmp/sweep.on.txt") / $(head -1 "$tmp/sweep.off.txt")"
same_json sweep "$tmp/sweep.on.json" "$tmp/sweep.off.json"
"$py" - "$tmp" <<'PY' && ok || bad "sweep: CSV rows differ, or the header does not say race_check"
import csv, json, sys
tmp = sys.argv[1]
def rows(name):
    return [{k: v for k, v in r.items() if k not in ("host_seconds", "peak_rss_bytes")}
            for r in csv.DictReader(open(f"{tmp}/sweep.{name}.csv"))]
assert rows("on") == rows("off") and len(rows("on")) == 6
assert sum(r["status"] == "ok" for r in rows("on")) >= 4
assert json.load(open(f"{tmp}/sweep.on.json"))["sweep"]["race_check"] is True
assert json.load(open(f"{tmp}/sweep.off.json"))["sweep"]["race_check"] is False
PY
# Shards with and without race detection are different sweeps. A shard written before race_check
# was recorded (no such field) ran with race detection, the only mode then.
for s in 1 2; do
  for switch in "" --no-race-check; do
    "$bin" sweep matmul --param mode=auto,resident --shard $s/2 --jobs 1 $switch --json "$tmp/shard$s$switch.json" \
      >/dev/null 2>&1 || bad "shard $s $switch"
  done
done
"$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["sweep"]["race_check"]; json.dump(d, open(sys.argv[2], "w"))' \
  "$tmp/shard1.json" "$tmp/old1.json"
"$bin" sweep merge "$tmp/shard1.json" "$tmp/shard2.json" --json "$tmp/merged.json" >"$tmp/merged.txt" &&
  "$bin" sweep merge "$tmp/old1.json" "$tmp/shard2.json" --json "$tmp/merged.old.json" >"$tmp/merged.old.txt" &&
  cmp -s "$tmp/merged.txt" "$tmp/merged.old.txt" && [ "$(strip_host "$tmp/merged.json")" = "$(strip_host "$tmp/merged.old.json")" ] &&
  "$py" -c 'import json, sys; assert json.load(open(sys.argv[1]))["sweep"]["race_check"] is True' "$tmp/merged.old.json" &&
  ok || bad "merge of a shard without race_check and a checked one"
"$bin" sweep merge "$tmp/shard1--no-race-check.json" "$tmp/shard2--no-race-check.json" >"$tmp/merged.off.txt" &&
  grep -q '^matmul on trn2 (fp32, no race check): 2 of 2 configurations$' "$tmp/merged.off.txt" && ok ||
  bad "merge of unchecked shards: $(head -1 "$tmp/merged.off.txt")"
expect_error "merge of mixed race checks" \
  "sweep merge: .*/shard2--no-race-check.json: its race_check is false but .*/shard1.json's is true: the shards of one sweep run with the same race check" \
  sweep merge "$tmp/shard1.json" "$tmp/shard2--no-race-check.json"
expect_error "merge of a shard without race_check and an unchecked one" \
  "sweep merge: .*/old1.json: its race_check is true but .*/shard2--no-race-check.json's is false: .*(a file without race_check ran with it" \
  sweep merge "$tmp/shard2--no-race-check.json" "$tmp/old1.json"
"$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); d["sweep"]["race_check"] = "off"; json.dump(d, open(sys.argv[2], "w"))' \
  "$tmp/shard1.json" "$tmp/bad1.json"
expect_error "merge of a non-boolean race_check" 'sweep merge: .*/bad1.json: its race_check "off" is not true or false' \
  sweep merge "$tmp/bad1.json" "$tmp/shard2.json"

expect_error "strict without race check" "run: --strict makes races errors but --no-race-check detects none" \
  run matmul --strict --no-race-check
expect_error "interpret without race check" "run: --interpret detects no races; drop --no-race-check" \
  run matmul --interpret --no-race-check
expect_error "python: strict without race check" "run: --strict makes races errors but --no-race-check detects none" \
  run examples/softmax.py:softmax_v2 --strict --no-race-check

finish race_check_switch

#!/usr/bin/env bash
# neuronsim sweep: a grid with failing configurations run on one machine, and the same grid run
# as 3 shards through GNU parallel and merged, give the same table, CSV and JSON (host time and
# memory aside); failures carry their reason; progress goes to stderr, as lines or as a bar.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

# t1_optimized's default blocks need K a multiple of 1024: its three configurations fail.
sweep=(sweep matmul_tutorial --shape lhsT=256x256 --shape rhs=256x512 --dtype bf16
  --param variant=t1_tiled,t1_hoisted,t2_tiled,t2_hoisted,t1_optimized --param loop_buffers=1,2,auto)
"$bin" "${sweep[@]}" --jobs 2 --json "$tmp/one.json" --csv "$tmp/one.csv" >"$tmp/one.txt" 2>"$tmp/one.err"
rc=$?
[ "$rc" = 0 ] && ok || { bad "single sweep exit $rc"; cat "$tmp/one.err"; }
[ "$(grep -c '^sweep: [0-9]*/15 ' "$tmp/one.err")" = 15 ] && ok || bad "one progress line per configuration"
grep -q '15 of 15 configurations, 3 failed' "$tmp/one.txt" && ok || bad "title: $(head -1 "$tmp/one.txt")"
[ "$(grep -c "failed: matmul_tutorial: t1_optimized needs K (lhsT axis 0) a multiple of 1024" "$tmp/one.txt")" = 3 ] && ok ||
  bad "failed rows give the reason"

parallel --will-cite -j3 "$bin" "${sweep[@]}" --jobs 1 --shard {}/3 --json "$tmp/shard{}.json" \
  ">$tmp/shard{}.txt" "2>/dev/null" ::: 1 2 3 && ok || bad "parallel shards"
grep -q '5 of 15 configurations (shard 2/3)' "$tmp/shard2.txt" && ok || bad "shard title: $(head -1 "$tmp/shard2.txt")"
"$bin" sweep merge "$tmp"/shard3.json "$tmp"/shard1.json "$tmp"/shard2.json --json "$tmp/merged.json" \
  --csv "$tmp/merged.csv" >"$tmp/merged.txt" && ok || bad "merge"
cmp -s "$tmp/one.txt" "$tmp/merged.txt" && ok || { bad "merged table differs"; diff "$tmp/one.txt" "$tmp/merged.txt"; }

"$py" - "$tmp" <<'PY' && ok || bad "merged JSON and CSV equal the single sweep's (host fields aside)"
import csv, json, sys
tmp = sys.argv[1]
host = {"host_seconds", "peak_rss_bytes"}
def doc(name):
    d = json.load(open(f"{tmp}/{name}.json"))
    for r in d["results"]:
        assert r["host_seconds"] > 0 and r["peak_rss_bytes"] > 0, r
        for k in host: del r[k]
    return d
def rows(name):
    return [{k: v for k, v in r.items() if k not in host} for r in csv.DictReader(open(f"{tmp}/{name}.csv"))]
one, merged = doc("one"), doc("merged")
assert one == merged, "JSON differs"
assert rows("one") == rows("merged"), "CSV differs"
times = [r["total_ns"] for r in one["results"] if r["status"] == "ok"]
assert len(times) == 12 and times == sorted(times), times
assert [r["status"] for r in one["results"]][-3:] == ["failed"] * 3
assert sorted(r["index"] for r in one["results"]) == list(range(15))
PY

# On a terminal (script(1) gives stderr a pty) progress is a bar redrawn in place instead.
script -qc "$bin sweep matmul_tutorial --shape lhsT=128x128 --shape rhs=128x512 \
  --param variant=t1_tiled,t1_hoisted --jobs 2 >/dev/null" /dev/null >"$tmp/bar.txt" 2>&1
grep -q $'\r\[#*-*\] 0/2 ' "$tmp/bar.txt" && grep -q $'\r\[#*\] 2/2 ' "$tmp/bar.txt" &&
  ! grep -q 'sweep: ' "$tmp/bar.txt" && ok || { bad "progress bar on a terminal"; od -c "$tmp/bar.txt" | head; }

finish sweep_shards

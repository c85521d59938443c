#!/usr/bin/env bash
# neuronsim sweep marks a configuration that builds the same program as an earlier row: checked
# against each configuration's own `run --dump-asm` (notes stripped), on one machine and merged
# from shards, and in the table ("same as RANK") as in the JSON (same_program_as: grid index).
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

# matmul's block_m is read in mode kblocked only, and auto picks mode both at this shape; the
# tutorial's loop buffers change its program at every depth, its time at some.
sweeps=(
  "matmul --param mode=auto,both,resident --param block_m=auto,2"
  "matmul_tutorial --shape lhsT=1024x2048 --shape rhs=1024x1024 --dtype bf16 --param variant=t1_blocked,t1_hoisted --param loop_buffers=1,2,auto"
)
for i in 0 1; do
  read -r -a args <<<"${sweeps[$i]}"
  "$bin" sweep "${args[@]}" --jobs 2 --json "$tmp/one$i.json" >"$tmp/one$i.txt" 2>/dev/null &&
    ok || bad "sweep ${sweeps[$i]}"
  for s in 1 2; do
    "$bin" sweep "${args[@]}" --jobs 2 --shard $s/2 --json "$tmp/shard$i-$s.json" >/dev/null 2>&1 ||
      bad "shard $s/2 of ${sweeps[$i]}"
  done
  "$bin" sweep merge "$tmp/shard$i-2.json" "$tmp/shard$i-1.json" --json "$tmp/merged$i.json" \
    >"$tmp/merged$i.txt" && ok || bad "merge ${sweeps[$i]}"
  # Each configuration's program, as `run` builds it.
  "$py" - "$tmp/one$i.json" "${args[@]}" >"$tmp/runs$i.txt" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
fixed = [a for a in sys.argv[2:]]
kernel, rest = fixed[0], fixed[1:]
keep = []
skip = False
for a in rest:  # drop the --param axes, keep --shape and --dtype
    if skip: skip = False; continue
    if a == "--param": skip = True; continue
    keep.append(a)
for r in doc["results"]:
    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in r["params"].items())
    print(r["index"], f"run {kernel} {' '.join(keep)} {flags}")
PY
  while read -r index line; do
    read -r -a run <<<"$line"
    "$bin" "${run[@]}" --timing-only --dump-asm "$tmp/asm$i-$index.nsasm" >/dev/null 2>&1 ||
      bad "$line --dump-asm"
  done <"$tmp/runs$i.txt"
  "$py" - "$tmp" "$i" <<'PY' && ok || bad "marks of ${sweeps[$i]} equal the programs run builds"
import json, re, sys
tmp, i = sys.argv[1], sys.argv[2]
def program(index):
    return [re.sub(r"  # .*$", "", line) for line in open(f"{tmp}/asm{i}-{index}.nsasm").read().splitlines()]
for name in ("one", "merged"):
    results = json.load(open(f"{tmp}/{name}{i}.json"))["results"]
    seen = []  # (program, index) in table order
    repeats = 0
    for r in results:
        mine = program(r["index"])
        earlier = [index for p, index in seen if p == mine]
        want = earlier[0] if earlier else None
        assert r.get("same_program_as") == want, (name, r["index"], r.get("same_program_as"), want)
        if want is not None:
            repeats += 1
            first = next(x for x in results if x["index"] == want)
            assert r["total_ns"] == first["total_ns"], (r, first)
        seen.append((mine, r["index"]))
    assert repeats > 0 or i == "1", f"{name}: the grid has no repeated program to mark"
    # The table names the earlier row by its rank.
    rank = {r["index"]: n + 1 for n, r in enumerate(results)}
    rows = open(f"{tmp}/{name}{i}.txt").read().splitlines()[2:]
    for r, row in zip(results, rows):
        mark = re.search(r"same as (\d+)$", row)
        want = rank[r["same_program_as"]] if "same_program_as" in r else None
        assert (int(mark.group(1)) if mark else None) == want, (row, want)
PY
done
# The tutorial grid has distinct programs with equal times: time alone does not say "no effect".
"$py" - "$tmp/one1.json" <<'PY' && ok || bad "the tutorial grid has equal times from distinct programs"
import json, sys
results = json.load(open(sys.argv[1]))["results"]
pairs = [(a, b) for a in results for b in results
         if a["index"] < b["index"] and a["total_ns"] == b["total_ns"] and a["program"] != b["program"]]
assert pairs
PY

finish sweep_same_program

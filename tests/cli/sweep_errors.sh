#!/usr/bin/env bash
# neuronsim sweep and sweep merge: bad parameters, value lists, shards, jobs and mismatched shard
# files print one "error:" line, exit 2, and write nothing.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

k=matmul_tutorial
small=(--shape lhsT=128x128 --shape rhs=128x512)
csv="$tmp/out.csv"
expect_error "no kernel" "expected a KERNEL" sweep
expect_error "unknown kernel" "unknown kernel 'nope'" sweep nope
expect_error "python kernel" "sweep: examples/softmax.py:softmax_v1 is a Python kernel; sweep takes a library kernel" sweep examples/softmax.py:softmax_v1
expect_error "unknown param" "unknown parameter nope (neuronsim list $k lists them)" sweep $k --param nope=1,2 --csv "$csv"
expect_error "unknown bare param" "unknown parameter nope" sweep $k --param nope
expect_error "param without name" "takes NAME=v1,v2" sweep $k --param =1,2
expect_error "empty value" "empty value" sweep $k --param loop_buffers=1,,2 --csv "$csv"
expect_error "trailing comma" "empty value" sweep $k --param loop_buffers=1,
expect_error "bad value" "loop_buffers takes integers or auto, not 'x'" sweep $k --param loop_buffers=1,x
expect_error "bad enum value" "variant" sweep $k --param variant=t1_tiled,t9
expect_error "repeated value" "repeats a value" sweep $k --param loop_buffers=2,2
expect_error "param twice" "given twice" sweep $k --param loop_buffers=1 --param loop_buffers=2
expect_error "no candidates" "declares no candidates" sweep $k --param tiles_in_block_m
for shard in 0/3 4/3 1-3 a/b 1/ /3 1/3/3 -1/3; do
  expect_error "shard $shard" "--shard takes I/N with 1 <= I <= N, not '$shard'" sweep $k --shard "$shard" --csv "$csv"
done
expect_error "jobs 0" "--jobs takes a count" sweep $k --jobs 0
expect_error "jobs text" "--jobs takes a count" sweep $k --jobs many
expect_error "bad dtype" "--dtype takes fp32 or bf16" sweep $k --dtype fp64
expect_error "bad machine" "nosuchmachine" sweep $k --machine nosuchmachine
expect_error "bad shape" "shape '4xq'" sweep $k --shape lhsT=4xq
expect_error "unknown option" "unknown option --frobnicate" sweep $k --frobnicate
# Input names are checked before anything runs, not in every configuration.
expect_error "shape twice" "^error: --shape lhsT given twice$" sweep $k --shape lhsT=128x128 --shape lhsT=256x128 --csv "$csv"
expect_error "unknown input" "^error: $k has no input named 'lhs' (inputs: lhsT, rhs)$" sweep $k --shape lhs=128x128
# An int3 value is quoted as written, with colons.
expect_error "int3 value" "^error: conv3d: parameter stride takes 1 or 3 integers, not '1:2'$" sweep conv3d --param stride=1,1:2
# What a developer used to run types: its options, and a parameter as a flag, say why and what to type.
expect_error "timing-only" "^error: sweep: unknown option --timing-only (every configuration runs timing-only)$" \
  sweep $k --timing-only
expect_error "run's trace" "^error: sweep: unknown option --trace (run's: sweep simulates timing-only with no tensor data and no trace; run one configuration with neuronsim run $k ... --trace)$" \
  sweep $k --trace "$tmp/t.json"
expect_error "run's seed" "unknown option --seed (run's: " sweep $k --seed=3
expect_error "parameter as a flag" "^error: sweep: unknown option --loop-buffers (a parameter of $k: --param loop_buffers=V1,V2,... sweeps it, one value fixes it)$" \
  sweep $k --loop-buffers 2
expect_error "grid too large" "^error: sweep: the grid of 4 parameters has more than 1000000 configurations; sweep fewer parameters or values (--param NAME=V1,V2,...)$" \
  sweep matmul --param n_tile="$(seq -s, 64 512)" --param load_chunks="$(seq -s, 1 64)" \
  --param load_buffers="$(seq -s, 1 8)" --param out_buffers="$(seq -s, 1 16)"
expect_error "csv in missing dir" "does not exist" sweep $k "${small[@]}" --param loop_buffers=1 --csv "$tmp/nodir/x.csv"
[ ! -e "$csv" ] && ok || bad "nothing written on errors"

# Shard files to merge wrongly: shards 1/2 and 2/2 of one sweep, and a shard of another.
sweep=(sweep $k "${small[@]}" --param loop_buffers=1,2 --jobs 1)
"$bin" "${sweep[@]}" --shard 1/2 --json "$tmp/a1.json" >/dev/null 2>&1 || bad "shard 1/2 ran"
"$bin" "${sweep[@]}" --shard 2/2 --json "$tmp/a2.json" >/dev/null 2>&1 || bad "shard 2/2 ran"
"$bin" "${sweep[@]}" --dtype bf16 --shard 2/2 --json "$tmp/b2.json" >/dev/null 2>&1 || bad "bf16 shard ran"
"$bin" "${sweep[@]}" --shard 2/3 --json "$tmp/c2.json" >/dev/null 2>&1 || bad "shard 2/3 ran"
echo '{"sweep": 1}' >"$tmp/other.json"
echo 'not json' >"$tmp/text.json"
merged="$tmp/merged.json"
expect_error "merge nothing" "expected shard result files" sweep merge
expect_error "merge other dtype" "b2.json: a different sweep than .*a1.json (its dtype differs)" \
  sweep merge "$tmp/a1.json" "$tmp/b2.json" --json "$merged"
expect_error "merge shard twice" "a1.json: shard 1/2 is also in .*a1.json" sweep merge "$tmp/a1.json" "$tmp/a1.json"
expect_error "merge shard missing" "shard 2/2 is missing" sweep merge "$tmp/a1.json" --json "$merged"
expect_error "merge other split" "c2.json: shard 2/3 does not split the sweep like" \
  sweep merge "$tmp/a1.json" "$tmp/c2.json"
expect_error "merge not a sweep" "other.json: not a sweep result file" sweep merge "$tmp/other.json"
expect_error "merge not json" "text.json: not JSON" sweep merge "$tmp/text.json"
expect_error "merge missing file" "^error: sweep merge: .*missing.json: cannot open" sweep merge "$tmp/missing.json"
expect_error "merge directory" "^error: sweep merge: .*: cannot open: it is a directory" sweep merge "$tmp"
expect_error "merge binary file" "^error: sweep merge: sweep result file '/dev/zero' is not a text file" sweep merge /dev/zero
[ ! -e "$merged" ] && ok || bad "merge wrote nothing on errors"
"$bin" sweep merge "$tmp/a2.json" "$tmp/a1.json" --json "$merged" >/dev/null && [ -s "$merged" ] && ok ||
  bad "the two halves merge"

finish sweep_errors

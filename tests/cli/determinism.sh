#!/usr/bin/env bash
# The same run twice gives byte-identical outputs, traces, CSV tables, assembly dumps and
# summaries, host-side fields aside (strip_host, lib/cli_test.sh);
# for run and for asm, on a kernel with several outputs and on generated and given inputs.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

# same NAME DIR_A DIR_B: every file of the two runs is identical (JSON files after strip_host).
same() {
  local name=$1 a=$2 b=$3 file
  [ "$(cd "$a" && find . -type f | sort)" = "$(cd "$b" && find . -type f | sort)" ] || { bad "$name: different file sets"; return; }
  for file in $(cd "$a" && find . -type f | sort); do
    case $file in
      *.json) [ "$(strip_host "$a/$file")" = "$(strip_host "$b/$file")" ] || { bad "$name: $file differs"; return; } ;;
      *) cmp -s "$a/$file" "$b/$file" || { bad "$name: $file differs"; return; } ;;
    esac
  done
  ok
}

# run_twice NAME ARGS...: the command twice, each with every output file, compared.
run_twice() {
  local name=$1
  shift
  for i in 1 2; do
    mkdir -p "$tmp/$name$i"
    "$bin" "$@" --trace "$tmp/$name$i/t.json" --summary-json "$tmp/$name$i/s.json" --csv "$tmp/$name$i/t.csv" \
      --output-dir "$tmp/$name$i/out" >"$tmp/$name$i.stdout" 2>"$tmp/$name$i.stderr" ||
      { bad "$name run $i: $(cat "$tmp/$name$i.stderr")"; return; }
  done
  same "$name" "$tmp/${name}1" "$tmp/${name}2"
}

run_twice conv3d_bwd run conv3d_bwd --shape dy=1x4x3x4x5 --shape x_in=1x6x3x4x5 --shape filters=1x1x1x6x4 --seed 3
run_twice max_pool_bf16 run max_pooling_3d_backward --dtype bf16 --kernel-size 3 --stride 2 --padding 1 \
  --shape input_tensor=1x9x7x6x5

"$py" - "$tmp" <<'EOF2'
import sys
from npy import write_matrix
write_matrix(sys.argv[1] + '/lhsT.npy', 130, 70, lambda k, m: ((k * 5 + m * 3) % 9) * 0.25 - 1)
write_matrix(sys.argv[1] + '/rhs.npy', 130, 200, lambda k, n: ((k + 2 * n) % 7) * 0.5 - 1.5, '<f8')
EOF2
inputs=(--input "lhsT=$tmp/lhsT.npy" --input "rhs=$tmp/rhs.npy")
run_twice matmul_files run matmul "${inputs[@]}"
for i in 1 2; do
  "$bin" run matmul "${inputs[@]}" --dump-asm "$tmp/mm$i.nsasm" >/dev/null 2>&1 || bad "dump-asm run $i"
done
cmp -s "$tmp/mm1.nsasm" "$tmp/mm2.nsasm" && ok || bad "--dump-asm differs between runs"
run_twice asm_matmul asm "$tmp/mm1.nsasm" "${inputs[@]}"

# Printed summaries agree too, except the host line.
for name in conv3d_bwd matmul_files asm_matmul; do
  diff <(grep -v '^  host ' "$tmp/${name}1.stdout" | sed "s/${name}1/$name/g") \
    <(grep -v '^  host ' "$tmp/${name}2.stdout" | sed "s/${name}2/$name/g") >/dev/null && ok ||
    bad "$name: printed summaries differ"
done

finish determinism

#!/usr/bin/env bash
# Are the automatic schedule defaults near the best? For every kernel benchmark row (the README
# table, bench_kernels --list) sweeps the kernel's schedule parameters with `neuronsim sweep` and
# prints the default's time, the best configuration, the gap and PASS (gap <= 10%) or FAIL.
#
# usage: bench/sweep_defaults.sh [--build DIR] [--jobs N] [--only KERNEL] [--keep DIR] [--all]
#
# Grids: each schedule parameter on its own over its declared candidates (the others automatic),
# then the kernel's interacting groups below (explicit values for parameters that declare no
# candidates). The first value of every axis is the default, "auto". A row whose default reaches 100/1.1 % of the roofline stops after the first grid
# (no schedule can be 10% faster) unless --all. Output: a markdown table (docs/sweep.md).
set -euo pipefail

here=$(dirname "$0")
source "$here/bench_args.sh"
jobs=2 only="" keep="" all=0
bench_args "--jobs=jobs --only=only --keep=keep" "--all=all" "$@"
neuronsim=$build/neuronsim
bench=$build/bench/bench_kernels
bench_tools "$neuronsim" "$bench"
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
rm -rf "$work"/row*
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

# Grids beyond one parameter at a time, one line per grid (its --param arguments); a line
# starting with "only:" is a grid without the default configuration.
extraGrids() {
  case "$1" in
    matmul)
      echo "--param load_buffers --param out_buffers"
      echo "--param load_queues --param store_queues"
      echo "--param evict --param psum_buffers"
      echo "only: --param mode=kblocked --param block_m=1,2 --param block_n=1,2 --param k_chunk=4,8,16"
      ;;
    avg_pooling_3d | max_pooling_3d)
      echo "--param buffers --param load_queues --param store_queues"
      echo "--param layout --param chunks --param buffers"
      echo "--param acc_engines --param chunks --param buffers"
      ;;
    avg_pooling_3d_backward)
      echo "--param buffers --param load_queues --param store_queues"
      echo "--param layout --param chunks --param buffers"
      ;;
    max_pooling_3d_backward)
      echo "--param buffers --param load_queues --param store_queues"
      echo "--param gpsimd_share --param key_ring --param buffers"
      echo "--param layout --param chunks --param buffers"
      ;;
    conv3d | conv3d_transpose)  # parameters without candidates: auto is the default
      echo "--param chunk_positions=auto,256,512,1024,2048 --param psum_buffers=auto,2,6"
      echo "--param evict_engine=auto,vector,scalar --param tap_pack=auto,off"
      echo "--param w_pairs=auto,off --param stationary=auto,filters,positions"
      ;;
    conv3d_bwd)
      echo "--param dw_method=auto,rows,boxes --param dw_overlap=auto,off"
      echo "--param dw_acc_banks --param dy_transpose"
      echo "--param dw_stationary --param dw_depth_group"
      echo "--param dw_overlap --param dw_x_groups --param dw_dy_groups"
      echo "--param dx_chunk_positions=auto,512,1024,2048 --param dx_psum_buffers=auto,2,6"
      echo "--param dx_w_pairs=auto,off --param dx_stationary=auto,filters,positions"
      ;;
    matmul_tutorial)
      echo "--param tiles_in_block_m=auto,4,8,16 --param tiles_in_block_n=auto,1,2,4"
      ;;
  esac
}

# The kernel's schedule parameters (neuronsim list marks them "schedule").
scheduleParams() {
  "$neuronsim" list | awk -v kernel="$1" '
    /^[^ ]/ { current = $1 }
    current == kernel && $1 ~ /^--/ && $2 == "(schedule" { name = substr($1, 3); gsub("-", "_", name); print name }'
}

# Runs grid number $2 of row directory $1: the --param arguments $3 on the case's arguments.
runGrid() {
  local row=$1 grid=$2 params=$3
  if [[ $params == only:* ]]; then
    params=${params#only:}
    echo "grid$grid" >>"$row/only"
  fi
  # shellcheck disable=SC2086  # word splitting of the argument lists is intended
  "$neuronsim" sweep $(cut -d' ' -f1 "$row/case") $(cut -d' ' -f2- "$row/case") $params \
    --jobs "$jobs" --json "$row/grid$grid.json" </dev/null >"$row/grid$grid.txt" 2>"$row/grid$grid.err" || {
    bench_fail "neuronsim sweep $(cat "$row/case") $params failed: $(tail -n 1 "$row/grid$grid.err")"
  }
}

rows=0
while read -r line; do
  kernel=${line%% *}
  [ -z "$only" ] || [ "$kernel" = "$only" ] || continue
  rows=$((rows + 1))
  row=$work/row$rows
  mkdir -p "$row"
  echo "$line" >"$row/case"
  mapfile -t grids < <(
    for p in $(scheduleParams "$kernel"); do  # those that declare candidates
      if "$neuronsim" sweep "$kernel" --param "$p" --dry-run >/dev/null 2>&1; then echo "--param $p"; fi
    done
    extraGrids "$kernel"
  )
  echo "sweep_defaults: $line: ${#grids[@]} grids" >&2
  runGrid "$row" 1 "${grids[0]}"
  # A default at >= 100/1.1 % of the roofline is within 10% of any schedule: no more grids.
  if [ "$all" = 0 ] && "$here/sweep_defaults.py" bound "$row"; then
    touch "$row/bound"
    continue
  fi
  for ((g = 1; g < ${#grids[@]}; g++)); do runGrid "$row" $((g + 1)) "${grids[$g]}"; done
done < <("$bench" --list)

"$here/sweep_defaults.py" table "$work"

#!/usr/bin/env bash
# What --no-race-check saves: host time of `neuronsim run --timing-only` on every kernel
# benchmark row (bench_kernels --list) and of two sweeps (--jobs 2), with race detection (the
# default) and without it (the one-thread path), each measured REPEATS times alternately; prints
# the medians as markdown tables (docs/sweep.md, "Speed"). --callgrind adds each command's host
# instructions (millions, every process of it), counted once by valgrind: unlike time, the count
# does not depend on what else the machine runs.
#
# usage: bench/race_check_speed.sh [--build DIR] [--repeats N] [--callgrind]
set -euo pipefail

source "$(dirname "$0")/bench_args.sh"
repeats=3 callgrind=0
bench_args "--repeats=repeats" "--callgrind=callgrind" "$@"
neuronsim=$build/neuronsim
bench_tools "$neuronsim" "$build/bench/bench_kernels"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

# median V...: the middle value (the lower of the two middle ones).
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
# timed OUT ARGS...: runs neuronsim ARGS; appends "wall cpu" (seconds, children included) to OUT.
timed() {
  local out=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$neuronsim" "$@" >/dev/null 2>"$work/err" ||
    bench_fail "neuronsim $* failed: $(tail -1 "$work/err")"
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$work/time" >>"$out"
}
# counted ARGS...: millions of host instructions of neuronsim ARGS and its children, or "-".
counted() {
  [ $callgrind = 1 ] || { echo -; return; }
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" "$neuronsim" "$@" 2>&1 >/dev/null |
    awk '/Collected :/ { n += $NF } END { printf "%.0f\n", n / 1e6 }'
  rm -f "$work"/cg.*
}

echo "| kernel | dtype, shapes, params | instructions | simulation s, race check on | off | on / off | process wall s on | off | process CPU s on | off | host Minstr on | off |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
"$build/bench/bench_kernels" --list | while read -r kernel args; do
  # bench_kernels --list writes parameters as sweep axes (--param NAME=V); run takes --name V.
  read -r -a words <<<"$(sed -E 's/--param ([a-z_]+)=/--\1 /g' <<<"$args" | sed -E 's/--([a-z]+)_([a-z_]+) /--\1-\2 /g')"
  rm -f "$work/on" "$work/off" "$work/sim.on" "$work/sim.off"
  for _ in $(seq "$repeats"); do
    for switch in on off; do
      extra=()
      [ $switch = off ] && extra=(--no-race-check)
      timed "$work/$switch" run "$kernel" "${words[@]}" --timing-only "${extra[@]}" --summary-json "$work/s.json"
      /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["host_seconds"], s["instructions"])' \
        "$work/s.json" >>"$work/sim.$switch"
    done
  done
  # shellcheck disable=SC2046
  on=$(median $(cut -d' ' -f1 "$work/sim.on")) off=$(median $(cut -d' ' -f1 "$work/sim.off"))
  # shellcheck disable=SC2046
  printf '| %s | %s | %s | %.3f | %.3f | %.1f | %s | %s | %s | %s | %s | %s |\n' "$kernel" "$args" \
    "$(head -1 "$work/sim.on" | cut -d' ' -f2)" "$on" "$off" "$(awk -v a="$on" -v b="$off" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
    "$(median $(cut -d' ' -f1 "$work/on"))" "$(median $(cut -d' ' -f1 "$work/off"))" \
    "$(median $(cut -d' ' -f2 "$work/on"))" "$(median $(cut -d' ' -f2 "$work/off"))" \
    "$(counted run "$kernel" "${words[@]}" --timing-only)" "$(counted run "$kernel" "${words[@]}" --timing-only --no-race-check)"
done

echo
echo "| sweep (--jobs 2) | configurations | wall s, race check on | off | CPU s on | off | host Minstr on | off |"
echo "|---|---|---|---|---|---|---|---|"
sweeps=(
  "conv3d_bwd --dtype bf16 --shape dy=1x32x16x64x64 --shape x_in=1x32x16x64x64 --shape filters=3x3x3x32x32 --param padding=1 --param dw_overlap=auto,off,spread --param dx_psum_buffers=auto,2,4"
  "matmul --dtype bf16 --shape lhsT=4096x4096 --shape rhs=4096x8192 --param load_chunks=auto,1,2,4 --param out_buffers=auto,2"
)
for sweep in "${sweeps[@]}"; do
  read -r -a words <<<"$sweep"
  rm -f "$work/on" "$work/off"
  for _ in $(seq "$repeats"); do
    timed "$work/on" sweep "${words[@]}" --jobs 2
    timed "$work/off" sweep "${words[@]}" --jobs 2 --no-race-check
  done
  count=$("$neuronsim" sweep "${words[@]}" --dry-run | sed -nE 's/.*\(([0-9]+) of .*/\1/p')
  # shellcheck disable=SC2046
  printf '| `sweep %s` | %s | %s | %s | %s | %s | %s | %s |\n' "$sweep" "$count" \
    "$(median $(cut -d' ' -f1 "$work/on"))" "$(median $(cut -d' ' -f1 "$work/off"))" \
    "$(median $(cut -d' ' -f2 "$work/on"))" "$(median $(cut -d' ' -f2 "$work/off"))" \
    "$(counted sweep "${words[@]}" --jobs 2)" "$(counted sweep "${words[@]}" --jobs 2 --no-race-check)"
done

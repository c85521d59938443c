#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz preset: clang, ASan+UBSan) and runs each on its seed corpus
# for a bounded time: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...] (default 30 s, all four).
# A crash, a sanitizer report, a hang (-timeout) or a memory blowup (-rss_limit_mb,
# -malloc_limit_mb) fails the run; the input is left in build-fuzz/findings/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(assembly npy machine trace)

cmake --preset fuzz >/dev/null
if ! cmake --build --preset fuzz -j "$(nproc)" >build-fuzz/build.log 2>&1; then
  cat build-fuzz/build.log
  exit 1
fi

# One target: new inputs go to build-fuzz/corpus/TARGET (the checked-in seeds stay untouched).
run_target() {
  local target=$1 work=build-fuzz/corpus/$1 findings=build-fuzz/findings/$1
  local log=build-fuzz/logs/$1.log
  mkdir -p "$work" "$findings" build-fuzz/logs
  local dict=()
  [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
  if build-fuzz/fuzz/fuzz_"$target" "$work" "fuzz/corpus/$target" "${dict[@]}" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
      -use_value_profile=1 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1; then
    local runs cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz $target: ${runs:-?} inputs in ${seconds} s, ${cov:-cov: ?}, corpus $(ls "$work" | wc -l) files"
  else
    echo "fuzz $target: FAILED (log: $log; input: $(ls -t "$findings" | head -1))"
    grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" || tail -5 "$log"
    return 1
  fi
}

# Two at a time (CI has two cores).
status=0
pids=()
for target in "${targets[@]}"; do
  run_target "$target" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$(nproc)" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status

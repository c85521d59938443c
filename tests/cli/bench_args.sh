#!/usr/bin/env bash
# The bench scripts' shared command line (bench/bench_args.sh): --help prints the script's header
# comment with its usage line; an unknown option, a missing value or an unbuilt tool is one
# error line naming the script and the culprit, exit status 2, before anything runs.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

for script in race_check_speed sweep_defaults; do
  out=$(bash "bench/$script.sh" --help) && [[ $out == *"usage: bench/$script.sh [--build DIR]"* ]] &&
    [[ $out != *"#"* ]] && [[ $out != *"set -euo"* ]] && ok || bad "$script --help: $out"
  for args in "--bogus" "--build" "--build $tmp/none" "--build $(dirname "$bin") --repeats"; do
    # shellcheck disable=SC2086  # the words of args are the arguments
    err=$(bash "bench/$script.sh" $args 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [[ $err == "error: $script.sh: "* ]] && ok ||
      bad "$script $args: exit $rc: $err"
  done
done
[[ $(bash bench/race_check_speed.sh --bogus 2>&1) == *"unknown argument '--bogus'"* ]] && ok || bad "unknown argument named"
[[ $(bash bench/sweep_defaults.sh --keep 2>&1) == *"--keep needs a value"* ]] && ok || bad "missing value named"
[[ $(bash bench/sweep_defaults.sh --build "$tmp/none" 2>&1) == *"$tmp/none/neuronsim is not built"* ]] && ok || bad "unbuilt tool named"

# bench/matmul_ab.py: an unbuilt binary is one error line; one case against itself is unchanged.
err=$(python3 bench/matmul_ab.py "$tmp/none" "$bin" 2>&1 >/dev/null)
rc=$?
[ "$rc" = 2 ] && [ "$err" = "error: matmul_ab.py: BASE $tmp/none is not an executable" ] && ok ||
  bad "matmul_ab unbuilt: exit $rc: $err"
out=$(python3 bench/matmul_ab.py "$bin" "$bin" --shapes 1 --machines trn2 --dtypes bf16 2>&1)
[[ $out == *"trn2 bf16: 0 faster, 0 slower, 1 same"* ]] && [[ $out == *"777x1300x513 bf16 trn2"* ]] &&
  ok || bad "matmul_ab one case: $out"
out=$(python3 bench/matmul_ab.py "$bin" "$bin" --shapes 1 --machines trn2 --dtypes bf16 \
  --new-flags "--store-tiles 2" 2>&1)
[[ $out == *"trn2 bf16: 1 faster, 0 slower, 0 same"* ]] && ok || bad "matmul_ab store_tiles 2: $out"

finish bench_args

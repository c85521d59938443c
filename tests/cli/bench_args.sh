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

finish bench_args

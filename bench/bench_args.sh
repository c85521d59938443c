# The bench scripts' shared command line (sourced): --build DIR, the script's own options,
# --help (the script's header comment), one error line for anything else, the tools built.
#
# bench_args "VALUE_OPTIONS" "SWITCHES" "$@": sets build (default build), then each option in
# VALUE_OPTIONS ("--jobs=jobs --only=only": option=variable) to the word after it and each
# switch in SWITCHES ("--all=all") to 1; the caller sets their defaults first.
bench_script=$(basename "$0")

bench_args() {
  local values=" --build=build $1 " switches=" $2 " option variable
  shift 2
  while [ $# -gt 0 ]; do
    option=$1
    if [ "$option" = --help ] || [ "$option" = -h ]; then
      sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      exit 0
    elif [[ $values == *" $option="* ]]; then
      variable=${values#*" $option="}
      [ $# -ge 2 ] || bench_fail "$option needs a value"
      printf -v "${variable%% *}" '%s' "$2"
      shift 2
    elif [[ $switches == *" $option="* ]]; then
      variable=${switches#*" $option="}
      printf -v "${variable%% *}" '%s' 1
      shift
    else
      bench_fail "unknown argument '$option' (--help lists them)"
    fi
  done
}

# bench_fail TEXT: the one error line, exit status 2.
bench_fail() {
  echo "error: $bench_script: $1" >&2
  exit 2
}

# bench_tools TOOL...: fails unless every TOOL is an executable (built).
bench_tools() {
  local tool
  for tool in "$@"; do [ -x "$tool" ] || bench_fail "$tool is not built"; done
}

build=build

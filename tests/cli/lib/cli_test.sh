# Shared by the CLI test scripts (sourced after `bin=$1`): a scratch folder, pass/fail counters,
# the two common expectations, and the closing line ctest reads.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# expect_error NAME PATTERN ARGS...: `$bin ARGS` exits 2 and prints exactly one stderr line,
# "error: ...", matching the grep PATTERN. Progress lines ("neuronsim: PHASE (N s)", printed when
# a phase takes a few seconds, e.g. on a loaded machine) are not error lines and are set aside.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  local err rc
  err=$("$bin" "$@" 2>&1 >/dev/null)
  rc=$?
  err=$(printf '%s\n' "$err" | grep -v -E '^neuronsim: .* \([0-9]+ s\)$')
  if [ "$rc" != 2 ]; then bad "$name: exit $rc, want 2 ($err)"; return; fi
  if [ "$(printf '%s\n' "$err" | wc -l)" != 1 ] || [ "${err#error: }" = "$err" ]; then
    bad "$name: want one 'error:' line, got: $err"; return
  fi
  if ! printf '%s\n' "$err" | grep -q -- "$pattern"; then bad "$name: '$err' does not match '$pattern'"; return; fi
  ok
}

# expect_check NAME ARGS...: `$bin ARGS` exits 0 and prints "check: ... ok".
expect_check() {
  local name=$1
  shift
  "$bin" "$@" >"$tmp/check.out" 2>&1
  local rc=$?
  if [ "$rc" -eq 0 ] && grep -q 'check: .*ok' "$tmp/check.out"; then ok; else bad "$name (exit $rc)"; cat "$tmp/check.out"; fi
}

# finish NAME: the closing "N passed, M failed" line; exits 1 when anything failed.
finish() {
  echo "$1: $passed passed, $failed failed"
  [ "$failed" -eq 0 ] || exit 1
  exit 0
}

# Inline Python snippets run as "$py" (Debian's python3, which has numpy) and import the .npy
# helpers with `from npy import read_npy, write_npy`.
py=/usr/bin/python3
export PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"

# strip_host FILE.json: the JSON (a summary, a sweep, or a trace with its embedded summary) without
# host-side fields: host times, peak RSS and a sweep's race_check header.
strip_host() {
  "$py" - "$1" <<'EOF2'
import json, sys
HOST = {'host_seconds', 'sim_instructions_per_second', 'build_seconds', 'peak_rss_bytes', 'race_check'}
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in HOST}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))
EOF2
}

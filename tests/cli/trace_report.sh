#!/usr/bin/env bash
# report, diff, csv and view on saved traces; errors on missing or bad traces; a real run's trace when available.
# usage: bash tests/cli/trace_report.sh /path/to/neuronsim   (from the repository root)
set -euo pipefail
neuronsim=$1
fixture=tests/traces/fixtures/pipeline.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$neuronsim" report "$fixture" --csv "$work/table.csv" >"$work/report.txt"
for section in "synthetic_matmul on trn2 (bf16)" "verdict: bound by DMA" "critical path by resource" "what if" \
               "engine time" "top opcodes by time" "DMA efficiency" "critical path chain" "warnings:" "PE idle gaps"; do
  grep -qF "$section" "$work/report.txt" || fail "report lacks '$section'"
done
# 160 instructions + 80 transfers, plus the header
[[ $(wc -l <"$work/table.csv") -eq 241 ]] || fail "csv has $(wc -l <"$work/table.csv") lines, expected 241"
head -1 "$work/table.csv" | grep -q '^kind,index,track,opcode,' || fail "csv header"

"$neuronsim" diff "$fixture" "$fixture" >"$work/diff.txt"
grep -q "total_ns" "$work/diff.txt" || fail "diff lacks total_ns"
grep -q "tensor nc_matmul" "$work/diff.txt" || fail "diff lacks per-opcode rows"
for section in "verdict A: bound by DMA" "critical path by resource" "what if" "engine time"; do
  grep -qF "$section" "$work/diff.txt" || fail "diff lacks '$section'"
done
if grep -E '^\s+\S+.*[+-][0-9.]+%' "$work/diff.txt" | grep -vq '+0.0%'; then fail "diff of a trace with itself is not zero"; fi

"$neuronsim" view "$fixture" -o "$work/out.html" >/dev/null
grep -q '<canvas' "$work/out.html" || fail "view wrote no canvas"
cp "$fixture" "$work/copy.json"
"$neuronsim" view "$work/copy.json" >/dev/null
[[ -s "$work/copy.html" ]] || fail "view's default output is not TRACE.html beside the trace"

expect_error() {
  local what=$1; shift
  set +e
  "$neuronsim" "$@" >"$work/out.txt" 2>"$work/err.txt"
  local code=$?
  set -e
  [[ $code -eq 2 ]] || fail "$what: exit $code, expected 2"
  [[ $(wc -l <"$work/err.txt") -eq 1 ]] || fail "$what: error is not one line: $(cat "$work/err.txt")"
  grep -q '^error: ' "$work/err.txt" || fail "$what: no 'error:' prefix"
}
expect_error "missing trace" report "$work/none.json"
grep -q "none.json" "$work/err.txt" || fail "missing trace error does not name the file"
echo '{"traceEvents": [' >"$work/bad.json"
expect_error "bad json" report "$work/bad.json"
expect_error "bad json in diff" diff "$fixture" "$work/bad.json"
expect_error "bad json in view" view "$work/bad.json"
expect_error "no arguments" report
expect_error "unknown option" report "$fixture" --bogus 1

# Real runs, once `neuronsim run` works: every kernel's trace has a track per engine, a named track
# per DMA queue used, nested slices per track, paired flows, and a span equal to total_ns.
check_trace() {
  python3 - "$1" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
for engine in ("tensor", "vector", "scalar", "gpsimd", "sync"):
    assert engine in names.values(), f"no {engine} track"
xs = [e for e in events if e["ph"] == "X"]
queues = {e["tid"] for e in xs if e.get("cat") == "dma"}
assert queues, "no DMA transfers"
assert all(q in names for q in queues), "a DMA queue has no named track"
by_tid = {}
for e in xs:
    by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
for tid, spans in by_tid.items():
    spans.sort()
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert s1 >= e0 - 1e-6 or e1 <= e0 + 1e-6, f"overlapping slices on {names.get(tid, tid)}"
starts = {e["id"] for e in events if e["ph"] == "s"}
ends = {e["id"] for e in events if e["ph"] == "f"}
assert starts == ends, "unpaired flow events"
span = (max(e["ts"] + e["dur"] for e in xs) - min(e["ts"] for e in xs)) * 1000
total = trace["neuronsim"]["summary"]["total_ns"]
assert abs(span - total) <= 1e-6 * max(1, total), f"span {span} != total_ns {total}"
print(f"  {trace['neuronsim']['summary']['kernel']}: {len(xs)} complete events, {len(queues)} DMA tracks, "
      f"{len(starts)} flows, span {span:.1f} ns == total_ns")
PY
}
if "$neuronsim" run max_pooling_3d_backward --timing-only --trace "$work/run.json" >"$work/run.txt" 2>&1; then
  kernels=$("$neuronsim" list | grep -E '^[a-z0-9_]+$' || true)
  [[ -n "$kernels" ]] || kernels=max_pooling_3d_backward
  for kernel in $kernels; do
    "$neuronsim" run "$kernel" --timing-only --trace "$work/$kernel.json" >/dev/null || fail "run $kernel"
    check_trace "$work/$kernel.json" || fail "trace of $kernel"
    "$neuronsim" report "$work/$kernel.json" >"$work/$kernel.txt" || fail "report of $kernel"
    for section in "verdict: bound by" "what if" "DMA efficiency" "phases (instruction notes)"; do
      grep -qF "$section" "$work/$kernel.txt" || fail "report of $kernel lacks '$section'"
    done
  done
  "$neuronsim" report "$work/run.json" >"$work/run_report.txt" || fail "report of a real run"
  grep -q "critical path by resource" "$work/run_report.txt" || fail "report of a real run lacks its critical path"
else
  echo "note: 'neuronsim run' not available, real-run checks skipped: $(head -c 200 "$work/run.txt")"
fi
echo PASS

#!/usr/bin/env bash
# SBUF and PSUM occupancy counter tracks in the trace of `run max_pooling_3d_backward`: both present,
# step samples in time order from 0, within the capacity, back to zero at the end, and the SBUF
# peak above zero.
set -u
bin=$1
source "$(dirname "$0")/lib/cli_test.sh"

if "$bin" run max_pooling_3d_backward --trace "$tmp/t.json" >"$tmp/run.out" 2>&1; then ok; else bad "run"; cat "$tmp/run.out"; fi

check_occupancy() {
  "$py" - "$1" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
total = trace["neuronsim"]["summary"]["total_ns"]
capacity = {"sbuf_bytes": 224 * 1024, "psum_bytes": 16 * 1024}
peaks = {}
for name, cap in capacity.items():
    points = [(e["ts"] * 1000, e["args"]["value"]) for e in events if e["ph"] == "C" and e["name"] == name]
    assert points, f"no {name} counter track"
    assert points[0][0] == 0, f"{name} does not start at 0 ns"
    assert all(b[0] > a[0] for a, b in zip(points, points[1:])), f"{name} samples out of time order"
    assert all(b[1] != a[1] for a, b in zip(points, points[1:])), f"{name} repeats a value"
    assert all(0 <= v <= cap for _, v in points), f"{name} outside [0, {cap}]"
    assert all(t <= total * (1 + 1e-9) for t, _ in points), f"{name} sample after total_ns"
    assert points[-1][1] == 0, f"{name} does not return to zero"
    peaks[name] = max(v for _, v in points)
assert peaks["sbuf_bytes"] > 0, "SBUF never occupied"
print(f"  peak sbuf {peaks['sbuf_bytes']:.0f} B/partition, peak psum {peaks['psum_bytes']:.0f} B/partition")
PY
}
if check_occupancy "$tmp/t.json"; then ok; else bad "occupancy tracks of max_pooling_3d_backward"; fi

finish trace_occupancy

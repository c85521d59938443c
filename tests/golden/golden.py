#!/usr/bin/env python3
"""Runs the golden cases and writes (--update) or compares their simulated summaries."""
import json, subprocess, sys, tempfile, os

# Simulated times are whole picoseconds, so every time in a summary has at most three
# decimals and compares exactly: no rounding here.

KEYS = ["kernel", "machine", "dtype", "total_ns", "instructions", "flops", "hbm_bytes", "roofline_ns"]
ENGINE_KEYS = ["busy_ns", "instructions"]
DMA_KEYS = ["bytes", "transfers"]


def deterministic(summary):
    kept = {k: summary[k] for k in KEYS}
    kept["engines"] = {e: {k: v[k] for k in ENGINE_KEYS} for e, v in summary["engines"].items()}
    kept["dma"] = {k: summary["dma"][k] for k in DMA_KEYS}
    return kept


def cases(folder):
    for line in open(os.path.join(folder, "cases.txt")):
        line = line.strip()
        if line and not line.startswith("#"):
            name, args = (part.strip() for part in line.split("|", 1))
            yield name, args.split()


def main():
    binary, update = sys.argv[1], "--update" in sys.argv
    folder = os.path.dirname(os.path.abspath(__file__))
    failed = passed = 0
    for name, args in cases(folder):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "summary.json")
            run = subprocess.run([binary, "run", *args, "--timing-only", "--summary-json", out],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"FAIL {name}: exit {run.returncode}: {run.stderr.strip()}")
                failed += 1
                continue
            got = deterministic(json.load(open(out)))
        path = os.path.join(folder, name + ".json")
        if update:
            with open(path, "w") as f:
                json.dump(got, f, indent=2, sort_keys=True)
                f.write("\n")
            print(f"wrote {path}")
            continue
        want = json.load(open(path))
        if got != want:
            failed += 1
            print(f"FAIL {name}: simulated summary differs from {path}")
            print("  want: " + json.dumps(want, sort_keys=True))
            print("  got:  " + json.dumps(got, sort_keys=True))
            print("  (if the change is intended: python3 tests/golden/golden.py build/neuronsim --update)")
        else:
            passed += 1
    if not update:
        print(f"golden: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

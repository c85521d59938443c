#!/usr/bin/env python3
"""Reads bench/sweep_defaults.sh's sweeps (neuronsim sweep --json files, one directory per row).

  sweep_defaults.py bound ROWDIR   exit 0 when the default reaches 100/1.1 % of the roofline:
                                   no schedule can then be more than 10% faster
  sweep_defaults.py table WORKDIR  the table: default, best, gap, PASS/FAIL (exit 1 on a FAIL)

The default configuration of a grid is the one with every axis at its first value, except in
grids listed in ROWDIR/only (they hold no default).
"""
import glob
import json
import os
import sys

GOAL_PERCENT = 10.0


def sweeps(row):
    only = set(open(os.path.join(row, "only")).read().split()) if os.path.exists(
        os.path.join(row, "only")) else set()
    for path in sorted(glob.glob(os.path.join(row, "grid*.json"))):
        name = os.path.basename(path)[:-len(".json")]
        yield json.load(open(path)), name not in only


def fixed_params(row):
    """The parameters the benchmark case itself sets (--param NAME=V in ROWDIR/case)."""
    words = open(os.path.join(row, "case")).read().split()
    return {w.split("=")[0] for prev, w in zip(words, words[1:]) if prev == "--param"}


def measure(row):
    """(default result, best result, params of the best that differ from the default, runs)."""
    default, best, best_params, runs = None, None, {}, 0
    fixed = fixed_params(row)
    for sweep, has_default in sweeps(row):
        axes = sweep["sweep"]["axes"]
        first = {a["param"]: a["values"][0] for a in axes}
        for res in sweep["results"]:
            if res["status"] != "ok":
                continue
            runs += 1
            if has_default and all(res["params"][p] == v for p, v in first.items()):
                if default is not None and default["total_ns"] != res["total_ns"]:
                    sys.exit(f"error: sweep_defaults: the default's time differs between grids of {row}")
                default = res
            if best is None or res["total_ns"] < best["total_ns"]:
                best = res
                best_params = {p: v for p, v in res["params"].items()
                               if p in first and p not in fixed and (not has_default or v != first[p])}
    if default is not None and best["total_ns"] >= default["total_ns"]:
        best, best_params = default, {}  # a tie goes to the default
    return default, best, best_params, runs


def bound(row):
    default, _, _, _ = measure(row)
    return 0 if default and default["roofline_percent"] >= 100.0 / (1 + GOAL_PERCENT / 100) else 1


def table(work):
    rows = sorted(glob.glob(os.path.join(work, "row*")), key=lambda p: int(p.rsplit("row", 1)[1]))
    print("| kernel | dtype, shapes, params | default us | default roofline % | best us | gap % | verdict | best configuration (runs) |")
    print("|---|---|---|---|---|---|---|---|")
    failed = 0
    for row in rows:
        kernel, _, args = open(os.path.join(row, "case")).read().strip().partition(" ")
        case = " ".join(w for w in args.split() if not w.startswith("--"))
        default, best, best_params, runs = measure(row)
        if default is None:
            print(f"| {kernel} | {case} | - | - | - | - | FAIL | the default did not run |")
            failed += 1
            continue
        gap = 100.0 * (default["total_ns"] / best["total_ns"] - 1.0)
        verdict = "PASS" if gap <= GOAL_PERCENT else "FAIL"
        failed += verdict == "FAIL"
        if os.path.exists(os.path.join(row, "bound")):
            shown = f"not swept: the default is at >= {100 / (1 + GOAL_PERCENT / 100):.1f}% of the roofline"
        else:
            shown = " ".join(f"{p}={v}" for p, v in sorted(best_params.items())) or "the default"
        print(f"| {kernel} | {case} | {default['total_ns'] / 1000:.2f} | "
              f"{default['roofline_percent']:.1f} | {best['total_ns'] / 1000:.2f} | {gap:.1f} | "
              f"{verdict} | {shown} ({runs}) |")
    print(f"\n{len(rows)} rows, {failed} FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("bound", "table"):
        sys.exit("usage: sweep_defaults.py bound ROWDIR | table WORKDIR")
    sys.exit(bound(sys.argv[2]) if sys.argv[1] == "bound" else table(sys.argv[2]))

"""``python3 -m neuronsim run FILE.py:KERNEL [options]``: what ``neuronsim run FILE.py:KERNEL``
runs. The options are those of ``neuronsim run`` (``--help`` lists them); the kernel's
parameters are flags in kebab-case. Errors print one ``error:`` line and exit 2."""

import os
import sys

import numpy as np

from . import _core
from .errors import Error
from .python_kernel import load_file_kernel
from .running import run

USAGE = """usage: neuronsim run FILE.py:KERNEL [options] [kernel parameters]

Imports FILE.py, builds its Python kernel KERNEL (@neuronsim.kernel), simulates it and prints
the summary, as neuronsim run does for a library kernel.

options:
  --input NAME=FILE.npy   an input (float32/float64/float16, C order; repeatable)
  --shape NAME=AxBxC      shape of a generated input (repeatable)
  --seed N                seed of generated inputs (default 0)
  --dtype fp32|bf16       kernel dtype (default fp32)
  --output-dir DIR        write each output as DIR/NAME.npy (float32)
  --trace FILE.json       Chrome/Perfetto trace with the summary embedded
  --summary-json FILE     the summary as JSON
  --csv FILE              the instruction table as CSV
  --dump-asm FILE         the program as text assembly
  --machine M             trn2 (default), trn1 or a machine FILE.json
  --set KEY=VALUE         override one machine parameter (repeatable)
  --timing-only           simulate without numerics (no outputs)
  --interpret             run the sequential interpreter only (no time)
  --check                 compare with the kernel's reference; exit 1 above the tolerance
  --help                  this text and the kernel's tensors and parameters
"""

_VALUED = {"input", "shape", "seed", "dtype", "output-dir", "trace", "summary-json", "csv", "dump-asm",
           "machine", "set"}
_FLAGS = {"timing-only", "interpret", "check", "help"}
_REPEATED = {"input", "shape", "set"}


def _split(text, option):
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise Error(f"run: {option} takes NAME=VALUE, not '{text}'")
    return name, value


def _parse(args, kernel):
    """{option: value or [values]} and {param: text} from the command line."""
    params = {name.replace("_", "-"): name for name in kernel.param_defaults}
    bools = {flag for flag, name in params.items() if isinstance(kernel.param_defaults[name], bool)}
    options, values = {}, {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--"):
            raise Error(f"run: unexpected argument '{arg}'")
        key, sep, value = arg[2:].partition("=")
        if key in _FLAGS or (key in bools and not sep):
            if sep and key in _FLAGS:
                raise Error(f"run: --{key} takes no value")
            value = "true"
        elif key in _VALUED or key in params:
            if not sep:
                i += 1
                if i >= len(args):
                    raise Error(f"run: --{key} needs a value")
                value = args[i]
        else:
            known = ", ".join(f"--{p}" for p in params) or "none"
            raise Error(f"run {kernel.name}: unknown option --{key} (kernel parameters: {known})")
        if key in params:
            values[params[key]] = value
        elif key in _REPEATED:
            options.setdefault(key, []).append(value)
        elif key in options:
            raise Error(f"run: --{key} given twice")
        else:
            options[key] = value
        i += 1
    return options, values


def _shape(text, name):
    try:
        shape = [int(d) for d in text.split("x")]
    except ValueError:
        shape = []
    if not shape or min(shape) < 1:
        raise Error(f"run: --shape {name}: '{text}' is not a shape like 4x8x16")
    return shape


def _help(kernel):
    print(f"neuronsim run FILE.py:{kernel.name}: {kernel.spec.description}\n\ninputs:")
    for name, _, optional in kernel.spec.inputs:
        shape = kernel.spec.default_shapes.get(name)
        print(f"  {name:<16} {'(optional)' if optional else ''}"
              f"{', default shape ' + 'x'.join(map(str, shape)) if shape else ''}")
    print("parameters:")
    for name, default in kernel.param_defaults.items():
        print(f"  --{name.replace('_', '-'):<22} (default {default})")
    if not kernel.param_defaults:
        print("  (none)")
    print()
    print(USAGE, end="")


def _write(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _check_writable(option, path):
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        raise Error(f"run: --{option} {path}: directory '{parent}' does not exist")
    if os.path.isdir(path):
        raise Error(f"run: --{option} {path} is a directory")


def run_command(args):
    """``run FILE.py:KERNEL [options]``; returns the exit status."""
    if not args or args[0] in ("--help", "-h"):
        print(USAGE, end="")
        return 0
    kernel = load_file_kernel(args[0])
    options, param_texts = _parse(args[1:], kernel)
    if "help" in options:
        _help(kernel)
        return 0
    mode = "timed"
    if "timing-only" in options and "interpret" in options:
        raise Error("run: --timing-only and --interpret exclude each other")
    if "timing-only" in options:
        mode = "timing_only"
        if "check" in options or "output-dir" in options:
            raise Error("run: --timing-only computes no outputs to --check or write")
    if "interpret" in options:
        mode = "interpret"
        if {"trace", "summary-json", "csv"} & set(options):
            raise Error("run: --interpret measures no time; drop --trace, --csv and --summary-json")
    for option in ("trace", "summary-json", "csv", "dump-asm"):
        if option in options:
            _check_writable(option, options[option])
    out_dir = options.get("output-dir")
    if out_dir and os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise Error(f"run: --output-dir {out_dir} is not a directory")

    tensors, shapes = {}, {}
    for text in options.get("input", []):
        name, path = _split(text, "--input")
        if name in tensors:
            raise Error(f"run: --input {name} given twice")
        try:
            tensors[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise Error(f"run: --input {name}: cannot read {path}: {e}") from None
    for text in options.get("shape", []):
        name, value = _split(text, "--shape")
        if name in tensors:
            raise Error(f"run: {name} has both --input and --shape")
        if name in shapes:
            raise Error(f"run: --shape {name} given twice")
        shapes[name] = _shape(value, name)
    seed = options.get("seed", "0")
    if not seed.isdigit():
        raise Error(f"run: --seed takes a non-negative integer, not '{seed}'")
    overrides = dict(_split(text, "--set") for text in options.get("set", []))

    result = run(kernel, dtype=options.get("dtype", "fp32"), machine=options.get("machine", "trn2"),
                 overrides=overrides, mode=mode, trace=bool({"trace", "csv"} & set(options)), seed=int(seed),
                 shapes=shapes, check="check" in options, raise_on_failure=False, **param_texts, **tensors)
    if result.summary is not None:
        print(_core.summary_text(result.summary), end="")
    else:
        print(f"{kernel.name}: interpreted")
    for line in result.races + result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if "dump-asm" in options:
        _write(options["dump-asm"], result.asm())
    if "summary-json" in options:
        import json
        _write(options["summary-json"], json.dumps(result.summary, indent=2) + "\n")
    if "trace" in options:
        result.trace.save(options["trace"])
    if "csv" in options:
        result.trace.csv(options["csv"])
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        for name, array in result.outputs.items():
            path = os.path.join(out_dir, name + ".npy")
            np.save(path, array)
            print(f"wrote {path}")
    if "check" in options:
        ok = result.check_error <= result.tolerance
        print(f"check: normalized error {result.check_error:.3g} (tolerance {result.tolerance:.0e}): "
              f"{'ok' if ok else 'FAILED'}")
        return 0 if ok else 1
    return 0


def main(argv):
    if not argv or argv[0] != "run":
        print("usage: python3 -m neuronsim run FILE.py:KERNEL [options]", file=sys.stderr)
        return 2
    try:
        return run_command(argv[1:])
    except Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

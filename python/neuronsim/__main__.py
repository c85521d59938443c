"""``python3 -m neuronsim run FILE.py:KERNEL [options]``: what ``neuronsim run FILE.py:KERNEL``
runs. The options are those of ``neuronsim run`` (``--help`` lists them); the kernel's
parameters are flags in kebab-case. Errors print one ``error:`` line and exit 2."""

import json
import os
import sys
import traceback

import numpy as np

from . import _core
from .errors import Error
from .python_kernel import load_file_kernel
from .running import dry_run, run

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
  --strict                races, reads of never-written memory and unwritten outputs are errors
                          (exit 2, nothing printed or written), not warnings
  --no-race-check         skip race detection, which finds missing synchronization (on by
                          default); faster, and with --timing-only and no --trace or --csv one
                          thread drives every engine (the fast path); the same simulated times
  --dry-run               check every argument, input file, output path and the kernel's build,
                          then stop: nothing is simulated or written
  --check                 compare with the kernel's reference; exit 1 above the tolerance
  --help                  this text and the kernel's tensors and parameters
"""

_VALUED = {"input", "shape", "seed", "dtype", "output-dir", "trace", "summary-json", "csv", "dump-asm",
           "machine", "set"}
_FLAGS = {"timing-only", "interpret", "strict", "no-race-check", "dry-run", "check", "help"}
_FILES = ("trace", "summary-json", "csv", "dump-asm")  # in the order neuronsim run declares them
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
        arg = "--help" if args[i] == "-h" else args[i]
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
            options_known = [f"--{o}" for o in sorted(_VALUED | _FLAGS) + list(params)]
            hint = _core.did_you_mean(f"--{key}", options_known)
            known = ", ".join(f"--{p}" for p in params) or "none"
            raise Error(f"run {kernel.name}: unknown option --{key}{hint} (kernel parameters: {known})")
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
        raise Error(f"run: --shape {name}: shape '{text}' must be positive integers joined by x (e.g. 4x8x16)")
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


def _seed(text):
    """--seed as neuronsim run reads it: a non-negative integer below 10^19."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        raise Error(f"run: --seed takes a non-negative integer below 10^19, not '{text}'")
    return int(text)


def _read_inputs(options):
    tensors, shapes = {}, {}
    for text in options.get("input", []):
        name, path = _split(text, "--input")
        if name in tensors:
            raise Error(f"run: --input {name} given twice")
        tensors[name] = _core.read_npy(path)  # the checks and messages of neuronsim run's --input
    for text in options.get("shape", []):
        name, value = _split(text, "--shape")
        if name in tensors:
            raise Error(f"run: {name} has both --input and --shape")
        if name in shapes:
            raise Error(f"run: --shape {name} given twice")
        shapes[name] = _shape(value, name)
    return tensors, shapes


def _check_required(kernel, tensors, shapes):
    """A required input with no --input, --shape or default shape: the error names the flags
    that give it (neuronsim run's words, not the Python API's)."""
    for name, _, optional in kernel.spec.inputs:
        if optional or name in tensors or name in shapes:
            continue
        default = kernel.spec.default_shapes.get(name)
        if default and not tensors:
            continue
        raise Error(f"{kernel.name}: input {name} is required: give --input {name}=FILE.npy or --shape "
                    f"{name}={'x'.join(map(str, default)) if default else 'AxBxC'}"
                    f"{' (its default shape: defaults apply only when no --input is given)' if default else ''}")


def _mode(options):
    if "timing-only" in options and "interpret" in options:
        raise Error("run: --timing-only and --interpret exclude each other")
    if "timing-only" in options:
        if "check" in options or "output-dir" in options:
            raise Error("run: --timing-only computes no outputs to --check or write; drop --check and --output-dir")
        return "timing_only"
    if "interpret" in options:
        if {"trace", "summary-json", "csv"} & set(options):
            raise Error("run: --interpret measures no time; drop --trace, --csv and --summary-json")
        return "interpret"
    return "timed"


def _races(options):
    """run()'s races= for the command line: "warn", or "off" with --no-race-check."""
    if "no-race-check" not in options:
        return "warn"
    if "strict" in options:
        raise Error("run: --strict makes races errors but --no-race-check detects none; drop one of them")
    if "interpret" in options:
        raise Error("run: --interpret detects no races; drop --no-race-check")
    return "off"


def _npy_path(out_dir, name):
    return os.path.join(out_dir, name + ".npy")


def _declare_outputs(options):
    """The files asked for, checked now as neuronsim run checks them (isa/file_write.h): a
    missing --output-dir is created at commit, unless it cannot be."""
    files = _core.OutputSet()
    if "output-dir" in options:
        files.add_directory("--output-dir", options["output-dir"])
    for option in _FILES:
        if option in options:
            files.add(f"--{option}", options[option])
    return files


def _write_outputs(files, options, result):
    """Stages every file asked for, then commits them all at once."""
    if "dump-asm" in options:
        with open(files.stage(options["dump-asm"]), "w") as f:
            f.write(result.asm())
    if "summary-json" in options:
        with open(files.stage(options["summary-json"]), "w") as f:
            f.write(json.dumps(result.summary, indent=2) + "\n")
    if "trace" in options:
        result.trace.save(files.stage(options["trace"]))
    if "csv" in options:
        result.trace.csv(files.stage(options["csv"]))
    written = []
    if "output-dir" in options:
        for name, array in result.outputs.items():
            path = _npy_path(options["output-dir"], name)
            files.add("--output-dir", path)
            with open(files.stage(path), "wb") as f:
                np.save(f, np.asarray(array, dtype=np.float32))
            written.append(path)
    files.commit()
    for path in written:
        print(f"wrote {path}")


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
    mode = _mode(options)
    races = _races(options)
    tensors, shapes = _read_inputs(options)
    _check_required(kernel, tensors, shapes)
    how = dict(dtype=options.get("dtype", "fp32"), machine=options.get("machine", "trn2"), mode=mode,
               overrides=dict(_split(text, "--set") for text in options.get("set", [])),
               seed=_seed(options.get("seed", "0")), shapes=shapes, check="check" in options)
    files = _declare_outputs(options)
    if "dry-run" in options:
        for name in dry_run(kernel, **how, **param_texts, **tensors):
            if "output-dir" in options:
                files.add("--output-dir", _npy_path(options["output-dir"], name))
        print(f"run {kernel.name}: dry run: arguments, input files and output paths are valid; nothing was "
              "simulated or written")
        return 0

    result = run(kernel, **how, trace=bool({"trace", "csv"} & set(options)), races=races,
                 strict="strict" in options, raise_on_failure=False, **param_texts, **tensors)
    if result.summary is not None:
        print(_core.summary_text(result.summary), end="")
    else:
        print(f"{kernel.name}: interpreted")
    for line in result.races + result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    _write_outputs(files, options, result)
    if "check" in options:
        ok = result.check_error <= result.tolerance
        print(f"check: normalized error {result.check_error:.3g} (tolerance {result.tolerance:.0e}): "
              f"{'ok' if ok else 'FAILED'}")
        return 0 if ok else 1
    return 0


def _user_fault(exc, target):
    """"FILE:LINE: Type: message" for an exception raised by the kernel's file or a module beside
    it (the innermost such frame), or None when it came from elsewhere (neuronsim itself)."""
    folder = os.path.dirname(os.path.abspath(target.rpartition(":")[0] if ":" in target else target))
    package = os.path.dirname(os.path.abspath(__file__))

    def mine(filename):
        path = os.path.abspath(filename)
        return path.startswith(folder + os.sep) and not path.startswith(package + os.sep)

    if isinstance(exc, SyntaxError) and exc.filename and mine(exc.filename):
        where, text = f"{exc.filename}:{exc.lineno}", exc.msg
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if mine(f.filename)]
        if not frames:
            return None
        where, text = f"{frames[-1].filename}:{frames[-1].lineno}", str(exc)
    text = text.strip().splitlines()[0] if text and text.strip() else ""
    return f"{where}: {type(exc).__name__}" + (f": {text}" if text else "")


def main(argv):
    if not argv or argv[0] != "run":
        print("usage: python3 -m neuronsim run FILE.py:KERNEL [options]", file=sys.stderr)
        return 2
    try:
        return run_command(argv[1:])
    except Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the user's kernel file raised: one line naming its line, as errors do
        fault = _user_fault(e, argv[1]) if len(argv) > 1 else None
        if fault is None:
            raise
        print(f"error: {fault}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""neuronsim.run: a kernel on arrays, through the same harness as ``neuronsim run``."""

import numpy as np

from . import _core
from . import python_kernel as kernels
from .errors import CheckError, Error, RaceError, StrictError
from .results import Result, last_line, with_lines

_MODES = ("timed", "timing_only", "interpret")


def _as_array(value, name):
    """numpy or anything array-like; torch tensors without importing torch."""
    if type(value).__module__.split(".")[0] == "torch":
        value = value.detach().cpu().float().numpy()
    array = np.asarray(value)
    if array.dtype.kind not in "fiub":
        raise Error(f"{name} is not a numeric array ({array.dtype})")
    return array


def _param_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(str(int(v)) for v in value)
    return str(value)


def run(kernel, *, dtype="fp32", machine="trn2", overrides=None, mode="timed", trace=True, seed=0,
        shapes=None, check=False, races="raise", strict=False, raise_on_failure=True, **tensors_and_params):
    """Builds ``kernel`` (a library kernel's name, a Python kernel, its name, or
    "file.py:name"), runs it and returns a Result.

    Keyword arguments name the kernel's input tensors (numpy arrays, torch tensors or nested
    lists, converted to the kernel ``dtype``, "fp32" or "bf16") and its parameters (API names:
    ``padding=(1, 1, 0)``, ``compute_dx=False``). Inputs not given are generated like the CLI
    does: from ``shapes`` {name: shape}, shapes the kernel derives, or, when no tensor is given,
    the defaults, with normal values from ``seed``.

    ``machine``: "trn2", "trn1" or a machine JSON file; ``overrides``: {key: value} of its
    parameters (the CLI's --set).
    ``mode``: "timed" (default), "timing_only" (no outputs) or "interpret" (no time).
    ``check``: compare with the kernel's reference and raise CheckError above the tolerance
    (1e-4 fp32, 2e-2 bf16). ``races``: "raise" (RaceError naming the kernel lines), "warn"
    (left in ``result.races``) or "off" (not detected, the CLI's --no-race-check: the same
    times, less host time; with mode="timing_only" and trace=False one thread drives every
    engine). ``strict=True`` (the CLI's --strict): races, even with races="warn", reads of never-written memory, outputs no instruction writes and schedule
    parameters that change nothing here raise StrictError. ``raise_on_failure=False``: neither races nor a failed check
    raise (the command line reports them itself).
    """
    spec, tensors, params = _request(kernel, mode, tensors_and_params)
    if races not in ("raise", "warn", "off"):
        raise Error(f"races takes 'raise', 'warn' or 'off', not '{races}'")
    if races == "off" and strict:
        raise Error("strict=True makes races errors but races='off' detects none; drop one of them")
    if races == "off" and mode == "interpret":
        raise Error("mode='interpret' detects no races; drop races='off'")
    core = _core.run(spec, tensors, _shape_map(shapes), params, dtype, machine, _sets(overrides), mode, bool(trace),
                     int(seed), bool(check), bool(strict), races != "off")
    result = Result(spec.name, core)
    raise_races = result.races and races == "raise" and (raise_on_failure or strict)
    if raise_races:
        first = core.races[0]
        raise RaceError(with_lines(first, core.notes) + _more(len(result.races)), last_line(first, core.notes) or "?")
    if strict and core.ineffective_params:
        raise StrictError(f"{spec.name}: strict: {core.ineffective_params[0]}")
    if strict and core.unwritten_outputs:
        raise StrictError(f"{spec.name}: strict: {core.unwritten_outputs[0]}")
    if strict and (result.races or result.reads):
        first = (result.races + result.reads)[0]
        races_text = _count(len(result.races), "race", "races")
        reads_text = _count(len(result.reads), "read", "reads")
        raise StrictError(f"{spec.name}: strict: {races_text} and {reads_text} of never-written memory "
                          f"(first: {first})")
    if not raise_on_failure:
        return result
    if check and not result.check_error <= result.tolerance:
        raise CheckError(f"{spec.name}: normalized error {result.check_error:.3g} above the tolerance "
                         f"{result.tolerance:.0e}")
    return result


def dry_run(kernel, *, dtype="fp32", machine="trn2", overrides=None, mode="timed", seed=0, shapes=None, check=False,
            **tensors_and_params):
    """What the CLI's ``--dry-run`` checks: ``run`` with the same arguments up to the kernel's
    build (parameters, machine, tensors, shapes, the program itself); nothing is simulated.
    Returns the names of the outputs the kernel declares."""
    spec, tensors, params = _request(kernel, mode, tensors_and_params)
    return _core.dry_run(spec, tensors, _shape_map(shapes), params, dtype, machine, _sets(overrides), mode,
                         int(seed), bool(check))


def _request(kernel, mode, tensors_and_params):
    """(KernelSpec, {input: array}, [(parameter, text)]) of a run's arguments."""
    spec, _ = kernels.find(kernel)
    if mode not in _MODES:
        raise Error(f"mode takes {', '.join(_MODES)}, not '{mode}'")
    input_names = [name for name, _, _ in spec.inputs]
    param_names = [p[0] for p in spec.params]
    tensors, params = {}, []
    for name, value in tensors_and_params.items():
        if name in input_names:
            tensors[name] = _as_array(value, f"{spec.name}: {name}")
        elif name in param_names:
            params.append((name, _param_text(value)))
        else:
            raise Error(f"{spec.name} has no input or parameter named '{name}' (inputs: {', '.join(input_names)}; "
                        f"parameters: {', '.join(param_names) or 'none'})")
    return spec, tensors, params


def _sets(overrides):
    return [f"{k}={v}" for k, v in (overrides or {}).items()]


def _shape_map(shapes):
    return {k: [int(d) for d in v] for k, v in (shapes or {}).items()}


def _more(count):
    return "" if count == 1 else f" (and {count - 1} more in result.races; run with races='warn')"


def _count(count, one, many):
    return f"{count} {one if count == 1 else many}"

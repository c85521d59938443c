"""Python kernels: ``@neuronsim.kernel`` turns a function into a kernel the builder, the
simulator, ``neuronsim.run`` and ``neuronsim run file.py:name`` can run."""

import importlib.util
import inspect
import os
import sys

import numpy as np

from . import _context
from . import _core
from .errors import Error

_registry = {}  # name -> Kernel, in definition order


def _param_type(value):
    """(C++ parameter type, default text) of a kernel parameter's default value."""
    if isinstance(value, bool):
        return "bool", "true" if value else "false"
    if isinstance(value, int):
        return "int", str(value)
    if isinstance(value, (tuple, list)) and len(value) in (3, 6) and all(isinstance(v, int) for v in value):
        return f"int{len(value)}", ",".join(str(v) for v in value)
    if isinstance(value, (float, str)):
        return "string", str(value)
    raise Error(f"kernel parameter default {value!r}: use an int, float, bool, str or a tuple of 3 or 6 ints")


class Kernel:
    """A kernel written in Python. Arguments without a default are input tensors (HBM views),
    those defaulting to None optional inputs, the others parameters typed by their default.
    The function declares its outputs with ``nl.ndarray(..., buffer=nl.shared_hbm)``."""

    def __init__(self, fn, name=None, shapes=None, reference=None, description=None):
        self.fn = fn
        self.name = name or fn.__name__
        self.reference = reference
        self.inputs = []  # (name, optional)
        self.param_defaults = {}
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise Error(f"kernel {self.name}: *args and **kwargs cannot name tensors or parameters")
            if p.default is p.empty or p.default is None:
                self.inputs.append((p.name, p.default is None))
            else:
                self.param_defaults[p.name] = p.default
        params = [(n, *_param_type(v)) for n, v in self.param_defaults.items()]
        doc = (inspect.getdoc(fn) or "").strip().splitlines()
        shapes = {k: [int(d) for d in v] for k, v in (shapes or {}).items()}
        self.output_names = []
        self.spec = _core.python_kernel(self.name, description or (doc[0] if doc else "a Python kernel"),
                                        self.inputs, params, shapes, self._build,
                                        None if reference is None else self._reference)

    def _params(self, values):
        """Parameter values as the kernel's defaults type them (floats arrive as text)."""
        out = {}
        for name, value in values.items():
            default = self.param_defaults.get(name)
            if isinstance(default, float) and isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    raise Error(f"{self.name}: parameter {name} takes a number, not '{value}'") from None
            elif isinstance(default, tuple):
                value = tuple(value)
            out[name] = value
        return out

    def _build(self, builder, inputs, params):
        build = _context.Build(builder, next(iter(inputs.values())).dtype if inputs else None)
        with _context.building(build):
            result = self.fn(**inputs, **self._params(params))
        self.output_names = [t.name for t in build.outputs]
        returned = result if isinstance(result, (tuple, list)) else () if result is None else (result,)
        for value in (returned.values() if isinstance(returned, dict) else returned):
            if not (isinstance(value, _core.HbmTensor) and value.name in self.output_names):
                raise Error(f"{self.name} returns {value!r}; a kernel returns its nl.shared_hbm outputs (or nothing)")
        if not self.output_names:
            raise Error(f"{self.name} declares no output (nl.ndarray(shape, dtype, buffer=nl.shared_hbm))")

    def _reference(self, inputs, params):
        accepted = inspect.signature(self.reference).parameters
        takes_all = any(p.kind == p.VAR_KEYWORD for p in accepted.values())
        kwargs = {k: v for k, v in {**inputs, **self._params(params)}.items() if takes_all or k in accepted}
        result = self.reference(**kwargs)
        if isinstance(result, dict):
            return {k: np.asarray(v, dtype=np.float32) for k, v in result.items()}
        arrays = result if isinstance(result, (tuple, list)) else (result,)
        if len(arrays) != len(self.output_names):
            raise Error(f"{self.name}: the reference returns {len(arrays)} arrays for the outputs "
                        f"{', '.join(self.output_names)}")
        return {n: np.asarray(a, dtype=np.float32) for n, a in zip(self.output_names, arrays)}

    def __call__(self, *args, **kwargs):
        """Runs the kernel on arrays (inputs in order, or by name) and returns its output, or
        a tuple of its outputs in declaration order."""
        from .running import run
        if len(args) > len(self.inputs):
            raise Error(f"{self.name} takes {len(self.inputs)} input tensors, got {len(args)}")
        for (name, _), value in zip(self.inputs, args):
            kwargs[name] = value
        outputs = run(self, **kwargs).outputs
        values = tuple(outputs[n] for n in self.output_names)
        return values[0] if len(values) == 1 else values

    def __repr__(self):
        return f"<neuronsim kernel {self.name}>"


def kernel(fn=None, *, name=None, shapes=None, reference=None, description=None):
    """Decorator: ``@neuronsim.kernel`` or ``@neuronsim.kernel(shapes={"x": (128, 512)},
    reference=numpy_fn)``. ``shapes`` are the default shapes of generated inputs (a run with
    no tensors given); ``reference(**inputs, **params)`` returns the expected output(s) for
    ``check=True``. The kernel is registered under its name for ``neuronsim.run(name)``."""
    def wrap(f):
        k = Kernel(f, name=name, shapes=shapes, reference=reference, description=description)
        if k.name in _core.library_kernels():
            raise Error(f"kernel {k.name}: a library kernel has that name")
        _registry[k.name] = k
        return k
    return wrap(fn) if fn is not None else wrap


def load_file_kernel(target):
    """The kernel ``path/to/file.py:name`` (the file is imported as a module). A bare
    ``file.py`` is an error listing the file's kernels."""
    path, _, name = target.rpartition(":") if not target.endswith(".py") else (target, "", "")
    if not path.endswith(".py"):
        raise Error(f"'{target}' is not FILE.py:KERNEL")
    if os.path.isdir(path):
        raise Error(f"{path}: cannot open: it is a directory")
    if not os.path.isfile(path):
        raise Error(f"{path}: no such file")
    with open(path, "rb") as source:
        if b"\0" in source.read():
            raise Error(f"Python file '{path}' is not a text file (it holds a NUL byte)")
    module_name = "neuronsim_user_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)  # the file may import its neighbours
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    found = getattr(module, name, None) if name else None
    if not isinstance(found, Kernel):
        kernels = ", ".join(k for k, v in vars(module).items() if isinstance(v, Kernel)) or "none"
        if not name:
            raise Error(f"{path}: name the kernel as {path}:KERNEL (kernels: {kernels})")
        raise Error(f"{path} has no kernel named '{name}' (kernels: {kernels})")
    return found


def find(kernel_or_name):
    """A Kernel, a registered Python kernel's name, FILE.py:NAME, or a library kernel's name ->
    (KernelSpec, Kernel or None)."""
    if isinstance(kernel_or_name, Kernel):
        return kernel_or_name.spec, kernel_or_name
    if not isinstance(kernel_or_name, str):
        raise Error(f"run takes a kernel or a kernel name, not {type(kernel_or_name).__name__}")
    if ".py:" in kernel_or_name:
        k = load_file_kernel(kernel_or_name)
        return k.spec, k
    if kernel_or_name in _registry:
        return _registry[kernel_or_name].spec, _registry[kernel_or_name]
    return _core.library_kernel(kernel_or_name), None

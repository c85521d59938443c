"""neuronsim: a cycle-approximate NeuronCore simulator and its kernel library, from Python.

    import neuronsim
    import neuronsim.language as nl
    import neuronsim.isa as nisa

    result = neuronsim.run("conv3d_bwd", dy=dy, x_in=x, filters=w, padding=1, dtype="bf16")
    result["dx"], result.summary["total_ns"], result.trace.save("t.json")

    @neuronsim.kernel(shapes={"x": (128, 512)})
    def double(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nisa.tensor_scalar(t, t, nl.multiply, 2.0)
        nl.store(out, t)
        return out

docs/python.md is the tutorial.
"""

from . import _core
from . import isa
from . import language
from .errors import CheckError, Error, KernelError, RaceError, StrictError
from .python_kernel import Kernel, kernel
from .results import Result
from .running import run


def library_kernels():
    """Names of the C++ library kernels (neuronsim list)."""
    return _core.library_kernels()


def describe(name):
    """A kernel's spec: name, description, inputs, outputs, params, default_shapes."""
    from .python_kernel import find
    return find(name)[0]


__all__ = ["run", "kernel", "Kernel", "Result", "Error", "KernelError", "RaceError", "StrictError", "CheckError",
           "library_kernels", "describe", "isa", "language"]

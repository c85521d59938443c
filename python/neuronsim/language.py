"""Kernel language, NKI style (``import neuronsim.language as nl``): dtypes, buffers, operators,
tile allocation, loads and stores, loops.

Tiles are ``[partitions, free...]``; SBUF and PSUM tiles are freed when the last Python
reference to them (or to a view of them) goes away, so ``t = nl.load(...)`` in a loop reuses
two buffers by itself. Every call records the kernel's ``file:line`` on its instructions.
"""

import contextlib

import numpy as np

from . import _context
from . import _core

# ---- dtypes --------------------------------------------------------------------------------
float32 = _core.Dtype.fp32
bfloat16 = _core.Dtype.bf16
float16 = _core.Dtype.fp16
float8_e4m3 = _core.Dtype.fp8_e4m3
float8_e5m2 = _core.Dtype.fp8_e5m2
int32 = _core.Dtype.int32
uint8 = _core.Dtype.uint8

_DTYPE_NAMES = {"fp32": float32, "float32": float32, "bf16": bfloat16, "bfloat16": bfloat16,
                "fp16": float16, "float16": float16, "int32": int32, "uint8": uint8,
                "fp8_e4m3": float8_e4m3, "fp8_e5m2": float8_e5m2}

# ---- buffers -------------------------------------------------------------------------------
sbuf = "sbuf"  #: on-chip state buffer (tiles [partitions, free...])
psum = "psum"  #: matmul accumulation buffer
shared_hbm = "shared_hbm"  #: HBM, a kernel output
hbm = "hbm"  #: HBM scratch, neither input nor output

# ---- ALU operators (tensor_tensor, tensor_scalar, tensor_reduce, ...) -------------------------
bypass = _core.AluOp.bypass
add = _core.AluOp.add
subtract = _core.AluOp.subtract
multiply = _core.AluOp.multiply
divide = _core.AluOp.divide
maximum = max = _core.AluOp.max
minimum = min = _core.AluOp.min
equal = _core.AluOp.is_equal
not_equal = _core.AluOp.not_equal
less = _core.AluOp.is_lt
less_equal = _core.AluOp.is_le
greater = _core.AluOp.is_gt
greater_equal = _core.AluOp.is_ge

# ---- activation functions (activation) ------------------------------------------------------
copy = _core.ActFn.copy
relu = _core.ActFn.relu
sigmoid = _core.ActFn.sigmoid
tanh = _core.ActFn.tanh
silu = _core.ActFn.silu
gelu = _core.ActFn.gelu
gelu_apprx_tanh = _core.ActFn.gelu_tanh
exp = _core.ActFn.exp
square = _core.ActFn.square
sqrt = _core.ActFn.sqrt
rsqrt = _core.ActFn.rsqrt
reciprocal = _core.ActFn.reciprocal

_ALU_UFUNCS = {np.add: add, np.subtract: subtract, np.multiply: multiply, np.divide: divide,
               np.maximum: maximum, np.minimum: minimum, np.max: maximum, np.min: minimum,
               np.equal: equal, np.not_equal: not_equal, np.less: less, np.less_equal: less_equal,
               np.greater: greater, np.greater_equal: greater_equal}
_ACT_UFUNCS = {np.exp: exp, np.tanh: tanh, np.sqrt: sqrt, np.square: square,
               np.reciprocal: reciprocal}


class tile_size:
    """Hardware tile limits (trn2 and trn1)."""
    pmax = 128  #: partitions
    psum_fmax = 512  #: fp32 elements per partition of one PSUM bank
    gemm_stationary_fmax = 128  #: nc_matmul stationary free size
    gemm_moving_fmax = 512  #: nc_matmul moving free size


def affine_range(*args):
    """``range``: the loop is plain Python; the builder orders what must be ordered."""
    return range(*args)


sequential_range = static_range = affine_range


def as_dtype(dtype):
    """A neuronsim dtype from a dtype, its name or a numpy dtype."""
    if isinstance(dtype, _core.Dtype):
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name in _DTYPE_NAMES:
        return _DTYPE_NAMES[name]
    _context.fail(f"unknown dtype {dtype!r} (nl.float32, nl.bfloat16, ...)")


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


def alu_op(op, what="op"):
    if isinstance(op, _core.AluOp):
        return op
    if _hashable(op) and op in _ALU_UFUNCS:
        return _ALU_UFUNCS[op]
    _context.fail(f"{what} takes an ALU operator such as nl.add or nl.maximum, not {op!r}")


def act_fn(op):
    if isinstance(op, _core.ActFn):
        return op
    if _hashable(op) and op in _ACT_UFUNCS:
        return _ACT_UFUNCS[op]
    _context.fail(f"activation takes a function such as nl.exp or nl.relu, not {op!r}")


def check_tile(value, what):
    if not isinstance(value, _core.Tile):
        _context.fail(f"{what} must be an SBUF or PSUM tile, not {type(value).__name__}")
    return value


def ndarray(shape, dtype, buffer=sbuf, name=""):
    """A new tensor: an SBUF or PSUM tile ``[partitions, free...]``, or an HBM tensor
    (``buffer=nl.shared_hbm``: a kernel output, named ``name`` or out, out1, ...)."""
    shape = [int(d) for d in shape]
    dtype = as_dtype(dtype)
    if buffer == sbuf:
        return _context.issue(lambda b: b.sbuf(shape, dtype, name))
    if buffer == psum:
        return _context.issue(lambda b: b.psum(shape, dtype, name))
    if buffer in (shared_hbm, hbm):
        build = _context.current()
        if not name:
            name = "out" if build.unnamed_outputs == 0 else f"out{build.unnamed_outputs}"
            build.unnamed_outputs += 1
        if buffer == hbm:
            return _context.issue(lambda b: b.internal(name, shape, dtype))
        tensor = _context.issue(lambda b: b.output(name, shape, dtype))
        build.outputs.append(tensor)
        return tensor
    _context.fail(f"buffer takes nl.sbuf, nl.psum, nl.shared_hbm or nl.hbm, not {buffer!r}")


def zeros(shape, dtype, buffer=sbuf, name=""):
    """An SBUF or PSUM tile filled with 0 (a VectorE memset)."""
    if buffer not in (sbuf, psum):
        _context.fail("nl.zeros makes SBUF or PSUM tiles")
    tile = ndarray(shape, dtype, buffer, name)
    _context.issue(lambda b: b.memset(tile, 0.0, _core.Engine.vector))
    return tile


def load(src, dtype=None, name=""):
    """A new SBUF tile holding ``src`` (an HBM view; its axis 0 becomes the partitions), loaded
    by one DMA; ``dtype`` converts on the way."""
    if not isinstance(src, _core.HbmTensor):
        _context.fail(f"nl.load reads an HBM tensor, not {type(src).__name__}")
    tile = ndarray(src.shape, src.dtype if dtype is None else dtype, sbuf, name)
    _context.issue(lambda b: b.dma_copy(tile, src, -1, _core.Engine.sync))
    return tile


def store(dst, value):
    """Writes tile ``value`` to HBM view ``dst`` with one DMA."""
    if not isinstance(dst, _core.HbmTensor):
        _context.fail(f"nl.store writes an HBM tensor, not {type(dst).__name__}")
    check_tile(value, "nl.store value")
    _context.issue(lambda b: b.dma_copy(dst, value, -1, _core.Engine.sync))


def release(tile):
    """Frees ``tile``'s allocation now instead of when its last reference goes away."""
    check_tile(tile, "nl.release")
    _context.issue(lambda b: tile.release())


@contextlib.contextmanager
def no_sync():
    """Instructions issued inside get none of the builder's waits: a what-if to see what a
    wait costs. The race detector reports what breaks (instructions after the block on the
    same engine may rely on a dropped wait too)."""
    builder = _context.current().builder
    builder.set_auto_sync(False)
    try:
        yield
    finally:
        builder.set_auto_sync(True)


def _located(method):
    """``method`` raising KernelError at the kernel's line instead of a bare error."""
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except _context.KernelError:
            raise
        except _core.Error as e:
            _context.fail(str(e))
    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


for _view in (_core.HbmTensor, _core.Tile):
    for _name in ("__getitem__", "reshape", "permute", "split", "merge", "broadcast"):
        if hasattr(_view, _name):
            setattr(_view, _name, _located(getattr(_view, _name)))

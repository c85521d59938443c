"""One function per instruction, NKI style (``import neuronsim.isa as nisa``): the destination
comes first, as in current NKI. The builder adds the semaphores, checks the allocation and
the hardware rules; an error names the kernel line that issued the instruction."""

from . import _context
from . import _core
from . import language as nl


class engine:
    """Where an instruction runs (``engine=nisa.engine.gpsimd``)."""
    tensor = _core.Engine.tensor
    vector = _core.Engine.vector
    scalar = _core.Engine.scalar
    gpsimd = _core.Engine.gpsimd
    sync = _core.Engine.sync  #: the sequencer: triggers DMAs, no datapath


def _engine(value, default):
    """The engine asked for (the hardware rules check it fits the instruction), else default."""
    if value is None:
        return default
    if not isinstance(value, _core.Engine):
        _context.fail(f"engine takes nisa.engine.vector, .gpsimd, ..., not {value!r}")
    return value


def _dma_side(value, what):
    if not isinstance(value, (_core.HbmTensor, _core.Tile)):
        _context.fail(f"{what} must be an HBM tensor or a tile, not {type(value).__name__}")
    return value


def dma_copy(dst, src, queue=None, engine=None):
    """dst = src between any two of HBM, SBUF and PSUM (dtype converted). ``queue`` 0..15
    picks the DMA queue (default: the trigger engine's round robin); ``engine`` triggers it
    (sync, scalar or gpsimd)."""
    _dma_side(dst, "dma_copy dst")
    _dma_side(src, "dma_copy src")
    issuer = _engine(engine, _core.Engine.sync)
    _context.issue(lambda b: b.dma_copy(dst, src, -1 if queue is None else queue, issuer))


def dma_transpose(dst, src, queue=None, engine=None):
    """dst [B partitions, A] = src [A, B]^T by DMA (2- or 4-byte dtypes)."""
    _dma_side(dst, "dma_transpose dst")
    _dma_side(src, "dma_transpose src")
    issuer = _engine(engine, _core.Engine.sync)
    _context.issue(lambda b: b.dma_transpose(dst, src, -1 if queue is None else queue, issuer))


def nc_matmul(dst, stationary, moving, accumulate=False):
    """dst (PSUM [M, N] fp32) = stationary[K, M]^T @ moving[K, N] on TensorE, added to dst
    when ``accumulate``."""
    for value, what in ((dst, "dst"), (stationary, "stationary"), (moving, "moving")):
        nl.check_tile(value, f"nc_matmul {what}")
    _context.issue(lambda b: b.matmul(dst, stationary, moving, bool(accumulate)))


def nc_transpose(dst, data, engine=None):
    """dst [F, P] = data [P, F]^T on TensorE (dst in PSUM) or VectorE (P, F <= 32)."""
    nl.check_tile(dst, "nc_transpose dst")
    nl.check_tile(data, "nc_transpose data")
    chosen = _engine(engine, _core.Engine.tensor)
    _context.issue(lambda b: b.transpose(dst, data, chosen))


def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None):
    """dst = op(data * scale + bias) on ScalarE; ``scale`` a number or a [P, 1] tile, ``bias``
    a [P, 1] tile; ``reduce_res`` [P, 1] receives the row sums of dst (``reduce_op`` nl.add)."""
    nl.check_tile(dst, "activation dst")
    nl.check_tile(data, "activation data")
    fn = nl.act_fn(op)
    if bias is not None:
        nl.check_tile(bias, "activation bias")
    if reduce_res is not None:
        nl.check_tile(reduce_res, "activation reduce_res")
        if reduce_op not in (None, nl.add):
            _context.fail("activation reduces with nl.add only (ScalarE's accumulators sum)")
    _context.issue(lambda b: b.activation(dst, data, fn, scale, bias, reduce_res))


def tensor_tensor(dst, data1, data2, op, engine=None):
    """dst = data1 op data2, element-wise, on VectorE (or GpSimd)."""
    for value, what in ((dst, "dst"), (data1, "data1"), (data2, "data2")):
        nl.check_tile(value, f"tensor_tensor {what}")
    alu = nl.alu_op(op)
    chosen = _engine(engine, _core.Engine.vector)
    _context.issue(lambda b: b.tensor_tensor(dst, data1, data2, alu, chosen))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  engine=None):
    """dst = (data op0 operand0) op1 operand1; each operand a number or a [P, 1] tile;
    ``reverseN`` swaps opN's operands."""
    nl.check_tile(dst, "tensor_scalar dst")
    nl.check_tile(data, "tensor_scalar data")
    alu0 = nl.alu_op(op0, "op0")
    alu1 = nl.bypass if op1 is None else nl.alu_op(op1, "op1")
    if op1 is not None and operand1 is None:
        _context.fail("tensor_scalar: op1 needs operand1")
    chosen = _engine(engine, _core.Engine.vector)
    _context.issue(lambda b: b.tensor_scalar(dst, data, alu0, operand0, alu1, 0.0 if operand1 is None else operand1,
                                             chosen, bool(reverse0), bool(reverse1)))


def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, engine=None):
    """dst = (data op0 operand0) op1 operand1; operand0 a number or [P, 1] tile, operand1 a
    tile shaped like data."""
    for value, what in ((dst, "dst"), (data, "data"), (operand1, "operand1")):
        nl.check_tile(value, f"scalar_tensor_tensor {what}")
    alu0 = nl.alu_op(op0, "op0")
    alu1 = nl.alu_op(op1, "op1")
    chosen = _engine(engine, _core.Engine.vector)
    _context.issue(lambda b: b.scalar_tensor_tensor(dst, data, alu0, operand0, alu1, operand1, chosen))


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, engine=None):
    """dst = op-reduction (nl.add, nl.max, nl.min) of data over ``axis``: the last free axes,
    numbered from 1 as in NKI (an int or a tuple ending at the last axis). With ``keepdims``
    dst keeps the reduced axes as size 1."""
    nl.check_tile(dst, "tensor_reduce dst")
    nl.check_tile(data, "tensor_reduce data")
    axes = sorted({axis} if isinstance(axis, int) else set(axis))
    last = data.ndim - 1
    if not axes or axes[0] < 1 or axes != list(range(axes[0], last + 1)):
        _context.fail(f"tensor_reduce axis {axis!r} must be the last free axes of a rank-{data.ndim} "
                      f"tile, ending at {last}")
    alu = nl.alu_op(op)
    chosen = _engine(engine, _core.Engine.vector)
    target = dst
    if keepdims:
        kept = data.ndim - len(axes)
        if dst.shape[kept:] != (1,) * len(axes):
            _context.fail(f"tensor_reduce keepdims: dst {dst.shape} needs size-1 axes from {kept}")
        target = dst.reshape(dst.shape[:kept]) if kept > 1 else dst.reshape((dst.shape[0], 1))
    _context.issue(lambda b: b.tensor_reduce(target, data, alu, len(axes), bool(negate), chosen))


def tensor_copy(dst, src, engine=None):
    """dst = src converted to dst's dtype (VectorE, GpSimd or ScalarE)."""
    nl.check_tile(dst, "tensor_copy dst")
    nl.check_tile(src, "tensor_copy src")
    chosen = _engine(engine, _core.Engine.vector)
    _context.issue(lambda b: b.tensor_copy(dst, src, chosen))


def tensor_copy_predicated(dst, src, predicate, engine=None):
    """dst = src where predicate != 0; elsewhere dst keeps its value."""
    for value, what in ((dst, "dst"), (src, "src"), (predicate, "predicate")):
        nl.check_tile(value, f"tensor_copy_predicated {what}")
    chosen = _engine(engine, _core.Engine.vector)
    _context.issue(lambda b: b.copy_predicated(dst, predicate, src, chosen))


def memset(dst, value, engine=None):
    """dst = value."""
    nl.check_tile(dst, "memset dst")
    chosen = _engine(engine, _core.Engine.vector)
    _context.issue(lambda b: b.memset(dst, float(value), chosen))


def iota(dst, steps, offset=0, partition_step=0, engine=None):
    """dst[p, i...] = offset + partition_step * p + sum(steps[j] * i_j): one step per free axis
    (NKI writes this as an nl.arange expression)."""
    nl.check_tile(dst, "iota dst")
    chosen = _engine(engine, _core.Engine.gpsimd)
    _context.issue(lambda b: b.iota(dst, [int(s) for s in steps], int(offset), int(partition_step), chosen))


def affine_select(dst, data, steps, offset=0, partition_step=0, cmp=nl.greater_equal, on_false_value=0.0,
                  engine=None):
    """dst = data where (offset + partition_step * p + sum(steps[j] * i_j)) cmp 0, else
    ``on_false_value`` (a causal mask in one instruction)."""
    nl.check_tile(dst, "affine_select dst")
    nl.check_tile(data, "affine_select data")
    compare = nl.alu_op(cmp, "cmp")
    chosen = _engine(engine, _core.Engine.gpsimd)
    _context.issue(lambda b: b.affine_select(dst, data, [int(s) for s in steps], int(offset), int(partition_step),
                                             compare, float(on_false_value), chosen))

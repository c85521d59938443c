"""Row softmax in Python: y[r, :] = exp(x[r, :] - max(x[r, :])) / sum(exp(x[r, :] - max(x[r, :]))).

Run it: PYTHONPATH=build/python /usr/bin/python3 examples/softmax.py
Tuning story: see TUNING below (measured on the trn2 preset, fp32, [2048, 512]).
"""

import numpy as np

import neuronsim
import neuronsim.isa as nisa
import neuronsim.language as nl

P = nl.tile_size.pmax


def softmax_reference(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted.astype(np.float64))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


@neuronsim.kernel(shapes={"x": (2048, 512)}, reference=softmax_reference)
def softmax_v1(x):
    """Row softmax, 128 rows at a time: one load, five instructions, one store per tile."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm)
    for r0 in nl.affine_range(0, rows, P):
        n = min(P, rows - r0)
        t = nl.load(x[r0:r0 + n, :])
        neg_max = nl.ndarray((n, 1), nl.float32)
        nisa.tensor_reduce(neg_max, nl.max, t, axis=1, negate=True)
        e = nl.ndarray((n, cols), nl.float32)
        sums = nl.ndarray((n, 1), nl.float32)
        nisa.activation(e, nl.exp, t, bias=neg_max, reduce_res=sums)  # exp(x - max), row sums
        inv = nl.ndarray((n, 1), nl.float32)
        nisa.activation(inv, nl.reciprocal, sums)
        nisa.tensor_scalar(e, e, nl.multiply, inv)
        nl.store(out[r0:r0 + n, :], e)
    return out


@neuronsim.kernel(shapes={"x": (2048, 512)}, reference=softmax_reference)
def softmax_v2(x, rows_per_partition=4):
    """Row softmax, 128 x k rows per step: partition p holds k consecutive rows, so each DMA
    moves k times more contiguous bytes; stores are triggered by GpSimd so the next load on the
    sync queues never waits behind a store."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm)
    r0 = 0
    while r0 < rows:
        k = max(1, min(rows_per_partition, (rows - r0) // P))
        n = min(P, rows - r0)
        block = x[r0:r0 + n * k, :].split(0, [n, k])  # [n partitions, k rows, cols]
        t = nl.load(block)
        neg_max = nl.ndarray((n, k), nl.float32)
        nisa.tensor_reduce(neg_max, nl.max, t, axis=2, negate=True)
        e = nl.ndarray((n, k, cols), nl.float32)
        nisa.tensor_tensor(e, t, neg_max.broadcast(2, cols), nl.add)
        nisa.activation(e, nl.exp, e)
        sums = nl.ndarray((n, k), nl.float32)
        nisa.tensor_reduce(sums, nl.add, e, axis=2)
        inv = nl.ndarray((n, k), nl.float32)
        nisa.activation(inv, nl.reciprocal, sums)
        nisa.tensor_tensor(e, e, inv.broadcast(2, cols), nl.multiply)
        nisa.dma_copy(out[r0:r0 + n * k, :].split(0, [n, k]), e, engine=nisa.engine.gpsimd)
        r0 += n * k
    return out


TUNING = """
softmax [2048, 512] fp32, trn2:
  v1 (128 rows per step)                  : see docs/python.md
  v2 (512 rows per step, GpSimd stores)   : see docs/python.md
"""


if __name__ == "__main__":
    x = np.random.default_rng(0).standard_normal((2048, 512)).astype(np.float32)
    for kernel in (softmax_v1, softmax_v2):
        result = neuronsim.run(kernel, x=x, check=True)
        s = result.summary
        print(f"{kernel.name}: {s['total_ns'] / 1000:.1f} us, {s['instructions']} instructions, "
              f"DMA {s['dma']['achieved_gbps']:.0f} GB/s, error {result.check_error:.2g}")

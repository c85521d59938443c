"""Row softmax in Python: y[r, :] = exp(x[r, :] - max(x[r, :])) / sum(exp(x[r, :] - max(x[r, :]))).

Run it: PYTHONPATH=build/python /usr/bin/python3 examples/softmax.py
Tuning story (trn2 preset, fp32, [2048, 512]; docs/python.md tells it in full):
  v1 87.1 us: the report's critical path is DMA latency, triggers and transfers end to end:
     Sync triggers loads and stores in order, and each store waits for its
     tile's compute, so the next load cannot start early.
  v2 54.7 us: stores triggered by GpSimd (queues q14, q15), scaling alternated between VectorE
     and GpSimd. Tried and dropped: 512 rows per step (partition p holding 4 rows) made fewer,
     larger DMAs but needed broadcast tensor_tensor ops that kept VectorE 70% busy: 73.5 us.
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
def softmax_v2(x):
    """v1 with the stores triggered by GpSimd (its own DMA queues): a store waits for its tile's
    compute, and on Sync it held back the next tile's load behind it. The final scaling
    alternates between VectorE and GpSimd."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm)
    for step, r0 in enumerate(nl.affine_range(0, rows, P)):
        n = min(P, rows - r0)
        t = nl.load(x[r0:r0 + n, :])
        neg_max = nl.ndarray((n, 1), nl.float32)
        nisa.tensor_reduce(neg_max, nl.max, t, axis=1, negate=True)
        e = nl.ndarray((n, cols), nl.float32)
        sums = nl.ndarray((n, 1), nl.float32)
        nisa.activation(e, nl.exp, t, bias=neg_max, reduce_res=sums)
        inv = nl.ndarray((n, 1), nl.float32)
        nisa.activation(inv, nl.reciprocal, sums)
        nisa.tensor_scalar(e, e, nl.multiply, inv, engine=nisa.engine.vector if step % 2 == 0 else nisa.engine.gpsimd)
        nisa.dma_copy(out[r0:r0 + n, :], e, engine=nisa.engine.gpsimd)
    return out


if __name__ == "__main__":
    x = np.random.default_rng(0).standard_normal((2048, 512)).astype(np.float32)
    for kernel in (softmax_v1, softmax_v2):
        result = neuronsim.run(kernel, x=x, check=True)
        s = result.summary
        print(f"{kernel.name}: {s['total_ns'] / 1000:.1f} us, {s['instructions']} instructions, "
              f"DMA {s['dma']['achieved_gbps']:.0f} GB/s, error {result.check_error:.2g}")

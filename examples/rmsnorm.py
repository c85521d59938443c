"""RMSNorm in Python: y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * weight.

Run it: PYTHONPATH=build/python /usr/bin/python3 examples/rmsnorm.py
Tuning story (trn2 preset, fp32, x [2048, 1024]; docs/python.md tells it in full):
  v1 143.0 us: Sync triggers loads and stores in order; each store waits for its tile's
     compute, so loads cannot run ahead (Sync stalls on semaphores most of the run).
  v2  86.0 us: stores triggered by GpSimd (88.2 us alone), loads triggered alternately by Sync
     and ScalarE (85.6 us). Tried and dropped: writing the unused squares as bf16 (no change:
     ScalarE is not the bottleneck, VectorE's scalar_tensor_tensor is, at 42% busy).
"""

import numpy as np

import neuronsim
import neuronsim.isa as nisa
import neuronsim.language as nl

P = nl.tile_size.pmax


def rmsnorm_reference(x, weight, eps=1e-6):
    x64 = x.astype(np.float64)
    rstd = 1.0 / np.sqrt((x64 ** 2).mean(axis=-1, keepdims=True) + eps)
    return (x64 * rstd * weight.astype(np.float64)).astype(np.float32)


def weight_on_every_partition(weight):
    """An SBUF tile [128, D] whose every row is weight [D]: ones[1, 128]^T @ weight[1, D] on
    TensorE, 512 columns (one PSUM bank) at a time."""
    cols = weight.shape[0]
    w_row = nl.load(weight.reshape([1, cols]), dtype=nl.float32)
    ones = nl.ndarray((1, P), nl.float32)
    nisa.memset(ones, 1.0)
    w = nl.ndarray((P, cols), nl.float32, name="weight_rows")
    for c0 in range(0, cols, nl.tile_size.psum_fmax):
        c1 = min(cols, c0 + nl.tile_size.psum_fmax)
        acc = nl.ndarray((P, c1 - c0), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(acc, ones, w_row[:, c0:c1])
        nisa.tensor_copy(w[:, c0:c1], acc)
    return w


@neuronsim.kernel(shapes={"x": (2048, 1024), "weight": (1024,)}, reference=rmsnorm_reference)
def rmsnorm_v1(x, weight, eps=1e-6):
    """128 rows per step: ScalarE squares and sums each row, VectorE scales it."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm)
    w = weight_on_every_partition(weight)
    for r0 in nl.affine_range(0, rows, P):
        n = min(P, rows - r0)
        t = nl.load(x[r0:r0 + n])
        squares = nl.ndarray((n, cols), nl.float32)
        sums = nl.ndarray((n, 1), nl.float32)
        nisa.activation(squares, nl.square, t, reduce_res=sums)
        rstd = nl.ndarray((n, 1), nl.float32)
        nisa.tensor_scalar(rstd, sums, nl.multiply, 1.0 / cols, op1=nl.add, operand1=eps)
        nisa.activation(rstd, nl.rsqrt, rstd)
        y = nl.ndarray((n, cols), nl.float32)
        nisa.scalar_tensor_tensor(y, t, nl.multiply, rstd, nl.multiply, w[:n])
        nl.store(out[r0:r0 + n], y)
    return out


@neuronsim.kernel(shapes={"x": (2048, 1024), "weight": (1024,)}, reference=rmsnorm_reference)
def rmsnorm_v2(x, weight, eps=1e-6):
    """v1 with the stores triggered by GpSimd, so a load never queues behind a store that
    waits for compute, and the loads triggered alternately by Sync and ScalarE."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm)
    w = weight_on_every_partition(weight)
    for step, r0 in enumerate(nl.affine_range(0, rows, P)):
        n = min(P, rows - r0)
        t = nl.ndarray((n, cols), x.dtype)
        nisa.dma_copy(t, x[r0:r0 + n], engine=nisa.engine.sync if step % 2 == 0 else nisa.engine.scalar)
        squares = nl.ndarray((n, cols), nl.float32)
        sums = nl.ndarray((n, 1), nl.float32)
        nisa.activation(squares, nl.square, t, reduce_res=sums)
        rstd = nl.ndarray((n, 1), nl.float32)
        nisa.tensor_scalar(rstd, sums, nl.multiply, 1.0 / cols, op1=nl.add, operand1=eps)
        nisa.activation(rstd, nl.rsqrt, rstd)
        y = nl.ndarray((n, cols), nl.float32)
        nisa.scalar_tensor_tensor(y, t, nl.multiply, rstd, nl.multiply, w[:n])
        nisa.dma_copy(out[r0:r0 + n], y, engine=nisa.engine.gpsimd)
    return out


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 1024)).astype(np.float32)
    weight = rng.standard_normal(1024).astype(np.float32)
    for kernel in (rmsnorm_v1, rmsnorm_v2):
        result = neuronsim.run(kernel, x=x, weight=weight, check=True)
        s = result.summary
        print(f"{kernel.name}: {s['total_ns'] / 1000:.1f} us, {s['instructions']} instructions, "
              f"DMA {s['dma']['achieved_gbps']:.0f} GB/s, error {result.check_error:.2g}")

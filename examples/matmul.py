"""A tiled matmul in Python: out [M, N] = lhsT [K, M]^T @ rhs [K, N] (fp32 out).

Run it: PYTHONPATH=build/python /usr/bin/python3 examples/matmul.py
Tuning story (trn2 preset, fp32, lhsT [1024, 512], rhs [1024, 1024]; docs/python.md):
  v1 159.8 us, MFU 34%: each of the 8 x 2 output tiles reloads its 8 K tiles of both operands
     (208 instructions, 128 small DMAs); TensorE waits for DMAs.
  v2  81.7 us, MFU 67%: lhsT loaded once and kept, each rhs block loaded once in one DMA,
     evictions alternated between VectorE and ScalarE, stores triggered by GpSimd.
  The library's matmul (kernels/matmul) takes 63.3 us on the same inputs: it also
     double-buffers rhs groups and splits loads so the first matmul starts earlier.
"""

import numpy as np

import neuronsim
import neuronsim.isa as nisa
import neuronsim.language as nl

P = nl.tile_size.pmax
N_TILE = nl.tile_size.gemm_moving_fmax


def matmul_reference(lhsT, rhs):
    return (lhsT.astype(np.float64).T @ rhs.astype(np.float64)).astype(np.float32)


def tiles(total, size):
    """(start, stop) of each tile of `size` along an axis of `total`."""
    return [(s, min(total, s + size)) for s in range(0, total, size)]


@neuronsim.kernel(shapes={"lhsT": (1024, 512), "rhs": (1024, 1024)}, reference=matmul_reference)
def matmul_v1(lhsT, rhs):
    """Every [128 x 512] output tile loads its K tiles of both operands, accumulates them in
    PSUM, copies the result to SBUF on VectorE and stores it."""
    k, m = lhsT.shape
    n = rhs.shape[1]
    out = nl.ndarray((m, n), nl.float32, buffer=nl.shared_hbm)
    for m0, m1 in tiles(m, P):
        for n0, n1 in tiles(n, N_TILE):
            acc = nl.ndarray((m1 - m0, n1 - n0), nl.float32, buffer=nl.psum)
            for i, (k0, k1) in enumerate(tiles(k, P)):
                a = nl.load(lhsT[k0:k1, m0:m1])
                b = nl.load(rhs[k0:k1, n0:n1])
                nisa.nc_matmul(acc, a, b, accumulate=i > 0)
            res = nl.ndarray((m1 - m0, n1 - n0), nl.float32)
            nisa.tensor_copy(res, acc)
            nl.store(out[m0:m1, n0:n1], res)
    return out


def k_tiled(hbm, c0, c1):
    """HBM [K, C] columns c0:c1 as one view [128, K/128, c1-c0]: partition p holds rows
    p, 128 + p, ... (K a multiple of 128)."""
    k = hbm.shape[0]
    return hbm[:, c0:c1].split(0, [k // P, P]).permute([1, 0, 2])


@neuronsim.kernel(shapes={"lhsT": (1024, 512), "rhs": (1024, 1024)}, reference=matmul_reference)
def matmul_v2(lhsT, rhs):
    """lhsT loaded once and kept in SBUF; each 512-column block of rhs loaded once, in one DMA
    per block; PSUM evictions alternate between VectorE and ScalarE; stores are triggered by
    GpSimd. K must be a multiple of 128 (v1 takes any K)."""
    k, m = lhsT.shape
    n = rhs.shape[1]
    if k % P:
        raise ValueError("matmul_v2 needs K a multiple of 128")
    kt = k // P
    out = nl.ndarray((m, n), nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((P, kt, m), lhsT.dtype, name="lhsT_resident")
    for m0, m1 in tiles(m, P):
        nisa.dma_copy(a[:, :, m0:m1], k_tiled(lhsT, m0, m1))
    for j, (n0, n1) in enumerate(tiles(n, N_TILE)):
        b = nl.ndarray((P, kt, n1 - n0), rhs.dtype)
        nisa.dma_copy(b, k_tiled(rhs, n0, n1), engine=nisa.engine.scalar)
        for i, (m0, m1) in enumerate(tiles(m, P)):
            acc = nl.ndarray((m1 - m0, n1 - n0), nl.float32, buffer=nl.psum)
            for t in range(kt):
                nisa.nc_matmul(acc, a[:, t, m0:m1], b[:, t, :], accumulate=t > 0)
            res = nl.ndarray((m1 - m0, n1 - n0), nl.float32)
            if (i + j) % 2 == 0:
                nisa.tensor_copy(res, acc)
            else:
                nisa.activation(res, nl.copy, acc)
            nisa.dma_copy(out[m0:m1, n0:n1], res, engine=nisa.engine.gpsimd)
    return out


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    lhsT = rng.standard_normal((1024, 512)).astype(np.float32)
    rhs = rng.standard_normal((1024, 1024)).astype(np.float32)
    for kernel in (matmul_v1, matmul_v2):
        result = neuronsim.run(kernel, lhsT=lhsT, rhs=rhs, check=True)
        s = result.summary
        print(f"{kernel.name}: {s['total_ns'] / 1000:.1f} us, {s['instructions']} instructions, "
              f"MFU {s['mfu_percent']:.1f}%, error {result.check_error:.2g}")
    library = neuronsim.run("matmul", lhsT=lhsT, rhs=rhs)
    print(f"library matmul: {library.summary['total_ns'] / 1000:.1f} us")

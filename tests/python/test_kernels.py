"""Kernels written in Python: results against numpy on many shapes, the timed run against the
interpreter, traces, notes, parameters, outputs and tile lifetimes."""

import json
import os
import sys

import numpy as np
import pytest

import neuronsim
import neuronsim.isa as nisa
import neuronsim.language as nl
from conftest import REPO, bf16, line_of, run_cli

sys.path.insert(0, os.path.join(REPO, "examples"))
from softmax import softmax_reference, softmax_v1  # noqa: E402

HERE = os.path.abspath(__file__)


def test_softmax_2048x512_fp32_matches_numpy_and_traces(tmp_path, rng):
    x = rng.standard_normal((2048, 512)).astype(np.float32) * 4
    result = neuronsim.run(softmax_v1, x=x, check=True)
    y = result["out"]
    assert y.shape == (2048, 512) and y.dtype == np.float32
    np.testing.assert_allclose(y, softmax_reference(x), rtol=1e-5, atol=1e-6)
    assert result.check_error <= 1e-4
    assert result.summary["kernel"] == "softmax_v1" and result.summary["total_ns"] > 0
    assert result.summary["engines"]["scalar"]["instructions"] == 2 * 16

    result.trace.save(tmp_path / "t.json")
    trace = json.loads((tmp_path / "t.json").read_text())
    names = {e.get("name") for e in trace["traceEvents"]}
    assert {"activation", "tensor_reduce", "dma_copy"} <= names
    report = result.trace.report()
    assert report.startswith("softmax_v1 on trn2 (fp32)") and "activation" in report
    assert report == run_cli("report", tmp_path / "t.json").stdout  # the saved trace reads back the same
    result.trace.view(tmp_path / "t.html")
    html = (tmp_path / "t.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html>") and "softmax_v1" in html


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (130, 77), (300, 1000), (127, 2049)])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_softmax_shapes_and_dtypes(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(np.float32) * 3
    result = neuronsim.run(softmax_v1, x=x, dtype=dtype)
    inputs = bf16(x) if dtype == "bf16" else x
    tolerance = 2e-2 if dtype == "bf16" else 1e-5
    np.testing.assert_allclose(result["out"], softmax_reference(inputs), atol=tolerance, rtol=tolerance)
    assert np.array_equal(result.inputs["x"], inputs)


def test_timed_equals_interpreter_bit_for_bit(rng):
    x = rng.standard_normal((300, 200)).astype(np.float32)
    timed = neuronsim.run(softmax_v1, x=x)
    interpreted = neuronsim.run(softmax_v1, x=x, mode="interpret")
    assert np.array_equal(timed["out"], interpreted["out"])


def test_calling_a_kernel_returns_its_output(rng):
    x = rng.standard_normal((64, 32)).astype(np.float32)
    y = softmax_v1(x)
    np.testing.assert_allclose(y, softmax_reference(x), rtol=1e-5, atol=1e-6)


def test_default_shapes_generate_inputs():
    result = neuronsim.run("softmax_v1", seed=5)  # by its registered name, generated x
    assert result.inputs["x"].shape == (2048, 512)
    np.testing.assert_allclose(result["out"], softmax_reference(result.inputs["x"]), rtol=1e-5, atol=1e-6)


@neuronsim.kernel
def scaled_add(a, b, bias=None, scale=2.0, repeats=1, relu=False):
    """out = relu?(a * scale + b (+ bias)), repeated `repeats` times into a second output."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm, name="sum")
    again = nl.ndarray((repeats, rows, cols), nl.float32, buffer=nl.shared_hbm, name="copies")
    ta = nl.load(a)
    tb = nl.load(b)
    nisa.scalar_tensor_tensor(ta, ta, nl.multiply, scale, nl.add, tb)  # NOTE-STT
    if bias is not None:
        tbias = nl.load(bias)
        nisa.tensor_tensor(ta, ta, tbias, nl.add)
    if relu:
        nisa.activation(ta, nl.relu, ta)
    nl.store(out, ta)
    for i in range(repeats):
        nisa.dma_copy(again[i], ta, engine=nisa.engine.scalar)
    return out, again


@pytest.mark.parametrize("scale,repeats,relu,with_bias", [(2.0, 1, False, False), (-0.5, 3, True, True)])
def test_parameters_optional_inputs_and_two_outputs(rng, scale, repeats, relu, with_bias):
    a = rng.standard_normal((70, 33)).astype(np.float32)
    b = rng.standard_normal((70, 33)).astype(np.float32)
    bias = rng.standard_normal((70, 33)).astype(np.float32)
    kwargs = {"bias": bias} if with_bias else {}
    result = neuronsim.run(scaled_add, a=a, b=b, scale=scale, repeats=repeats, relu=relu, **kwargs)
    expected = a * np.float32(scale) + b + (bias if with_bias else 0)
    if relu:
        expected = np.maximum(expected, 0)
    np.testing.assert_allclose(result["sum"], expected, rtol=1e-6, atol=1e-6)
    assert result["copies"].shape == (repeats, 70, 33)
    assert np.array_equal(result["copies"], np.broadcast_to(result["sum"], (repeats, 70, 33)))
    s, copies = scaled_add(a, b, scale=scale, repeats=repeats, relu=relu, **kwargs)
    assert np.array_equal(s, result["sum"]) and np.array_equal(copies, result["copies"])


def test_notes_carry_the_kernel_line(rng):
    a = rng.standard_normal((8, 4)).astype(np.float32)
    result = neuronsim.run(scaled_add, a=a, b=a)
    line = line_of(HERE, "NOTE-STT")
    shown = os.path.relpath(HERE)
    assert f"{shown}:{line}" in result.asm()
    assert f"scalar_tensor_tensor" in result.asm()


def reference_sum_of_squares(x):
    return (x.astype(np.float64) ** 2).sum(axis=1, keepdims=True).astype(np.float32)


@neuronsim.kernel(reference=reference_sum_of_squares, shapes={"x": (256, 40)})
def sum_of_squares(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, 1), nl.float32, buffer=nl.shared_hbm)
    for r0 in range(0, rows, 128):
        n = min(128, rows - r0)
        t = nl.load(x[r0:r0 + n])
        sq = nl.ndarray((n, cols), nl.float32)
        s = nl.ndarray((n, 1), nl.float32)
        nisa.activation(sq, nl.square, t, reduce_res=s)
        nl.store(out[r0:r0 + n], s)
    return out


def test_check_uses_the_registered_reference():
    result = neuronsim.run(sum_of_squares, shapes={"x": (200, 17)}, check=True)
    assert result.check_error <= 1e-4


def test_check_failure_raises():
    @neuronsim.kernel(reference=lambda x: reference_sum_of_squares(x) + 1)
    def off_by_one(x):
        return sum_of_squares.fn(x)

    with pytest.raises(neuronsim.CheckError, match="off_by_one: normalized error"):
        neuronsim.run(off_by_one, x=np.ones((4, 3), np.float32), check=True)


@neuronsim.kernel
def matmul_tiles(lhsT, rhs):
    """out [M, N] = lhsT^T @ rhs for K, M <= 128 and N <= 512."""
    k, m = lhsT.shape
    _, n = rhs.shape
    out = nl.ndarray((m, n), nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    acc = nl.ndarray((m, n), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, a[:, :], b)
    res = nl.ndarray((m, n), nl.float32)
    nisa.tensor_copy(res, acc)
    nl.store(out, res)
    return out


@pytest.mark.parametrize("k,m,n", [(1, 1, 1), (128, 128, 512), (37, 99, 130)])
def test_psum_matmul(rng, k, m, n):
    lhsT = rng.standard_normal((k, m)).astype(np.float32)
    rhs = rng.standard_normal((k, n)).astype(np.float32)
    out = matmul_tiles(lhsT, rhs)
    np.testing.assert_allclose(out, lhsT.T @ rhs, rtol=1e-4, atol=1e-4)


@neuronsim.kernel
def iota_and_mask(x):
    """out[p, i] = x[p, i] where i <= p (causal), else -1; idx[p, i] = 3 + 2p + i."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm, name="masked")
    idx_out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm, name="idx")
    t = nl.load(x)
    masked = nl.ndarray((rows, cols), nl.float32)
    nisa.affine_select(masked, t, steps=[-1], offset=0, partition_step=1, cmp=nl.greater_equal, on_false_value=-1.0)
    nl.store(out, masked)
    idx = nl.ndarray((rows, cols), nl.float32)
    nisa.iota(idx, steps=[1], offset=3, partition_step=2)
    nl.store(idx_out, idx)
    return out, idx_out


def test_iota_and_affine_select(rng):
    x = rng.standard_normal((20, 30)).astype(np.float32)
    result = neuronsim.run(iota_and_mask, x=x)
    p, i = np.meshgrid(np.arange(20), np.arange(30), indexing="ij")
    assert np.array_equal(result["masked"], np.where(i <= p, x, -1.0).astype(np.float32))
    assert np.array_equal(result["idx"], (3 + 2 * p + i).astype(np.float32))


@neuronsim.kernel
def many_big_tiles(x, iterations=40):
    """Each iteration loads a 64 KiB-per-partition tile; freed tiles make room for the next."""
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros(x.shape, nl.float32)
    for _ in range(iterations):
        t = nl.load(x)
        nisa.tensor_tensor(acc, acc, t, nl.add)
    nl.store(out, acc)
    return out


def test_tiles_are_freed_when_unreferenced(rng):
    x = rng.standard_normal((128, 16384)).astype(np.float32)  # 64 KiB per partition
    result = neuronsim.run(many_big_tiles, x=x, iterations=6, trace=False)
    np.testing.assert_allclose(result["out"], 6 * x, rtol=1e-5)


@neuronsim.kernel
def tensor_ops(x, y):
    """Every elementwise op family on one [P, F] pair (P, F <= 32 for VectorE's transpose)."""
    rows, cols = x.shape
    names = ("ts", "tt", "copy", "pred", "rowmin")
    outs = [nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm, name=name) for name in names]
    transposed = nl.ndarray((cols, rows), nl.float32, buffer=nl.shared_hbm, name="transposed")
    tx, ty = nl.load(x), nl.load(y)
    t = nl.ndarray((rows, cols), nl.float32)
    nisa.tensor_scalar(t, tx, nl.subtract, 1.0, reverse0=True, op1=nl.multiply, operand1=3.0)  # (1 - x) * 3
    nl.store(outs[0], t)
    t2 = nl.ndarray((rows, cols), nl.float32)
    nisa.tensor_tensor(t2, tx, ty, np.maximum, engine=nisa.engine.gpsimd)
    nl.store(outs[1], t2)
    b = nl.ndarray((rows, cols), nl.bfloat16)
    nisa.tensor_copy(b, tx, engine=nisa.engine.scalar)
    nl.store(outs[2], b)
    keep = nl.ndarray((rows, cols), nl.float32)
    nisa.tensor_scalar(keep, ty, nl.greater, 0.0)
    sel = nl.zeros((rows, cols), nl.float32)
    nisa.tensor_copy_predicated(sel, tx, keep)
    nl.store(outs[3], sel)
    mins = nl.ndarray((rows, 1), nl.float32)
    nisa.tensor_reduce(mins, nl.min, tx, axis=1)
    spread = nl.ndarray((rows, cols), nl.float32)
    nisa.tensor_copy(spread, mins[:, 0].broadcast(1, cols))
    nl.store(outs[4], spread)
    tp = nl.ndarray((cols, rows), nl.float32)
    nisa.nc_transpose(tp, tx, engine=nisa.engine.vector)
    nl.store(transposed, tp)
    return (*outs, transposed)


@pytest.mark.parametrize("shape", [(1, 1), (7, 19), (32, 32)])
def test_elementwise_op_families(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    r = neuronsim.run(tensor_ops, x=x, y=y)
    np.testing.assert_allclose(r["ts"], (1 - x) * 3, rtol=1e-6, atol=1e-6)
    assert np.array_equal(r["tt"], np.maximum(x, y))
    assert np.array_equal(r["copy"], bf16(x))
    assert np.array_equal(r["pred"], np.where(y > 0, x, 0).astype(np.float32))
    assert np.array_equal(r["rowmin"], np.broadcast_to(x.min(axis=1, keepdims=True), shape))
    assert np.array_equal(r["transposed"], x.T)

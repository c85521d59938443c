"""The examples' kernels (softmax, RMSNorm, tiled matmul; before and after tuning) against
their numpy references on many shapes, and the timed run against the interpreter."""

import os
import subprocess
import sys

import numpy as np
import pytest

import neuronsim
from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "examples"))
import matmul  # noqa: E402
import rmsnorm  # noqa: E402
import softmax  # noqa: E402


@pytest.mark.parametrize("kernel", [softmax.softmax_v1, softmax.softmax_v2])
@pytest.mark.parametrize("shape", [(1, 7), (129, 64), (333, 515)])
def test_softmax(rng, kernel, shape):
    x = rng.standard_normal(shape).astype(np.float32) * 5
    result = neuronsim.run(kernel, x=x, check=True)
    np.testing.assert_allclose(result["out"], softmax.softmax_reference(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel", [rmsnorm.rmsnorm_v1, rmsnorm.rmsnorm_v2])
@pytest.mark.parametrize("shape,eps", [((1, 3), 1e-6), ((130, 700), 0.5), ((256, 1024), 1e-5)])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_rmsnorm(rng, kernel, shape, eps, dtype):
    x = rng.standard_normal(shape).astype(np.float32)
    weight = rng.standard_normal(shape[1]).astype(np.float32)
    result = neuronsim.run(kernel, x=x, weight=weight, eps=eps, dtype=dtype, check=True)
    expected = rmsnorm.rmsnorm_reference(result.inputs["x"], result.inputs["weight"], eps)
    np.testing.assert_allclose(result["out"], expected, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("k,m,n", [(128, 1, 1), (256, 130, 513), (384, 256, 1024)])
@pytest.mark.parametrize("kernel", [matmul.matmul_v1, matmul.matmul_v2])
def test_matmul(rng, kernel, k, m, n):
    lhsT = rng.standard_normal((k, m)).astype(np.float32)
    rhs = rng.standard_normal((k, n)).astype(np.float32)
    result = neuronsim.run(kernel, lhsT=lhsT, rhs=rhs, check=True)
    np.testing.assert_allclose(result["out"], lhsT.T @ rhs, rtol=1e-4, atol=1e-3)


def test_matmul_v1_takes_any_k(rng):
    lhsT = rng.standard_normal((200, 70)).astype(np.float32)
    rhs = rng.standard_normal((200, 90)).astype(np.float32)
    np.testing.assert_allclose(matmul.matmul_v1(lhsT, rhs), lhsT.T @ rhs, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("kernel,inputs", [
    (softmax.softmax_v2, {"x": (300, 200)}),
    (rmsnorm.rmsnorm_v2, {"x": (200, 600), "weight": (600,)}),
    (matmul.matmul_v2, {"lhsT": (256, 200), "rhs": (256, 600)}),
])
def test_timed_equals_interpreter(kernel, inputs):
    timed = neuronsim.run(kernel, shapes=inputs, seed=4)
    interpreted = neuronsim.run(kernel, shapes=inputs, seed=4, mode="interpret")
    assert timed.races == []
    for name in timed.outputs:
        assert np.array_equal(timed[name], interpreted[name])


@pytest.mark.parametrize("before,after,inputs", [
    (softmax.softmax_v1, softmax.softmax_v2, {"x": (1024, 512)}),
    (rmsnorm.rmsnorm_v1, rmsnorm.rmsnorm_v2, {"x": (1024, 1024), "weight": (1024,)}),
    (matmul.matmul_v1, matmul.matmul_v2, {"lhsT": (512, 256), "rhs": (512, 1024)}),
])
def test_tuned_versions_are_faster(before, after, inputs):
    slow = neuronsim.run(before, shapes=inputs, mode="timing_only")
    fast = neuronsim.run(after, shapes=inputs, mode="timing_only")
    assert fast.total_ns < 0.9 * slow.total_ns


def test_softmax_script_prints_both_versions():
    out = subprocess.run([sys.executable, os.path.join(REPO, "examples", "softmax.py")], capture_output=True,
                         text=True, check=True).stdout
    assert "softmax_v1:" in out and "softmax_v2:" in out

"""HBM views and tiles index like numpy: slices, steps, negative indices, dropped axes,
reshape, split, permute and broadcast, checked by moving data through SBUF."""

import numpy as np
import pytest

import neuronsim
import neuronsim.isa as nisa
import neuronsim.language as nl


def copy_kernel(view, tile_view=None):
    """A kernel storing load(view(x)) (optionally re-viewed as tile_view(t)) into an output."""
    @neuronsim.kernel(name="view_copy")
    def kernel(x):
        src = view(x)
        t = nl.load(src)
        if tile_view is not None:
            t = tile_view(t)
        out = nl.ndarray(t.shape, nl.float32, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out
    return kernel


X = np.arange(6 * 10 * 12, dtype=np.float32).reshape(6, 10, 12)

HBM_CASES = [
    (lambda x: x[2], lambda a: a[2]),
    (lambda x: x[-1, 1:9:3], lambda a: a[-1, 1:9:3]),
    (lambda x: x[:, 4], lambda a: a[:, 4]),
    (lambda x: x[1:5, :, 11], lambda a: a[1:5, :, 11]),
    (lambda x: x[::2, 3:, ::5], lambda a: a[::2, 3:, ::5]),
    (lambda x: x.permute([2, 0, 1]), lambda a: a.transpose(2, 0, 1)),
    (lambda x: x.reshape([60, 12])[7:50:6], lambda a: a.reshape(60, 12)[7:50:6]),
    (lambda x: x.split(2, [3, 4])[:, :, 1], lambda a: a.reshape(6, 10, 3, 4)[:, :, 1]),
    (lambda x: x.merge(0, 1)[5:59], lambda a: a.reshape(60, 12)[5:59]),
]


@pytest.mark.parametrize("case", range(len(HBM_CASES)))
def test_hbm_views_index_like_numpy(case):
    view, expected = HBM_CASES[case]
    result = neuronsim.run(copy_kernel(view), x=X)
    assert np.array_equal(result["out"], expected(X))


Y = np.arange(40 * 10 * 12, dtype=np.float32).reshape(40, 10, 12)

TILE_CASES = [  # partition ranges start at 0, 32, 64 or 96 (a hardware rule)
    (lambda t: t[32:36], lambda a: a[32:36]),
    (lambda t: t[32, 2:7], lambda a: a[32:33, 2:7]),  # the partition axis stays
    (lambda t: t[:, -1], lambda a: a[:, -1]),
    (lambda t: t[:, 1:10:4, ::3], lambda a: a[:, 1:10:4, ::3]),
    (lambda t: t.permute([0, 2, 1]), lambda a: a.transpose(0, 2, 1)),
    (lambda t: t.reshape([40, 120]), lambda a: a.reshape(40, 120)),
    (lambda t: t[:, 0].broadcast(1, 3), lambda a: np.repeat(a[:, None, 0], 3, axis=1)),
]


@pytest.mark.parametrize("case", range(len(TILE_CASES)))
def test_tile_views_index_like_numpy(case):
    view, expected = TILE_CASES[case]

    @neuronsim.kernel(name="tile_view_copy")
    def kernel(x):
        t = nl.load(x)
        v = view(t)
        dense = nl.ndarray(v.shape, nl.float32)
        nisa.tensor_copy(dense, v)
        out = nl.ndarray(v.shape, nl.float32, buffer=nl.shared_hbm)
        nl.store(out, dense)
        return out

    assert np.array_equal(neuronsim.run(kernel, x=Y)["out"], expected(Y))


def test_view_properties():
    seen = {}

    @neuronsim.kernel(name="props")
    def kernel(x):
        seen["hbm"] = (x.shape, x.dtype, x.ndim, x.size, x.name, repr(x))
        t = nl.load(x[0], dtype=nl.bfloat16, name="rows")
        seen["tile"] = (t.shape, t.dtype, t.ndim, t.buffer, t.name, t[2:5].partition_start, repr(t))
        acc = nl.ndarray((4, 4), nl.float32, buffer=nl.psum)
        seen["psum"] = acc.buffer
        out = nl.ndarray((10, 12), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out

    result = neuronsim.run(kernel, x=X, dtype="bf16")
    assert seen["hbm"] == ((6, 10, 12), nl.bfloat16, 3, 720, "x", "HbmTensor 'x' [6, 10, 12] bf16")
    assert seen["tile"][:6] == ((10, 12), nl.bfloat16, 2, "sbuf", "rows", 2)
    assert seen["tile"][6] == "sbuf Tile 'rows' [10, 12] bf16"
    assert seen["psum"] == "psum"
    assert np.array_equal(result["out"], X[0])


@pytest.mark.parametrize("index,message", [
    ((slice(0, 7),), "0:7:1 of axis 0 is not a non-empty forward range of its 6"),
    ((slice(None, None, -1),), "not a non-empty forward range"),
    ((0, 0, 12), "index 12 outside axis 2 of 12 elements"),
    ((0, 0, 0, 0), "4 indices for a view of rank 3"),
    ((0, 0, 0), "leaves no axis to move"),
    (("a",), "axis 0 takes an int or a slice, not str"),
])
def test_bad_indices(index, message):
    with pytest.raises(neuronsim.Error, match=message.replace("(", r"\(")):
        neuronsim.run(copy_kernel(lambda x: x[index]), x=X)

"""Errors in Python kernels raise a Python exception that names the kernel's line."""

import os

import numpy as np
import pytest

import neuronsim
import neuronsim.isa as nisa
import neuronsim.language as nl
from conftest import line_of

HERE = os.path.abspath(__file__)


def at(marker):
    """How an error names the line of this file holding ``marker``."""
    return f"{os.path.relpath(HERE)}:{line_of(HERE, marker)}"


def raises_at(marker, kernel, message, error=neuronsim.KernelError, **tensors):
    with pytest.raises(error) as info:
        neuronsim.run(kernel, **tensors)
    assert info.value.where == at(marker)
    assert str(info.value).startswith(at(marker) + ": ")
    assert message in str(info.value), str(info.value)
    assert "\n" not in str(info.value)
    return info.value


X = np.ones((64, 8), np.float32)


@neuronsim.kernel
def mismatched_shapes(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.ndarray((64, 9), nl.float32)
    nisa.memset(b, 1.0)
    nisa.tensor_tensor(a, a, b, nl.add)  # MARK-shape
    nl.store(out, a)
    return out


def test_bad_shape_names_the_line():
    raises_at("MARK-shape", mismatched_shapes, "tensor_tensor", x=X)


@neuronsim.kernel
def too_big(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    big = nl.ndarray((128, 300 * 1024 // 4), nl.float32, name="huge")  # MARK-overflow
    nl.store(out, big[0:64, 0:8])
    return out


def test_sbuf_overflow_names_the_line_and_the_tile():
    error = raises_at("MARK-overflow", too_big, "SBUF tile 'huge' asks 307200 bytes per partition", x=X)
    assert "too_big" in str(error)


@neuronsim.kernel
def hoarder(x, keep=20):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    kept = []
    for _ in range(keep):
        kept.append(nl.load(x))  # MARK-hoard
    nl.store(out, kept[-1])
    return out


def test_tiles_kept_alive_overflow_where_the_last_one_is_loaded():
    x = np.zeros((128, 16384), np.float32)  # 64 KiB per partition: the fourth does not fit
    raises_at("MARK-hoard", hoarder, "are free", x=x)
    neuronsim.run(hoarder, x=x, keep=3, trace=False)  # three do


@neuronsim.kernel
def racy(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)  # MARK-race-load
    with nl.no_sync():
        nisa.activation(t, nl.exp, t)  # MARK-race-use
    nl.store(out, t)
    return out


def test_race_names_both_lines():
    error = raises_at("MARK-race-use", racy, "race:", error=neuronsim.RaceError, x=X)
    assert f"at {at('MARK-race-load')}" in str(error)
    assert f"at {at('MARK-race-use')}" in str(error)


def test_races_can_be_left_as_warnings():
    result = neuronsim.run(racy, x=X, races="warn")
    assert result.races and all("race:" in r for r in result.races)
    assert any(at("MARK-race-use") in r for r in result.races)


def test_races_off_detects_none_and_refuses_strict_and_interpret():
    result = neuronsim.run(racy, x=X, races="off")
    assert result.races == []
    assert result.total_ns == neuronsim.run(racy, x=X, races="warn").total_ns
    with pytest.raises(neuronsim.Error, match="^strict=True makes races errors but races='off' detects none"):
        neuronsim.run(racy, x=X, races="off", strict=True)
    with pytest.raises(neuronsim.Error, match="^mode='interpret' detects no races; drop races='off'$"):
        neuronsim.run(racy, x=X, races="off", mode="interpret")
    with pytest.raises(neuronsim.Error, match="^races takes 'raise', 'warn' or 'off', not 'no'$"):
        neuronsim.run(racy, x=X, races="no")


def test_synchronized_version_has_no_race():
    @neuronsim.kernel
    def synced(x):
        out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        nisa.activation(t, nl.exp, t)
        nl.store(out, t)
        return out

    result = neuronsim.run(synced, x=X)
    assert result.races == []
    np.testing.assert_allclose(result["out"], np.exp(X), rtol=1e-6)


@neuronsim.kernel
def wrong_dma(x):
    out = nl.ndarray((64, 9), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, t)  # MARK-dma
    return out


def test_dma_element_count_mismatch():
    raises_at("MARK-dma", wrong_dma, "dma_copy moves 512 elements into 576", x=X)


@neuronsim.kernel
def use_after_release(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    view = t[:, 0:4]
    nl.release(t)
    nisa.memset(view, 0.0)  # MARK-released
    nl.store(out, t)
    return out


def test_use_after_release():
    raises_at("MARK-released", use_after_release, "outside every live tile", x=X)


@neuronsim.kernel
def wrong_argument(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nisa.activation(t, nl.exp, x)  # MARK-type
    return out


def test_wrong_argument_type():
    raises_at("MARK-type", wrong_argument, "activation data must be an SBUF or PSUM tile, not HbmTensor", x=X)


@neuronsim.kernel
def wrong_operator(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nisa.tensor_tensor(t, t, t, nl.exp)  # MARK-op
    return out


def test_wrong_operator():
    raises_at("MARK-op", wrong_operator, "takes an ALU operator", x=X)


@neuronsim.kernel
def too_many_partitions(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    nl.load(x)  # MARK-partitions
    return out


def test_load_of_more_than_128_rows():
    raises_at("MARK-partitions", too_many_partitions, "needs 1..128 partitions", x=np.ones((130, 2), np.float32))


@neuronsim.kernel
def wide_matmul(x):
    out = nl.ndarray((8, 600), nl.float32, buffer=nl.shared_hbm)
    a = nl.zeros((8, 8), nl.float32)
    b = nl.zeros((8, 600), nl.float32)
    acc = nl.ndarray((8, 600), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, a, b)  # MARK-psum
    return out


def test_matmul_output_across_psum_banks():
    raises_at("MARK-psum", wide_matmul, "crosses a 2048-byte PSUM bank", x=X)


@neuronsim.kernel
def bad_index(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    nl.load(x[0:100, :])  # MARK-index
    return out


def test_index_outside_the_tensor():
    raises_at("MARK-index", bad_index, "0:100:1 of axis 0 is not a non-empty forward range of its 64", x=X)


def test_python_errors_in_the_kernel_pass_through():
    @neuronsim.kernel
    def asserting(x):
        assert x.shape[0] == 3, "expects three rows"

    with pytest.raises(AssertionError, match="expects three rows"):
        neuronsim.run(asserting, x=X)


def test_a_kernel_needs_an_output():
    @neuronsim.kernel
    def no_output(x):
        nl.load(x)

    with pytest.raises(neuronsim.Error, match="no_output declares no output"):
        neuronsim.run(no_output, x=X)


def test_language_outside_a_kernel():
    with pytest.raises(neuronsim.Error, match="only inside a kernel"):
        nl.ndarray((4, 4), nl.float32)


def test_builder_is_unusable_after_its_build():
    kept = {}

    @neuronsim.kernel
    def leaky(x):
        out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
        kept["tile"] = nl.load(x)
        nl.store(out, kept["tile"])
        return out

    neuronsim.run(leaky, x=X)
    assert kept["tile"].shape == (64, 8)  # the view outlives the build harmlessly
    with pytest.raises(neuronsim.Error, match="only inside a kernel"):
        nisa.memset(kept["tile"], 0.0)


def test_missing_input():
    with pytest.raises(neuronsim.Error, match="input x is required"):
        neuronsim.run(mismatched_shapes, shapes={})


@neuronsim.kernel
def reads_unwritten(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    never_written = nl.ndarray((64, 8), nl.float32)
    nl.store(out, never_written)  # MARK-unwritten
    return out


def test_strict_turns_reads_of_never_written_memory_into_an_error():
    result = neuronsim.run(reads_unwritten, x=X)
    assert result.warnings and any(at("MARK-unwritten") in w for w in result.warnings)
    with pytest.raises(neuronsim.StrictError) as info:
        neuronsim.run(reads_unwritten, x=X, strict=True)
    assert "strict: 0 races and 1 read of never-written memory" in str(info.value) and "\n" not in str(info.value)


@neuronsim.kernel
def forgets_one_store(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm, name="out")
    nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm, name="stats")
    nl.store(out, nl.load(x))
    return out


def test_an_output_no_instruction_writes_is_a_warning_and_a_strict_error():
    result = neuronsim.run(forgets_one_store, x=X)
    assert result.warnings == ["output 'stats' is never written (no instruction stores to it)"]
    assert result.reads == [] and np.array_equal(result["out"], X)
    with pytest.raises(neuronsim.StrictError) as info:
        neuronsim.run(forgets_one_store, x=X, strict=True)
    assert str(info.value) == "forgets_one_store: strict: output 'stats' is never written (no instruction stores to it)"


def test_strict_raises_on_races_left_as_warnings():
    with pytest.raises(neuronsim.StrictError, match="strict: 2 races and 1 read of never-written memory"):
        neuronsim.run(racy, x=X, races="warn", strict=True)
    with pytest.raises(neuronsim.RaceError):
        neuronsim.run(racy, x=X, strict=True, raise_on_failure=False)


def test_a_missing_library_input_names_the_keywords_that_give_it():
    with pytest.raises(neuronsim.Error) as info:
        neuronsim.run("matmul", lhsT=np.ones((512, 256), np.float32), mode="timing_only")
    assert str(info.value) == ("matmul: input rhs is required: pass rhs=ARRAY or shapes={'rhs': (512, 1024)} "
                               "(its default shape: defaults apply only when no tensor is given)")
    with pytest.raises(neuronsim.Error) as info:
        neuronsim.run("matmul", lhsT=np.ones((128, 64), np.float32), mode="timing_only")
    assert "pass rhs=ARRAY or shapes={'rhs': (...)} (its default (512, 1024) does not fit: lhsT has shape" in str(info.value)


def test_a_schedule_parameter_with_no_effect_is_a_warning_and_a_strict_error():
    line = "slot_copies='on' has no effect here (auto and off build the same program)"
    result = neuronsim.run("conv3d", slot_copies="on", mode="timing_only")
    assert result.warnings == [line]
    assert neuronsim.run("conv3d", slot_copies="auto", mode="timing_only").warnings == []
    with pytest.raises(neuronsim.StrictError) as info:
        neuronsim.run("conv3d", slot_copies="on", mode="timing_only", strict=True)
    assert str(info.value) == f"conv3d: strict: {line}"

"""neuronsim.run of every library kernel equals `neuronsim run` bit for bit, on given and on
generated inputs, with the same summary."""

import json

import numpy as np
import pytest

import neuronsim
from conftest import run_cli

# (kernel, given input shapes, parameters, dtype): odd shapes; inputs not given are derived
# (and generated) by the kernel, so both sides must derive and generate them alike.
CASES = [
    ("matmul", {"lhsT": (130, 129), "rhs": (130, 513)}, {}, "fp32"),
    ("matmul", {"lhsT": (64, 200), "rhs": (64, 96)}, {}, "bf16"),
    ("avg_pooling_3d_backward", {"input_tensor": (1, 3, 5, 6, 7)},
     {"kernel_size": 2, "stride": 2, "padding": 1}, "fp32"),
    ("max_pooling_3d_backward", {"input_tensor": (2, 3, 4, 5, 6)},
     {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "padding": (1, 1, 0)}, "bf16"),
    ("avg_pooling_3d", {"input_tensor": (1, 130, 4, 4, 4)}, {"kernel_size": 2, "data_format": "NDHWC"}, "fp32"),
    ("max_pooling_3d", {"input_tensor": (2, 5, 5, 7, 3)}, {"kernel_size": 3, "stride": 2, "padding": 1}, "fp32"),
    ("conv3d", {"x_in": (1, 5, 4, 6, 7), "filters": (3, 2, 3, 5, 6), "bias": (6,)},
     {"stride": (1, 2, 1), "padding": (1, 0, 1, 1, 0, 2), "activation_fn": "relu"}, "fp32"),
    ("conv3d_transpose", {"x_in": (1, 4, 3, 4, 5), "filters": (2, 3, 2, 4, 3)},
     {"stride": 2, "padding": 1, "output_padding": 1, "flip_filter_taps_in_kernel": True}, "bf16"),
    ("conv3d_bwd", {"dy": (1, 5, 5, 7, 6), "x_in": (1, 6, 5, 7, 6), "filters": (3, 3, 3, 6, 5)},
     {"padding": 1}, "bf16"),
    ("conv3d_bwd", {"x_in": (1, 3, 6, 5, 4), "filters": (2, 2, 2, 3, 4)},
     {"stride": 2, "compute_dx": False}, "fp32"),
    ("matmul_tutorial", {"lhsT": (256, 256), "rhs": (256, 1024)}, {"variant": "t1_tiled"}, "bf16"),
]


def test_every_library_kernel_is_compared():
    assert sorted(neuronsim.library_kernels()) == sorted({case[0] for case in CASES})


def flag_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value)


def cli_run(tmp_path, kernel, inputs, params, dtype):
    """`neuronsim run` on .npy inputs: (outputs, summary)."""
    args = ["run", kernel, "--dtype", dtype, "--output-dir", tmp_path / "out", "--summary-json", tmp_path / "s.json"]
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        args += ["--input", f"{name}={tmp_path / (name + '.npy')}"]
    for name, value in params.items():
        args += ["--" + name.replace("_", "-"), flag_value(value)]
    run_cli(*args)
    outputs = {p.stem: np.load(p) for p in (tmp_path / "out").glob("*.npy")}
    return outputs, json.loads((tmp_path / "s.json").read_text())


def assert_same_run(result, cli_outputs, cli_summary):
    assert sorted(result.outputs) == sorted(cli_outputs)
    for name, array in cli_outputs.items():
        assert result[name].dtype == np.float32
        assert result[name].shape == array.shape, name
        assert np.array_equal(result[name], array), f"{name} differs from the CLI's"
    host_keys = {"host_seconds", "sim_instructions_per_second", "build_seconds"}
    assert set(result.summary) == set(cli_summary)
    for key in set(cli_summary) - host_keys:
        assert result.summary[key] == cli_summary[key], key


@pytest.mark.parametrize("kernel,shapes,params,dtype", CASES, ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_matches_cli_bit_for_bit(tmp_path, rng, kernel, shapes, params, dtype):
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    cli_outputs, cli_summary = cli_run(tmp_path, kernel, inputs, params, dtype)
    result = neuronsim.run(kernel, dtype=dtype, **inputs, **params)
    assert_same_run(result, cli_outputs, cli_summary)
    assert result.races == [] and result.warnings == []


@pytest.mark.parametrize("kernel", ["max_pooling_3d_backward", "conv3d_bwd"])
def test_generated_inputs_match_cli(tmp_path, kernel):
    """No tensor given: both generate the default shapes from seed 3 (max pooling recomputes
    output_tensor from input_tensor)."""
    run_cli("run", kernel, "--seed", 3, "--output-dir", tmp_path / "out", "--summary-json", tmp_path / "s.json")
    cli_outputs = {p.stem: np.load(p) for p in (tmp_path / "out").glob("*.npy")}
    result = neuronsim.run(kernel, seed=3)
    assert_same_run(result, cli_outputs, json.loads((tmp_path / "s.json").read_text()))


def test_check_against_reference():
    result = neuronsim.run("matmul", shapes={"lhsT": (96, 80), "rhs": (96, 300)}, dtype="bf16", check=True)
    assert 0 <= result.check_error <= result.tolerance == 2e-2
    assert result.summary["check_error"] == result.check_error
    assert result["out"].shape == (80, 300)


def test_interpret_equals_timed():
    kwargs = dict(shapes={"input_tensor": (1, 7, 6, 6, 6)}, kernel_size=3, stride=2, padding=1)
    timed = neuronsim.run("max_pooling_3d_backward", **kwargs)
    interpreted = neuronsim.run("max_pooling_3d_backward", mode="interpret", **kwargs)
    assert interpreted.summary is None and interpreted.trace is None
    assert np.array_equal(timed["grad_input"], interpreted["grad_input"])


def test_timing_only_has_time_but_no_outputs():
    result = neuronsim.run("matmul", mode="timing_only", shapes={"lhsT": (128, 128), "rhs": (128, 512)})
    assert result.outputs == {}
    assert result.total_ns > 0


HOST_FIELDS = {"host_seconds", "sim_instructions_per_second", "build_seconds"}


@pytest.mark.parametrize("kernel,shapes,params,dtype", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_races_off_changes_nothing_but_host_time(kernel, shapes, params, dtype):
    """races="off" with mode="timing_only" and trace=False is the one-thread path; with numerics
    it only skips race detection: the same summary either way, the same outputs."""
    def summary(result):
        return {k: v for k, v in result.summary.items() if k not in HOST_FIELDS}
    for machine in ("trn2", "trn1"):
        for mode in ("timing_only", "timed"):
            kwargs = dict(shapes=shapes, dtype=dtype, machine=machine, mode=mode, trace=False, **params)
            on = neuronsim.run(kernel, **kwargs)
            off = neuronsim.run(kernel, races="off", **kwargs)
            assert summary(on) == summary(off), (machine, mode)
            assert on.outputs.keys() == off.outputs.keys()
            assert all(np.array_equal(on[name], off[name]) for name in on.outputs)


def test_machine_and_overrides_match_the_cli(tmp_path):
    shapes = {"lhsT": (256, 256), "rhs": (256, 1024)}
    for machine, overrides, flags in [("trn1", {}, []), ("trn2", {"pe_ghz": 1.2}, ["--set", "pe_ghz=1.2"])]:
        result = neuronsim.run("matmul", shapes=shapes, mode="timing_only", machine=machine, overrides=overrides)
        run_cli("run", "matmul", "--shape", "lhsT=256x256", "--shape", "rhs=256x1024", "--timing-only",
                "--machine", machine, *flags, "--summary-json", tmp_path / "s.json")
        cli = json.loads((tmp_path / "s.json").read_text())
        assert result.summary["machine"] == machine
        assert result.total_ns == cli["total_ns"]
    slow = neuronsim.run("matmul", shapes=shapes, mode="timing_only", overrides={"pe_ghz": 1.2})
    fast = neuronsim.run("matmul", shapes=shapes, mode="timing_only")
    assert slow.total_ns > fast.total_ns


def test_torch_like_tensors_are_accepted(rng):
    class FakeTorchTensor:  # what neuronsim needs of a torch.Tensor, without torch
        __module__ = "torch"

        def __init__(self, array):
            self.array = array

        def detach(self):
            return self

        def cpu(self):
            return self

        def float(self):
            return FakeTorchTensor(self.array.astype(np.float32))

        def numpy(self):
            return self.array

    lhs = rng.standard_normal((40, 24))
    rhs = rng.standard_normal((40, 56))
    result = neuronsim.run("matmul", lhsT=FakeTorchTensor(lhs), rhs=FakeTorchTensor(rhs))
    expected = neuronsim.run("matmul", lhsT=lhs.astype(np.float32), rhs=rhs.astype(np.float32))
    assert np.array_equal(result["out"], expected["out"])
    assert np.allclose(result["out"], lhs.T.astype(np.float32) @ rhs.astype(np.float32), atol=1e-4)


def test_unknown_argument_names_the_choices():
    with pytest.raises(neuronsim.Error, match="matmul has no input or parameter named 'lhs'.*inputs: lhsT, rhs"):
        neuronsim.run("matmul", lhs=np.zeros((2, 2)))


@pytest.mark.parametrize("kwargs,message", [
    ({"kernel_size": "x"}, "parameter kernel_size takes integers, not 'x'"),
    ({"dtype": "fp64"}, "dtype takes fp32 or bf16, not 'fp64'"),
    ({"machine": "trn9"}, "trn9"),
    ({"mode": "fast"}, "mode takes"),
])
def test_bad_arguments_raise_one_line(kwargs, message):
    with pytest.raises(neuronsim.Error, match=message) as info:
        neuronsim.run("avg_pooling_3d", shapes={"input_tensor": (1, 2, 4, 4, 4)}, **kwargs)
    assert "\n" not in str(info.value)


def test_unknown_kernel():
    with pytest.raises(neuronsim.Error, match="unknown kernel 'conv9d'"):
        neuronsim.run("conv9d")

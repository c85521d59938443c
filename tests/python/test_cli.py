"""`neuronsim run FILE.py:KERNEL`: the CLI runs Python kernels with run's options."""

import json
import os
import textwrap

import numpy as np

import neuronsim
from conftest import REPO, run_cli

SOFTMAX = os.path.join(REPO, "examples", "softmax.py")
RMSNORM = os.path.join(REPO, "examples", "rmsnorm.py")


def test_run_python_kernel_with_check_and_files(tmp_path):
    proc = run_cli("run", f"{SOFTMAX}:softmax_v2", "--shape", "x=300x200", "--seed", "7", "--check",
                   "--output-dir", tmp_path / "out", "--summary-json", tmp_path / "s.json", "--trace", tmp_path / "t.json",
                   "--dump-asm", tmp_path / "p.nsasm")
    assert "check: normalized error" in proc.stdout and ": ok" in proc.stdout
    assert "softmax_v2 on trn2 (fp32)" in proc.stdout
    summary = json.loads((tmp_path / "s.json").read_text())
    expected = neuronsim.run("softmax.py:softmax_v2" if False else f"{SOFTMAX}:softmax_v2", shapes={"x": (300, 200)}, seed=7)
    assert summary["total_ns"] == expected.total_ns
    assert np.array_equal(np.load(tmp_path / "out" / "out.npy"), expected["out"])
    assert "softmax.py:" in (tmp_path / "p.nsasm").read_text()
    assert "traceEvents" in json.loads((tmp_path / "t.json").read_text())


def test_inputs_and_parameters_from_the_command_line(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((130, 70)).astype(np.float32)
    w = rng.standard_normal(70).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    run_cli("run", f"{RMSNORM}:rmsnorm_v1", "--input", f"x={tmp_path / 'x.npy'}", "--input", f"weight={tmp_path / 'w.npy'}",
            "--eps", "0.25", "--dtype", "bf16", "--output-dir", tmp_path / "out")
    expected = neuronsim.run(f"{RMSNORM}:rmsnorm_v1", x=x, weight=w, eps=0.25, dtype="bf16")
    assert np.array_equal(np.load(tmp_path / "out" / "out.npy"), expected["out"])


def test_failed_check_exits_1(tmp_path):
    kernel_file = tmp_path / "wrong.py"
    kernel_file.write_text(textwrap.dedent("""
        import numpy as np
        import neuronsim
        import neuronsim.language as nl

        @neuronsim.kernel(reference=lambda x: x + 1, shapes={"x": (4, 4)})
        def copy(x):
            out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
            nl.store(out, nl.load(x))
            return out
    """))
    proc = run_cli("run", f"{kernel_file}:copy", "--check", check=False)
    assert proc.returncode == 1
    assert "FAILED" in proc.stdout


def test_errors_exit_2_with_one_line(tmp_path):
    for args, message in [
        ([f"{SOFTMAX}:nope"], "has no kernel named 'nope'"),
        ([f"{tmp_path}/missing.py:k"], "no such file"),
        ([f"{SOFTMAX}:softmax_v1", "--bogus", "1"], "unknown option --bogus"),
        ([f"{SOFTMAX}:softmax_v1", "--shape", "x=3xq"], "is not a shape"),
        ([f"{SOFTMAX}:softmax_v1", "--timing-only", "--check"], "--timing-only computes no outputs"),
        ([f"{SOFTMAX}:softmax_v1", "--shape", "x=200x4", "--dtype", "fp64"], "dtype takes fp32 or bf16"),
    ]:
        proc = run_cli("run", *args, check=False)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], (args, proc.stderr)


def test_help_lists_the_parameters():
    proc = run_cli("run", f"{RMSNORM}:rmsnorm_v2", "--help")
    assert "--eps" in proc.stdout and "x" in proc.stdout and "--check" in proc.stdout

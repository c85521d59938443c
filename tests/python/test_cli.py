"""`neuronsim run FILE.py:KERNEL`: the CLI runs Python kernels with run's options."""

import json
import os
import re
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
        ([f"{SOFTMAX}:softmax_v1", "--bogus", "1"], "unknown option --bogus (kernel parameters: none)"),
        ([f"{SOFTMAX}:softmax_v1", "--dtyp", "bf16"], "unknown option --dtyp (did you mean --dtype?)"),
        ([f"{RMSNORM}:rmsnorm_v1", "--esp", "1"], "unknown option --esp (did you mean --eps?)"),
        ([f"{SOFTMAX}:softmax_v1", "--shape", "x=3xq"], "shape '3xq' must be positive integers joined by x"),
        ([SOFTMAX], f"name the kernel as {SOFTMAX}:KERNEL (kernels: softmax_v1, softmax_v2)"),
        ([f"{SOFTMAX}:softmax_v1", "--timing-only", "--check"], "--timing-only computes no outputs"),
        ([f"{SOFTMAX}:softmax_v1", "--shape", "x=200x4", "--dtype", "fp64"], "dtype takes fp32 or bf16"),
    ]:
        proc = run_cli("run", *args, check=False)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], (args, proc.stderr)


def test_an_exception_in_the_kernel_file_is_one_line_naming_its_line(tmp_path):
    """A syntax error, a failing import-time statement and an assert in the kernel body each
    print `error: FILE:LINE: Type: message` and exit 2, not a traceback (exit 1)."""
    kernel = textwrap.dedent("""
        import neuronsim
        import neuronsim.language as nl

        @neuronsim.kernel(shapes={"x": (4, 4)})
        def k(x):
            assert x.shape[0] == 64, "need 64 rows"  # assert
            return x
    """)
    cases = [("syntax.py", "import neuronsim\ndef f(:\n", 2, "SyntaxError: invalid syntax"),
             ("boom.py", "import neuronsim\nraise RuntimeError('boom')\n", 2, "RuntimeError: boom"),
             ("body.py", kernel, kernel.splitlines().index(
                 '    assert x.shape[0] == 64, "need 64 rows"  # assert') + 1, "AssertionError: need 64 rows")]
    for name, text, line, message in cases:
        (tmp_path / name).write_text(text)
        proc = run_cli("run", f"{tmp_path / name}:k", "--output-dir", tmp_path / "out", check=False)
        assert proc.returncode == 2, (name, proc.stderr)
        assert proc.stderr.splitlines() == [f"error: {tmp_path / name}:{line}: {message}"], (name, proc.stderr)
        assert not (tmp_path / "out").exists()


def test_input_files_follow_the_library_run_rules(tmp_path):
    """--input of a Python kernel refuses what `run KERNEL --input` refuses, with its message."""
    np.save(tmp_path / "ints.npy", np.ones((4, 4), np.int32))
    np.save(tmp_path / "fortran.npy", np.asfortranarray(np.ones((4, 3), np.float32)))
    (tmp_path / "empty.npy").write_bytes(b"")
    np.save(tmp_path / "half.npy", np.arange(12, dtype=np.float16).reshape(4, 3))
    for name, message in [("ints", "unsupported dtype '<i4'"), ("fortran", "Fortran-order arrays are not supported"),
                          ("empty", "not a .npy file")]:
        path = tmp_path / f"{name}.npy"
        for args in ([f"{SOFTMAX}:softmax_v1", "--input", f"x={path}"],
                     ["matmul", "--input", f"lhsT={path}", "--shape", "rhs=4x4"]):
            proc = run_cli("run", *args, check=False)
            lines = proc.stderr.splitlines()
            assert proc.returncode == 2, (args, proc.stderr)
            assert len(lines) == 1 and lines[0].startswith(f"error: {path}: ") and message in lines[0], (args, lines)
    run_cli("run", f"{SOFTMAX}:softmax_v1", "--input", f"x={tmp_path / 'half.npy'}", "--output-dir", tmp_path / "out")
    expected = neuronsim.run(f"{SOFTMAX}:softmax_v1", x=np.arange(12, dtype=np.float32).reshape(4, 3))
    assert np.array_equal(np.load(tmp_path / "out" / "out.npy"), expected["out"])


def test_help_lists_the_parameters():
    for flag in ("--help", "-h"):
        proc = run_cli("run", f"{RMSNORM}:rmsnorm_v2", flag)
        assert "--eps" in proc.stdout and "x" in proc.stdout and "--check" in proc.stdout


RACY = """
import neuronsim
import neuronsim.isa as nisa
import neuronsim.language as nl

@neuronsim.kernel(shapes={"x": (64, 8)})
def racy(x):
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    with nl.no_sync():
        nisa.activation(t, nl.exp, t)
    nl.store(out, t)
    return out

@neuronsim.kernel(shapes={"x": (4, 4)})
def broken(x):
    raise neuronsim.Error("broken: this kernel refuses to build")
"""


def one_error_line(proc, message):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], proc.stderr


def test_every_option_of_run_kernel_is_accepted_or_refused_by_name():
    """Each option `neuronsim run KERNEL --help` lists is listed by the Python path's --help too."""
    library = run_cli("run", "matmul", "--help").stdout
    generic = re.split(r"^(?:Kernel|Schedule) parameters", library, flags=re.MULTILINE)[0]
    options = set(re.findall(r"^  (--[a-z-]+)", generic, re.MULTILINE))
    assert {"--strict", "--dry-run", "--output-dir", "--check"} <= options
    python = run_cli("run", f"{SOFTMAX}:softmax_v1", "--help").stdout
    assert sorted(o for o in options if not re.search(rf"^  {o}\b", python, re.MULTILINE)) == []


def test_strict_turns_races_into_an_error_and_writes_nothing(tmp_path):
    (tmp_path / "racy.py").write_text(RACY)
    kernel = f"{tmp_path / 'racy.py'}:racy"
    proc = run_cli("run", kernel)
    assert proc.returncode == 0 and "warning: race:" in proc.stderr
    proc = run_cli("run", kernel, "--strict", "--output-dir", tmp_path / "out", "--summary-json", tmp_path / "s.json",
                   check=False)
    one_error_line(proc, "racy: strict: 2 races")
    assert not (tmp_path / "out").exists() and not (tmp_path / "s.json").exists()
    run_cli("run", f"{SOFTMAX}:softmax_v1", "--strict", "--shape", "x=130x70")  # a clean kernel passes


def test_dry_run_checks_everything_and_writes_nothing(tmp_path):
    (tmp_path / "racy.py").write_text(RACY)
    files = ["--output-dir", tmp_path / "out", "--trace", tmp_path / "t.json", "--csv", tmp_path / "t.csv",
             "--summary-json", tmp_path / "s.json", "--dump-asm", tmp_path / "p.nsasm"]
    proc = run_cli("run", f"{SOFTMAX}:softmax_v2", "--dry-run", "--shape", "x=300x200", *files)
    assert "dry run:" in proc.stdout and "instructions" not in proc.stdout
    assert sorted(os.listdir(tmp_path)) == ["racy.py"]
    (tmp_path / "od" / "out.npy").mkdir(parents=True)  # the output the build declares
    for args, message in [
        ([f"{SOFTMAX}:softmax_v2", "--output-dir", tmp_path / "od"], "out.npy: is a directory"),
        ([f"{tmp_path / 'racy.py'}:broken"], "refuses to build"),
        ([f"{SOFTMAX}:softmax_v2", "--machine", "trn9"], "trn9"),
        ([f"{SOFTMAX}:softmax_v2", "--set", "no_such_key=1"], "no_such_key"),
        ([f"{SOFTMAX}:softmax_v2", "--shape", "y=4x4"], "y"),
        ([f"{SOFTMAX}:softmax_v2", "--trace", tmp_path / "none" / "t.json"], "does not exist"),
    ]:
        one_error_line(run_cli("run", *args, "--dry-run", check=False), message)
    assert sorted(os.listdir(tmp_path)) == ["od", "racy.py"] and os.listdir(tmp_path / "od") == ["out.npy"]


def test_output_dir_follows_the_library_run_rule(tmp_path):
    """A missing --output-dir is created (nested too); one that cannot be is refused before the
    run with the message `run matmul` prints, and no other file is written."""
    run_cli("run", f"{SOFTMAX}:softmax_v1", "--shape", "x=130x70", "--output-dir", tmp_path / "a" / "b")
    assert os.listdir(tmp_path / "a" / "b") == ["out.npy"]
    (tmp_path / "file").write_text("")
    bad_dir = ["--output-dir", tmp_path / "file" / "sub", "--summary-json", tmp_path / "s.json"]
    python = run_cli("run", f"{SOFTMAX}:softmax_v1", *bad_dir, check=False)
    library = run_cli("run", "matmul", *bad_dir, check=False)
    one_error_line(python, "cannot be created")
    assert python.stderr == library.stderr
    assert "softmax" not in python.stdout and not (tmp_path / "s.json").exists()
    (tmp_path / "od" / "out.npy").mkdir(parents=True)
    proc = run_cli("run", f"{SOFTMAX}:softmax_v1", "--output-dir", tmp_path / "od", "--summary-json",
                   tmp_path / "s.json", check=False)
    one_error_line(proc, "out.npy: is a directory")
    assert not (tmp_path / "s.json").exists()  # nothing half written


def test_seed_is_read_as_the_library_run_reads_it():
    for seed in ["99999999999999999999", "\u00b2", "-1"]:
        one_error_line(run_cli("run", f"{SOFTMAX}:softmax_v1", "--seed", seed, check=False),
                       "--seed takes a non-negative integer below 10^19")


def test_a_missing_input_names_the_flags_that_give_it(tmp_path):
    np.save(tmp_path / "x.npy", np.ones((130, 70), np.float32))
    proc = run_cli("run", f"{RMSNORM}:rmsnorm_v1", "--input", f"x={tmp_path / 'x.npy'}", check=False)
    one_error_line(proc, "rmsnorm_v1: input weight is required: give --input weight=FILE.npy or --shape weight=1024 "
                         "(its default shape: defaults apply only when no --input is given)")

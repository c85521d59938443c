"""Shared helpers of the Python module's tests."""

import os
import subprocess

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli_path():
    return os.environ.get("NEURONSIM_CLI", os.path.join(REPO, "build", "neuronsim"))


def run_cli(*args, check=True):
    """Runs the neuronsim command line; returns the CompletedProcess."""
    proc = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
    if check and proc.returncode != 0:
        raise AssertionError(f"neuronsim {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
    return proc


def line_of(path, marker):
    """The 1-based line of ``path`` ending in the comment ``# marker`` (exactly one)."""
    with open(path) as f:
        hits = [i + 1 for i, text in enumerate(f) if text.rstrip().endswith("# " + marker)]
    assert len(hits) == 1, f"{marker!r} found on lines {hits}"
    return hits[0]


def bf16(values):
    """values rounded to bfloat16 (nearest even), as float32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)

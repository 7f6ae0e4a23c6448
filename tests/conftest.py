"""Shared fixtures: a tiny scenario that runs in well under a second."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TINY = """
name = "tiny"
seed = 7

[topology]
leaves = 2
spines = 2
hosts_per_leaf = 4

[lb]
scheme = "ecmp"

[traffic]
pattern = "poisson"
workload = "websearch"
load = 0.4
flows = 60
"""


#: TINY without its [traffic] table: the fabric and scheme, for tests that write a source of another pattern
#: (a field a pattern does not use is an error, so the poisson source's fields cannot be carried along).
TINY_FABRIC = TINY[: TINY.index("[traffic]")]


def tiny_with(traffic: str) -> str:
    """TINY with its [traffic] table replaced by ``traffic`` (TOML lines of that table)."""
    return TINY_FABRIC + "[traffic]\n" + traffic.strip() + "\n"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def dclb_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs the installed `dclb` command (as a user would) and captures its output."""
    exe = shutil.which("dclb") or str(Path(sys.executable).parent / "dclb")
    return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


#: The grid of the shared small sweep: 2 schemes x 2 loads (x 2 seeds = 8 runs).
GRID = {"lb.scheme": ["ecmp", "rps"], "traffic.load": "0.2:0.4:0.2"}


@pytest.fixture(scope="session")
def pool_sweep(tmp_path_factory):
    """The tiny scenario (with a sampler) swept over GRID and 2 seeds through the local process pool, once
    per session: (scenario path, store directory, summary frame)."""
    import dclb

    base = tmp_path_factory.mktemp("pool")
    scenario = base / "tiny.toml"
    scenario.write_text(TINY + "\n[run]\nsampler = { interval_us = 500 }\n")
    frame = dclb.sweep(scenario, grid=GRID, seeds=2, out=base / "store", jobs=2)
    return scenario, base / "store", frame

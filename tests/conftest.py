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


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def dclb_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs the installed `dclb` command (as a user would) and captures its output."""
    exe = shutil.which("dclb") or str(Path(sys.executable).parent / "dclb")
    return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, timeout=300)

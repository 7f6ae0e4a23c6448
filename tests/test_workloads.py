"""Shipped workloads load, and their means agree with the engine and with the files' own headers."""

from __future__ import annotations

import re

import pytest

from dclb import _core
from dclb import workloads as wl
from dclb.errors import ScenarioError


@pytest.mark.parametrize("name", wl.MAIN_WORKLOADS)
def test_shipped_workload_mean_matches_engine_and_header(name):
    w = wl.load(name)
    assert w.mean_bytes == pytest.approx(_core.cdf_mean(list(w.points)), rel=1e-12)
    header = w.path.read_text()
    m = re.search(r"computed mean \(linear interpolation[^)]*\): ([0-9.]+) bytes", header)
    assert m, "the shipped file states its interpolated mean"
    assert w.mean_bytes == pytest.approx(float(m.group(1)), rel=1e-6)


def test_every_shipped_file_is_valid():
    names = list(wl.builtin_paths())
    assert len(names) >= 15
    for name in names:
        assert wl.load(name).points[-1][1] == pytest.approx(1.0)


def test_point_masses_and_flat_segments_are_legal():
    pts = wl.parse_cdf("150 0\n300 0.12\n300 0.2\n600 0.2\n500000 1\n", "x")
    assert len(pts) == 5


def test_percent_files_are_scaled():
    pts = wl.parse_cdf("0 0\n100 50\n200 100\n", "x")
    assert pts[-1] == (200.0, 1.0)


@pytest.mark.parametrize("text, needle", [
    ("0 0\n10 0.5\n5 1\n", "sizes must not decrease"),
    ("0 0\n10 0.6\n20 0.5\n30 1\n", "probabilities must not decrease"),
    ("0 0\n10 0.6\n", "must be 1"),
    ("0 0\nabc 1\n", "not a number"),
    ("5\n", "expected"),
])
def test_bad_cdfs(text, needle):
    with pytest.raises(ScenarioError, match=needle):
        wl.parse_cdf(text, "f.cdf")

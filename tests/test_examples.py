"""The example scenarios under scenarios/: each validates, runs (made small here), and the README names it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dclb.cli import cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scenarios"

#: Each example with the overrides that make it run in a fraction of a second.
SMALL = {
    "quickstart.toml": ["traffic.flows=40"],
    "sweep_example.toml": ["traffic.flows=40"],
    "incast.toml": ["traffic.sources.0.rounds=1", "traffic.sources.1.flows=20"],
    "failed_and_slow_links.toml": ["traffic.flows=40"],
    "several_sources.toml": ["traffic.sources.0.flows=20", "traffic.sources.1.flows=4", "traffic.sources.2.flows=10"],
    "deadlines.toml": ["traffic.sources.0.flows=40", "traffic.sources.1.flows=4"],
    "long_lived.toml": ["run.horizon_us=2000", "traffic.sources.1.duration_us=2000"],
}


def _invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (args, result.output[-2000:], result.exception)
    return result


def test_every_example_is_listed_here():
    assert sorted(p.name for p in EXAMPLES.glob("*.toml")) == sorted(SMALL)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_validates_runs_and_is_in_the_readme(name):
    path = str(EXAMPLES / name)
    _invoke("run", path, "--dry-run")  # as written
    sets = [arg for override in SMALL[name] for arg in ("--set", override)]
    summary = json.loads(_invoke("run", path, "--no-store", "--json", *sets).stdout)
    assert summary["flows_total"] > 0
    if name == "deadlines.toml":
        assert summary["deadline_flows"] > 0
    if name == "long_lived.toml":
        assert summary["flows_unfinished"] >= 4  # the long-lived flows run until the horizon
    assert f"scenarios/{name}" in (ROOT / "README.md").read_text()


# --------------------------------------------------------------------------------------------------------
# The docs cite what a user can read


#: What users read: the README, docs/, the package's modules (docstrings, paper citations printed in reports) and
#: its data files (the papers' commented scenarios and CDFs), the example scenarios and the benchmarks.
USER_FILES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "python" / "dclb").rglob("*.py")),
    *sorted((ROOT / "python" / "dclb" / "data").rglob("*.toml")),
    *sorted((ROOT / "python" / "dclb" / "data").rglob("*.cdf")),
    *sorted(EXAMPLES.glob("*.toml")),
    *sorted((ROOT / "benchmarks").glob("*.py")),
]


def test_docs_cite_no_file_outside_the_repository():
    for path in USER_FILES:
        text = path.read_text(encoding="utf-8")
        for needle in ("baselines.md", "shared/papers", "shared/reference", "seed-schemes/", "shared papers", "/work/shared"):
            assert needle not in text, (str(path.relative_to(ROOT)), needle)


def test_scheme_sources_cite_the_references():
    """The engine's parameter sources (printed by `dclb schemes`) and its scheme modules cite no file outside the
    repository ("baselines.md", the old baseline specification), and every [key] a source uses is defined in
    docs/references.md."""
    import re

    references = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    defined = set(re.findall(r"^\| (\[[A-Za-z][\w-]*\]) \|", references, flags=re.MULTILINE))
    schemes = json.loads(_invoke("schemes", "--json").stdout)
    sources = [(s["name"], p["name"], p["source"]) for s in schemes for p in s["params"]]
    assert sources
    for scheme, param, source in sources:
        assert "baselines.md" not in source, (scheme, param, source)
        for key in re.findall(r"\[[A-Za-z][\w-]*\]", source):
            assert key in defined, (scheme, param, key)
    for path in sorted(p for part in ("src", "tests") for p in (ROOT / "crates").glob(f"*/{part}/**/*.rs")):
        text = path.read_text(encoding="utf-8")
        for needle in ("baselines.md", "shared/papers", "shared/reference", "seed-schemes/", "papers/mdtlb.txt"):
            assert needle not in text, (str(path.relative_to(ROOT)), needle)


def test_readme_says_how_to_install_dask_workers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install dclb`" not in readme  # dclb is not on PyPI
    assert "pip wheel . --no-deps -w dist" in readme and "--dask local" in readme

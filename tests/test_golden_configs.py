"""The golden cases' engine configs are what their scenarios resolve to today.

``cargo test`` checks the engine's results on these configs against blessed digests
(``crates/dclb-core/tests/golden.rs``); this test closes the other half of the path: a change in how the
Python front resolves a scenario (defaults, host sets, workloads, overrides) changes a case config and fails
here, naming the case. Re-bless with ``python tests/golden_cases.py --bless`` when that is meant.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("golden_cases", Path(__file__).with_name("golden_cases.py"))
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_every_case_has_a_config_file_and_nothing_else_is_there():
    on_disk = {p.stem for p in golden.CASES_DIR.glob("*.json")}
    assert on_disk == set(golden.CASES), "re-bless: python tests/golden_cases.py --bless"


def test_every_scheme_has_a_golden_case():
    from dclb import _core

    covered = {golden.case_config(n)["config"]["lb"]["scheme"] for n in golden.CASES if n.startswith("asym-")}
    assert covered == {s["name"] for s in _core.schemes()}


@pytest.mark.parametrize("name", sorted(golden.CASES))
def test_case_config_is_what_its_scenario_resolves_to(name):
    blessed = json.loads((golden.CASES_DIR / f"{name}.json").read_text())
    now = golden.case_config(name)
    assert json.loads(json.dumps(now)) == blessed, f"{name}: the scenario now resolves to another engine config; if meant, re-bless (python tests/golden_cases.py --bless) and say why in the commit"

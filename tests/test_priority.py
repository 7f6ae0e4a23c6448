"""Strict-priority queues from the scenario: ``topology.priority_queues`` and a source's ``priority`` reach the
engine as written, the defaults leave the engine config as it was, and a wrong value is one line naming the field
(the engine decides whether a level exists; the schema only what a priority table may hold)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY_FABRIC
from dclb.errors import ScenarioError
from dclb.scenario import engine_config, load_scenario
from test_scenario_schema import dclb_main, refused

#: One leaf: two long flows into host 3 and, after 1 ms, a short one from host 2 behind them.
SCENARIO = TINY_FABRIC.replace("leaves = 2", "leaves = 1") + """
[traffic]
pattern = "list"
transport = "dctcp"

[[traffic.sources]]
flow_list = [{start_us = 1000, src = 2, dst = 3, size_bytes = 20000}]

[[traffic.sources]]
flow_list = [{start_us = 0, src = 0, dst = 3, size_bytes = 2000000}, {start_us = 0, src = 1, dst = 3, size_bytes = 2000000}]
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "prio.toml"
    path.write_text(SCENARIO)
    return path


def _config(path: Path, *sets: str) -> dict:
    return engine_config(load_scenario(path, list(sets)))


def test_defaults_reach_the_engine_as_one_fifo_and_the_top_level(scenario):
    cfg = _config(scenario)
    assert cfg["topology"]["priority_queues"] == 1
    assert [s["priority"] for s in cfg["sources"]] == [{"kind": "fixed", "level": 0}] * 2


def test_a_priority_rule_reaches_the_engine_as_written(scenario):
    cfg = _config(scenario, "topology.priority_queues=3", 'traffic.sources.1.priority={kind = "pias", thresholds_bytes = [100000, 1000000]}', 'traffic.sources.0.priority={kind = "fixed", level = 0}')
    assert cfg["topology"]["priority_queues"] == 3
    assert cfg["sources"][1]["priority"] == {"kind": "pias", "thresholds_bytes": [100000, 1000000]}


@pytest.mark.parametrize(
    "setting, needles",
    [
        ("topology.priority_queues=0", ("topology.priority_queues",)),
        ("topology.priority_queues=9", ("topology.priority_queues", "8")),
        ('traffic.sources.1.priority={kind = "fixed"}', ("traffic.sources[1].priority.level", "required")),
        ('traffic.sources.1.priority={kind = "pias", level = 1, thresholds_bytes = [5]}', ("traffic.sources[1].priority.level", "not used by priority kind 'pias'")),
        ('traffic.sources.1.priority={kind = "lowest"}', ("traffic.sources[1].priority.kind",)),
        # The engine's relations: a level the ports do not have, a balancer's priority option without queues.
        ('traffic.sources.1.priority={kind = "fixed", level = 1}', ("traffic.sources[1].priority.level", "does not exist", "priority_queues is 1")),
        (("lb.scheme=lbt", "lb.short_priority=true"), ("lb.short_priority", "priority_queues = 2 or more")),
    ],
)
def test_a_wrong_priority_is_one_line_naming_the_field(scenario, setting, needles):
    settings = setting if isinstance(setting, tuple) else (setting,)
    refused(dclb_main("run", str(scenario), "--dry-run", "--no-store", *[a for s in settings for a in ("--set", s)]), *needles)


def test_priority_queues_let_the_short_flow_pass_the_long_flows(scenario):
    """The crafted check end to end through the front: the short flow's FCT with the long source a level below
    is a fraction of its FCT in one FIFO."""
    import dclb

    def short_fct(*sets: str) -> float:
        flows = dclb.run(scenario, out=None, overrides=list(sets)).flows.to_pandas()
        return float(flows.loc[flows["size_bytes"] == 20000, "fct_us"].iloc[0])

    fifo = short_fct()
    prio = short_fct("topology.priority_queues=2", 'traffic.sources.1.priority={kind = "fixed", level = 1}')
    assert prio < 0.5 * fifo, (prio, fifo)


def test_scenario_error_type(scenario):
    with pytest.raises(ScenarioError):
        _config(scenario, "topology.priority_queues=0")


def test_fields_added_later_keep_the_run_ids_stored_before_them(scenario: Path) -> None:
    # The shipped quick start as identified by the commit before priority queues and the window existed
    # (6a9063f): a scenario that leaves the new fields at their defaults must find its stored runs again.
    from dclb.runner import run_id_for

    root = Path(__file__).resolve().parents[1]
    assert run_id_for(load_scenario(root / "scenarios" / "quickstart.toml")) == "quickstart-04b700dd20e0"
    plain = load_scenario(scenario)
    resolved = plain.resolved()
    assert "priority_queues" not in resolved["topology"]
    assert all("priority" not in s for s in resolved["traffic"]["sources"])
    # The engine still gets every field explicitly, and a scenario that uses them is another run.
    assert engine_config(plain)["topology"]["priority_queues"] == 1
    assert all(s["priority"] == {"kind": "fixed", "level": 0} for s in engine_config(plain)["sources"])
    two = load_scenario(scenario, ["topology.priority_queues=2"])
    assert two.resolved()["topology"]["priority_queues"] == 2 and run_id_for(two) != run_id_for(plain)
    lower = load_scenario(scenario, ["topology.priority_queues=2", "traffic.sources[0].priority.level=1"])
    assert lower.resolved()["traffic"]["sources"][0]["priority"]["level"] == 1 and run_id_for(lower) != run_id_for(two)


def test_a_list_element_is_set_by_either_spelling_of_its_path(scenario: Path) -> None:
    # Messages name a source as traffic.sources[1]; an override written that way sets the same field as the
    # dotted index (it once landed in a key named "sources[0]" and failed as "traffic: unknown field").
    dotted = load_scenario(scenario, ["topology.priority_queues=2", "traffic.sources.0.priority.level=1"])
    bracket = load_scenario(scenario, ["topology.priority_queues=2", "traffic.sources[0].priority.level=1"])
    assert dotted.resolved() == bracket.resolved()
    with pytest.raises(ScenarioError, match=r"'sources\[x\]' is neither a field name nor a list index"):
        load_scenario(scenario, ["traffic.sources[x].load=0.3"])

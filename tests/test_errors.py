"""The engine's typed errors and how the front names the user's field from them; the one-line helper, the JSON
normaliser, the user-error classes and the headline registry that several views share."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import TINY, dclb_cli

from dclb import _core
from dclb.errors import ScenarioError, StoreError, UserError, one_line
from dclb.headline import COMPARISON, RUN_SUMMARY
from dclb.jsonvalues import json_text, to_jsonable
from dclb.memory import parse_size
from dclb.scenario import engine_config, load_scenario, resolve


# --------------------------------------------------------------------------------------------------------
# The engine's errors carry their field as data


def _config_of(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return engine_config(load_scenario(path))


def test_the_engine_raises_a_config_error_with_the_path_as_data(tmp_path):
    config = _config_of(tmp_path, TINY)
    config["sources"][0]["load"] = 3.0
    with pytest.raises(_core.ConfigError) as e:
        _core.check_config(json.dumps(config))
    assert isinstance(e.value, ValueError)
    assert e.value.path == ("traffic", "sources", 0, "load")
    assert e.value.message.startswith("must be in (0, 1]")
    assert str(e.value) == f"traffic.sources[0].load: {e.value.message}"
    # A value the engine cannot read is named by its path too (serde's path, in the engine's spelling).
    config["sources"][0]["load"] = 0.5
    config["lb"]["params"] = {"d": "two"}
    config["topology"]["leaves"] = -1
    with pytest.raises(_core.ConfigError) as e:
        _core.check_config(json.dumps(config))
    assert e.value.path == ("topology", "leaves") and "line 1 column" not in str(e.value)


def _resolution(tmp_path: Path, text: str, files: dict[str, str] = {}):  # noqa: B006 -- read only
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    path = tmp_path / "s.toml"
    path.write_text(text)
    return resolve(load_scenario(path))


SEVERAL = """
[topology]
leaves = 2
spines = 2
hosts_per_leaf = 4
[traffic]
load = 0.2
flows = 10
[[traffic.sources]]
workload = {websearch = 1, datamining = 2}
[[traffic.sources]]
pattern = "list"
flow_list = [{start_us = 0, src = 1, dst = 5, size_bytes = 1000}]
flows_csv = "flows.csv"
"""


def test_engine_paths_are_named_as_the_user_wrote_the_field(tmp_path):
    single = _resolution(tmp_path, TINY)
    assert single.user_field(("traffic", "sources", 0, "load")) == "traffic.load"
    assert single.user_field(("traffic", "sources", 0, "workload", 0, "points", 3)) == "traffic.workload.points[3]"
    assert single.user_field(("lb", "d")) == "lb.d"
    assert single.user_field(("topology", "links", 2, "leaf")) == "topology.links[2].leaf"
    assert single.user_field(("traffic",)) == "traffic"
    several = _resolution(tmp_path, SEVERAL, {"flows.csv": "start_us,src,dst,size_bytes\n0,1,5,1000\n\n5,2,6,1000\n"})
    assert several.user_field(("traffic", "sources", 0, "workload", 1, "weight")) == "traffic.sources[0].workload.datamining.weight"
    assert several.user_field(("traffic", "sources", 1, "list")) == "traffic.sources[1].flow_list"
    assert several.user_field(("traffic", "sources", 1, "list", 0, "start_us")) == "traffic.sources[1].flow_list[0].start_us"
    assert several.user_field(("traffic", "sources", 1, "list", 2)) == f"{tmp_path / 'flows.csv'}:4"  # inline first, then the CSV's lines
    assert several.user_field(("traffic", "sources", 1, "receivers")) == "traffic.sources[1].receivers"


class _EngineError:
    def __init__(self, path: tuple, message: str) -> None:
        self.path, self.message = path, message


def test_an_engine_error_becomes_the_users_line(tmp_path):
    single = _resolution(tmp_path, TINY)
    error = single.user_error(_EngineError(("traffic", "sources", 0, "load"), "must be in (0, 1]"))
    assert isinstance(error, ScenarioError) and str(error) == "traffic.load: must be in (0, 1]"
    assert str(single.user_error(_EngineError((), "run: no progress"))) == "run: no progress"


# --------------------------------------------------------------------------------------------------------
# One line, one JSON normaliser, user errors


def test_one_line():
    assert one_line(ValueError("a\n  b   c\n   ^^^\n")) == "a b c"
    assert one_line(KeyError()) == "KeyError"
    assert one_line(TypeError("bad  thing"), name_type=True) == "TypeError: bad thing"
    assert one_line(ScenarioError("traffic.load: x"), name_type=True) == "traffic.load: x"  # user errors say it all


def test_json_values_are_strict_json():
    value = {"a": np.float64("nan"), "b": [np.int64(3), (1.5, math.inf)], "c": pd.NA, "d": pd.NaT, "e": Path("x"), 4: np.array([1, 2])}
    assert to_jsonable(value) == {"a": None, "b": [3, [1.5, None]], "c": None, "d": None, "e": "x", "4": [1, 2]}
    assert json_text({"b": 1, "a": float("nan")}, sort_keys=True, compact=True) == '{"a":null,"b":1}'
    with pytest.raises(TypeError):
        to_jsonable(object())
    assert to_jsonable({1j}, strict=False) == "{1j}"


def test_user_errors_are_value_errors_and_scenario_and_store_errors_are_user_errors():
    assert issubclass(UserError, ValueError)
    assert issubclass(ScenarioError, UserError) and issubclass(StoreError, UserError)
    with pytest.raises(UserError, match="DCLB_MEMORY_LIMIT: cannot read 'lots'"):
        parse_size("lots")


@pytest.mark.parametrize("text, size", [("8GB", 8 * 10**9), ("512 MB", 512 * 10**6), ("2GiB", 2 * 2**30), ("1e9", 10**9), ("4096", 4096), ("none", None), ("off", None)])
def test_memory_limit_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "0", "-5", "0.5", "inf", "nan", "8 GBs"])
def test_memory_limits_that_are_no_size(text):
    with pytest.raises(UserError):
        parse_size(text)


def test_jobs_below_one_is_one_line(tiny, tmp_path):
    result = dclb_cli("sweep", str(tiny), "--jobs", "0", "--out", str(tmp_path / "s"), "-q")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == ["error: --jobs: must be at least 1, got 0"]


# --------------------------------------------------------------------------------------------------------
# One registry of headline metrics


def test_the_comparison_metrics_are_among_the_run_summary():
    assert COMPARISON and set(COMPARISON) <= set(RUN_SUMMARY)
    assert len(set(RUN_SUMMARY)) == len(RUN_SUMMARY)

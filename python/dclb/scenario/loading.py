"""Loading a scenario: the TOML file, ``--set`` overrides, validation and resolution.

Overrides (``--set a.b=value``, the value read as TOML when it parses, else as text) are applied to the raw
TOML first, so they are validated exactly like the file. :func:`from_dict` validates raw data with the
schema (:mod:`dclb.scenario.schema`) and resolves it once (:func:`dclb.scenario.resolution.resolve`), which
is where the engine's one check runs: a scenario that loads is a scenario that can run.
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ScenarioError
from ..textfiles import read_text
from .resolution import resolve
from .schema import Scenario, validation_message

def parse_override(text: str) -> tuple[list[str | int], Any]:
    """``a.b.c=value`` -> (path, value). The value is read as TOML when it parses, else as a string."""
    if "=" not in text:
        raise ScenarioError(f"--set {text!r}: expected FIELD=VALUE, e.g. --set lb.scheme=rps")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key:
        raise ScenarioError(f"--set {text!r}: empty field name")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return field_path(key), value


def set_field(data: dict[str, Any], path: list[str | int], value: Any, label: str) -> None:
    """Sets ``data[path[0]][path[1]]... = value`` in place, creating tables on the way; ``label`` names the
    option in error messages (e.g. ``--set a.b=1``)."""
    node: Any = data
    for i, part in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(node, list):
            if not isinstance(part, int) or part >= len(node):
                raise ScenarioError(f"{label}: no list element {part} at {'.'.join(map(str, path[:i + 1]))}")
            node = node[part]
        elif isinstance(node, dict):
            if part not in node or node[part] is None:
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
        else:
            raise ScenarioError(f"{label}: {'.'.join(map(str, path[:i]))} is not a table")
    last = path[-1]
    if isinstance(node, list):
        if not isinstance(last, int) or last >= len(node):
            raise ScenarioError(f"{label}: no list element {last}")
        node[last] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise ScenarioError(f"{label}: {'.'.join(map(str, path[:-1]))} is not a table")


#: One dotted part of a field path: a name or an index, then any number of ``[index]``.
_PATH_PART = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")


def field_path(dotted: str) -> list[str | int]:
    """``"traffic.sources.0.load"``, or as messages spell it, ``"traffic.sources[0].load"`` ->
    ``["traffic", "sources", 0, "load"]``."""
    path: list[str | int] = []
    for part in dotted.split("."):
        m = _PATH_PART.fullmatch(part)
        if m is None:
            raise ScenarioError(f"{dotted}: {part!r} is neither a field name nor a list index (e.g. traffic.sources.0.load or traffic.sources[0].load)")
        name, indices = m.groups()
        path.append(int(name) if name.isdigit() else name)
        path.extend(int(i) for i in re.findall(r"\d+", indices))
    return path


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    data = copy.deepcopy(raw)
    for text in overrides:
        path, value = parse_override(text)
        set_field(data, path, value, f"--set {text}")
    return data


def from_dict(raw: dict[str, Any], base_dir: Path = Path("."), name: str = "scenario") -> Scenario:
    data = dict(raw)
    data.setdefault("name", name)
    if "traffic" not in data:
        raise ScenarioError("traffic: the scenario has no [traffic] table (every run needs at least one traffic source)")
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(validation_message(e, model=Scenario)) from None
    sc._base_dir = base_dir
    resolve(sc)
    return sc


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    """The raw TOML of a scenario file; a missing, unreadable or malformed file is a one-line ScenarioError."""
    text = read_text(path, "scenario file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None


def check_overrides(overrides: Any, label: str = "overrides") -> list[str]:
    """``overrides`` as a list of ``FIELD=VALUE`` texts: None and any sequence of texts are accepted; a single
    text (a common slip for a list of one) or anything else is a ScenarioError naming ``label``."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        raise ScenarioError(f"{label}: expected a list of 'FIELD=VALUE' texts, got the text {overrides!r}; write [{overrides!r}]")
    if not isinstance(overrides, (list, tuple)):
        raise ScenarioError(f"{label}: expected a list of 'FIELD=VALUE' texts, got {type(overrides).__name__} {overrides!r}")
    for item in overrides:
        if not isinstance(item, str):
            raise ScenarioError(f"{label}: expected 'FIELD=VALUE' texts such as 'lb.scheme=rps', got {type(item).__name__} {item!r}")
    return list(overrides)


def check_seed(seed: Any, label: str = "seed") -> int | None:
    """``seed`` if it is None or a whole number >= 0, else a ScenarioError naming ``label``."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScenarioError(f"{label}: expected a whole number >= 0 or None, got {seed!r}")
    return seed


def _check_path(path: Any, label: str) -> Path:
    if isinstance(path, (str, os.PathLike)) and str(path):
        return Path(path)
    raise ScenarioError(f"{label}: expected the path of a scenario file (str or os.PathLike), got {type(path).__name__} {path!r}")


def load_scenario(path: str | os.PathLike[str], overrides: list[str] | None = None, seed: int | None = None) -> Scenario:
    """Reads, overrides (``["lb.scheme=rps", ...]``, as ``--set`` takes them) and validates a scenario file."""
    p = _check_path(path, "path")
    overrides = check_overrides(overrides)
    seed = check_seed(seed)
    raw = read_scenario_file(p)
    raw = apply_overrides(raw, overrides)
    if seed is not None:
        raw["seed"] = seed
    return from_dict(raw, base_dir=p.parent.resolve(), name=p.stem)


def scenario_from(scenario: Any, overrides: Any = None, seed: Any = None, label: str = "scenario") -> Scenario:
    """A validated scenario from what a Python caller may pass for one: a :class:`Scenario`, the path of a
    scenario file (str or os.PathLike), or raw scenario data (a mapping of tables, relative file names
    resolved from the working directory); ``overrides`` and ``seed`` are applied as :func:`load_scenario`
    applies them. Anything else is a ScenarioError naming ``label`` and the accepted forms."""
    overrides = check_overrides(overrides)
    seed = check_seed(seed)
    if isinstance(scenario, Scenario):
        if not overrides and seed is None:
            return scenario
        raw = scenario.model_dump(mode="json", exclude_unset=True)
        raw = apply_overrides(raw, overrides)
        if seed is not None:
            raw["seed"] = seed
        return from_dict(raw, base_dir=scenario._base_dir, name=scenario.name)
    if isinstance(scenario, (str, os.PathLike)):
        return load_scenario(_check_path(scenario, label), overrides, seed)
    if isinstance(scenario, Mapping):
        raw = apply_overrides(dict(scenario), overrides)
        if seed is not None:
            raw["seed"] = seed
        return from_dict(raw, base_dir=Path.cwd())
    raise ScenarioError(
        f"{label}: expected a dclb.Scenario, the path of a scenario file or a dict of scenario tables, got {type(scenario).__name__} {scenario!r}"
    )

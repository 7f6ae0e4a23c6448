"""Planning a sweep: every point of the grid times the seeds, each validated exactly as ``dclb run`` would.

A point is the scenario that ``dclb run FILE --set FIELD=VALUE ... --seed S`` would run, with the same run
id. A point whose values are invalid is kept, with its message as its error (it becomes a failed run
without running); a sweep none of whose points is valid is an error. Nothing runs and nothing is written.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
import os
from pathlib import Path
from typing import Any, Optional

from ..errors import ScenarioError
from .grid import normalize_grid


@dataclass
class Point:
    """One run of a sweep: grid values and seed, and either a valid scenario or the reason it is invalid."""

    run_id: str
    values: dict[str, Any]
    seed: int
    scenario: Any = None  # a dclb.scenario.Scenario when valid
    config: Optional[dict[str, Any]] = None
    raw: dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None


@dataclass
class Plan:
    name: str
    grid: dict[str, list[Any]]
    seeds: list[int]
    points: list[Point]

    @property
    def fields(self) -> list[str]:
        return list(self.grid)


def _base_from(scenario_or_path: Any, overrides: Sequence[str]) -> tuple[dict[str, Any], Path, str]:
    """Raw scenario data (overrides applied), base directory and default name."""
    from ..scenario import Scenario, apply_overrides, check_overrides, read_scenario_file

    overrides = check_overrides(overrides)

    if isinstance(scenario_or_path, Scenario):
        raw = scenario_or_path.model_dump(mode="json", exclude_unset=True)
        if scenario_or_path.sweep is not None:
            raw["sweep"] = scenario_or_path.sweep.model_dump(mode="json")
        base_dir, name = scenario_or_path._base_dir, scenario_or_path.name
    elif isinstance(scenario_or_path, Mapping):
        raw, base_dir, name = copy.deepcopy(dict(scenario_or_path)), Path("."), "scenario"
    elif isinstance(scenario_or_path, (str, os.PathLike)) and str(scenario_or_path):
        path = Path(scenario_or_path)
        raw = read_scenario_file(path)
        base_dir, name = path.parent.resolve(), path.stem
    else:
        raise ScenarioError(
            f"scenario: expected a dclb.Scenario, the path of a scenario file or a dict of scenario tables, got {type(scenario_or_path).__name__} {scenario_or_path!r}"
        )
    return apply_overrides(raw, list(overrides)), base_dir, name


def plan_sweep(
    scenario_or_path: Any,
    grid: Mapping[str, Any] | None = None,
    seeds: int | None = None,
    overrides: Sequence[str] = (),
    seed: int | None = None,
    grid_label: str = "grid",
) -> Plan:
    """Expands a sweep into its points and validates each one (nothing runs, nothing is written)."""
    from pydantic import ValidationError

    from ..runner import run_id_for
    from ..scenario import MAX_SWEEP_RUNS, Sweep, engine_config, from_dict, validation_message
    from ..store import run_id_of

    raw, base_dir, name = _base_from(scenario_or_path, overrides)
    table_raw = raw.pop("sweep", None) or {}
    try:
        table = Sweep.model_validate(table_raw)
    except ValidationError as e:
        raise ScenarioError(validation_message(e, prefix="sweep", model=Sweep)) from None
    full = normalize_grid(table.grid, "sweep.grid")
    if grid is not None and not isinstance(grid, Mapping):
        raise ScenarioError(f"grid: expected a dict of field -> values, such as {{'lb.scheme': ['ecmp', 'rps']}}, got {type(grid).__name__} {grid!r}")
    full.update(normalize_grid(grid or {}, grid_label))
    seeds_label = "--seeds" if grid_label.startswith("--") else "seeds"
    n_seeds = seeds if seeds is not None else table.seeds
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or not 1 <= n_seeds <= MAX_SWEEP_RUNS:
        raise ScenarioError(f"{seeds_label}: must be a whole number from 1 to {MAX_SWEEP_RUNS:,}, got {n_seeds!r}")
    runs = n_seeds * math.prod(len(values) for values in full.values())
    if runs > MAX_SWEEP_RUNS:
        sizes = " x ".join([*(f"{len(v)} {k}" for k, v in full.items()), f"{n_seeds} seeds"])
        raise ScenarioError(f"{grid_label if full else seeds_label}: the sweep would have {runs:,} runs ({sizes}), more than the {MAX_SWEEP_RUNS:,} one sweep may have")
    if seed is not None:
        raw["seed"] = seed
    base_seed = raw.get("seed", 1)
    if isinstance(base_seed, bool) or not isinstance(base_seed, int) or base_seed < 0:
        raise ScenarioError(f"seed: must be a whole number >= 0, got {base_seed!r}")
    seed_values = [base_seed + i for i in range(n_seeds)]
    raw.setdefault("name", name)

    from ..scenario import field_path, set_field

    points: list[Point] = []
    seen: set[str] = set()
    for combo in itertools.product(*full.values()):
        values = dict(zip(full, combo))
        for s in seed_values:
            data = copy.deepcopy(raw)
            data["seed"] = s
            point = Point(run_id="", values=values, seed=s, raw=data)
            try:
                for key, value in values.items():
                    set_field(data, field_path(key), copy.deepcopy(value), f"grid {key}={value!r}")
                sc = from_dict(data, base_dir=base_dir, name=name)
                point.config = engine_config(sc)
                point.scenario = sc
                point.run_id = run_id_for(sc)
            except ScenarioError as e:
                point.error = str(e)
                point.run_id = run_id_of(data.get("name", name), data, valid=False)
            if point.run_id not in seen:
                seen.add(point.run_id)
                points.append(point)
    valid = [p for p in points if p.error is None]
    if not valid:
        raise ScenarioError(points[0].error if len(points) == 1 else f"no valid point in the sweep; the first: {points[0].error}")
    return Plan(name=str(raw.get("name", name)), grid=full, seeds=seed_values, points=points)

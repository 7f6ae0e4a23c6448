"""Sweep grids: the fields a sweep varies and their values, read from text or taken as given.

A grid maps dotted scenario fields to lists of values. A text of values is a comma list (``ecmp,rps,drb``),
each item read like ``--set`` (TOML when it parses, else a string), where an item ``START:STOP:STEP`` is an
inclusive numeric range (``0.2:0.8:0.2`` is 0.2, 0.4, 0.6, 0.8; the end point is kept when it is within
1e-9 steps of the range, and float values are rounded to 12 decimals, so ``0.6`` is exactly the number
``--set traffic.load=0.6`` gives). A list is taken literally. Every field is checked against the scenario
schema (:func:`check_grid_field`) and a value given twice is refused.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ScenarioError

#: Most points a single range may expand to (guards against a typo such as 0:1:0.0001).
MAX_RANGE_VALUES = 10_000


# --------------------------------------------------------------------------------------------------------
# Grid text


def _top_level(text: str):
    """Yields (index, character) for the characters outside quotes, brackets and braces."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif depth == 0:
            yield i, ch


def _split_top_level(text: str) -> list[str]:
    """Splits on commas that are not inside quotes, brackets or braces."""
    items, start = [], 0
    for i, ch in _top_level(text):
        if ch == ",":
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def _has_top_level_colon(item: str) -> bool:
    return any(ch == ":" for _, ch in _top_level(item))


def _number(text: str) -> int | float | None:
    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value


def expand_range(item: str, label: str) -> list[int | float]:
    """``"0.2:0.8:0.2"`` -> ``[0.2, 0.4, 0.6, 0.8]`` (inclusive; see the module documentation)."""
    parts = item.split(":")
    numbers = [_number(p) for p in parts]
    if len(parts) != 3 or any(n is None for n in numbers):
        raise ScenarioError(f"{label}: malformed range {item.strip()!r}; expected START:STOP:STEP with numbers, e.g. 0.2:0.8:0.2")
    start, stop, step = numbers  # type: ignore[misc]
    if step <= 0:
        raise ScenarioError(f"{label}: range {item.strip()!r} needs a positive step")
    if stop < start:
        raise ScenarioError(f"{label}: range {item.strip()!r} ends before it starts")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_RANGE_VALUES:
        raise ScenarioError(f"{label}: range {item.strip()!r} has {count:,} values (at most {MAX_RANGE_VALUES:,})")
    if all(isinstance(n, int) for n in numbers):
        return [start + i * step for i in range(count)]
    return [round(start + i * step, 12) for i in range(count)]


def parse_values(field: str, text: str, label: str) -> list[Any]:
    """The values of a grid entry written as text: a comma list whose items are read like ``--set`` values
    or are ``START:STOP:STEP`` ranges."""
    from ..scenario import parse_override

    values: list[Any] = []
    for item in _split_top_level(text):
        if not item.strip():
            raise ScenarioError(f"{label}: empty value in {text!r}")
        if _has_top_level_colon(item):
            values.extend(expand_range(item, label))
        else:
            values.append(parse_override(f"{field}={item.strip()}")[1])
    return values


def parse_grid_option(text: str) -> tuple[str, list[Any]]:
    """One ``--grid FIELD=VALUES`` option -> (field, values)."""
    if "=" not in text:
        raise ScenarioError(f"--grid {text}: expected FIELD=VALUES, e.g. --grid lb.scheme=ecmp,rps or --grid traffic.load=0.2:0.8:0.2")
    key, spec = text.split("=", 1)
    key = key.strip()
    return key, parse_values(key, spec, f"--grid {key}")


def _scheme_params() -> set[str] | None:
    try:
        from .. import _core
    except ImportError:
        return None
    return {p["name"] for s in _core.schemes() for p in s["params"]}


def check_grid_field(key: str, label: str) -> None:
    """Raises ScenarioError unless ``key`` is a scenario field a grid may vary."""
    from ..scenario import field_path_problem

    problem = field_path_problem(key)
    if problem:
        raise ScenarioError(f"{label}: {problem}")
    parts = key.split(".")
    if parts[0] == "lb" and len(parts) == 2 and parts[1] not in ("scheme", "timing"):
        params = _scheme_params()
        if params is not None and parts[1] not in params:
            raise ScenarioError(f"{label}: no scheme has a parameter '{parts[1]}' (`dclb schemes` lists them)")


def _value_key(value: Any) -> tuple[str, Any]:
    """What makes two grid values the same: numbers by value (``1`` and ``1.0`` set a float field alike),
    booleans apart from numbers, anything else by its JSON text."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    try:
        return (type(value).__name__, json.dumps(value, sort_keys=True, default=str))
    except (TypeError, ValueError):
        return (type(value).__name__, repr(value))


def _check_distinct(values: Sequence[Any], where: str) -> None:
    """A value given twice would be one run shown once: refuse it rather than merge it unsaid."""
    seen: dict[tuple[str, Any], Any] = {}
    for v in values:
        key = _value_key(v)
        if key in seen:
            same = f"{v!r}" if seen[key] is v or repr(seen[key]) == repr(v) else f"{v!r} (the same as {seen[key]!r})"
            raise ScenarioError(f"{where}: the value {same} is given twice; each value of a grid dimension must differ")
        seen[key] = v


def normalize_grid(grid: Mapping[str, Any], label: str = "grid") -> dict[str, list[Any]]:
    """Field -> list of values, every field checked. A list is taken literally, a text parsed as above,
    any other value is a single value."""
    out: dict[str, list[Any]] = {}
    for key, spec in grid.items():
        where = f"{label} {key}" if label.startswith("--") else f"{label}.{key}"
        check_grid_field(key, where)
        if isinstance(spec, str):
            values = parse_values(key, spec, where)
        elif isinstance(spec, (list, tuple)):
            values = list(spec)
        else:
            values = [spec]
        if not values:
            raise ScenarioError(f"{where}: needs at least one value")
        _check_distinct(values, where)
        out[key] = values
    return out

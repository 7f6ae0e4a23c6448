"""Run records and run ids: what a run leaves behind, how its id is made, and its catalog row.

:class:`RunRecord` is the one definition of a run's record: ``dclb run`` and sweep workers both build one,
it is written as ``run.json`` and a catalog row is made of it (:func:`catalog_row`: the record's scalar
fields, then the scenario and the summary flattened to dotted names, see :func:`flatten`). A run id is the
scenario's name made safe for a folder name and the start of :func:`scenario_hash`, the SHA-256 of the
scenario without its cosmetic fields (:data:`COSMETIC_FIELDS`) as canonical JSON (:mod:`dclb.jsonvalues`):
the same scenario always maps to the same folder.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..jsonvalues import json_text, to_jsonable

_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,=+@-]{0,199}")


#: Top-level scenario fields that change neither the simulation nor its stored
#: analysis: they are left out of the scenario hash, and so of the run id.
COSMETIC_FIELDS = ("name", "description")


def identity(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a scenario that makes a run what it is: everything but
    :data:`COSMETIC_FIELDS`."""
    return {key: value for key, value in scenario.items() if key not in COSMETIC_FIELDS}


def _sha256_16(value: Any) -> str:
    canonical = json_text(value, sort_keys=True, compact=True)  # sorted keys, no blanks, NaN as null
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def scenario_hash(scenario: Mapping[str, Any]) -> str:
    """First 16 hex digits of the SHA-256 of the scenario's :func:`identity`
    as canonical JSON (sorted keys, no whitespace, NaN as null)."""
    return _sha256_16(identity(scenario))


def _safe_name(name: Any) -> str:
    """``name`` as the start of a run id (a folder name): accents dropped (``café`` -> ``cafe``), any other
    character but ASCII letters, digits, ``_``, ``-`` and ``.`` replaced by ``_``, a leading ``.`` or ``-``
    too (a hidden folder, an option), cut to 60 characters. A name that is already safe is kept as it is."""
    plain = unicodedata.normalize("NFKD", str(name))
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    safe = "".join(c if (c.isascii() and c.isalnum()) or c in "_-." else "_" for c in plain)[:60]
    if safe[:1] in (".", "-"):
        safe = "_" + safe[1:]
    return safe or "run"


def run_id_of(name: Any, scenario: Mapping[str, Any], valid: bool = True) -> str:
    """The run id of a scenario: its name made safe for a folder name (cut to
    60 characters), a dash, and 12 hex digits of its :func:`scenario_hash`.

    ``valid=False`` is the id of a sweep point that failed validation; its
    ``scenario`` is the raw data, hashed under an ``"invalid"`` key so that it
    can never share an id with a valid run."""
    digest = scenario_hash(scenario) if valid else _sha256_16({"invalid": identity(scenario)})
    return f"{_safe_name(name)}-{digest[:12]}"


def utc_now(at: float | None = None) -> str:
    """The current UTC time (or the POSIX time ``at``) as ISO-8601 text to the second (the record's time
    stamps)."""
    when = dt.datetime.now(dt.timezone.utc) if at is None else dt.datetime.fromtimestamp(at, dt.timezone.utc)
    return when.isoformat(timespec="seconds")


def _catalog_field(sql_type: str, **options: Any) -> Any:
    """A record field that is also one of the leading catalog columns, of type ``sql_type``."""
    return field(metadata={"catalog": sql_type}, **options)


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """What one run leaves behind, completed or failed: ``run.json`` and the catalog row.

    The fields with a catalog type are the leading catalog columns, in this order; ``scenario`` and
    ``summary`` are flattened into the columns after them (see the module documentation).
    ``scenario_hash`` is derived from ``scenario``, so the two can never disagree."""

    run_id: str = _catalog_field("VARCHAR")
    name: str = _catalog_field("VARCHAR")
    status: str = _catalog_field("VARCHAR")  # "completed" or "failed"
    seed: int = _catalog_field("BIGINT")
    scenario_hash: str = _catalog_field("VARCHAR", init=False)
    dclb_version: str = _catalog_field("VARCHAR", default=__version__)
    started_at: str = _catalog_field("VARCHAR")
    finished_at: str = _catalog_field("VARCHAR", default_factory=utc_now)
    wall_s: float = _catalog_field("DOUBLE")
    error: str | None = _catalog_field("VARCHAR", default=None)
    #: The resolved scenario (nested, as ``Scenario.resolved()`` gives it; a failed point's raw data).
    scenario: dict[str, Any]
    #: The summary metrics (:func:`dclb.summary.summarize`); empty for a failed run.
    summary: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scenario_hash", scenario_hash(self.scenario))

    def as_dict(self) -> dict[str, Any]:
        """The record as plain data, the form ``run.json`` and the store's methods take."""
        return dataclasses.asdict(self)


#: Record fields that become the leading catalog columns, with their types.
RECORD_COLUMNS: dict[str, str] = {
    f.name: f.metadata["catalog"] for f in dataclasses.fields(RunRecord) if "catalog" in f.metadata
}

#: Longest scenario list whose elements also get a catalog column each (a long explicit flow list stays one
#: text column instead of becoming thousands of columns).
MAX_FLATTENED_LIST = 16


def flatten(d: Mapping[str, Any], prefix: str = "", lists: bool = False) -> dict[str, Any]:
    """Nested mappings to one level with dotted keys.

    ``{"lb": {"scheme": "ecmp"}}`` becomes ``{"lb.scheme": "ecmp"}``.  Lists
    and empty mappings are kept as values.  With ``lists=True`` a list of at
    most :data:`MAX_FLATTENED_LIST` elements is also spread over one key per
    element, named by its index: ``{"links": [{"rate": 2}]}`` gives
    ``{"links": [{"rate": 2}], "links.0.rate": 2}``.
    """
    flat: dict[str, Any] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, prefix=f"{name}.", lists=lists))
        else:
            flat[name] = value
            if lists and isinstance(value, list) and 0 < len(value) <= MAX_FLATTENED_LIST:
                elements = {str(index): item for index, item in enumerate(value)}
                flat.update(flatten(elements, prefix=f"{name}.", lists=True))
    return flat


RecordLike = RunRecord | Mapping[str, Any]


def plain_record(record: RecordLike) -> dict[str, Any]:
    return record.as_dict() if isinstance(record, RunRecord) else dict(record)


def normalized_record(record: RecordLike, run_id: str | None = None) -> dict[str, Any]:
    """JSON-clean copy of a record with ``run_id``, ``status`` and
    ``scenario_hash`` filled in where missing (a mapping from elsewhere may
    lack them; a :class:`RunRecord` never does)."""
    clean = to_jsonable(plain_record(record))
    given = clean.get("run_id")
    if run_id is not None:
        if given not in (None, run_id):
            raise ValueError(f"record says run_id={given!r} but was written as {run_id!r}")
        clean["run_id"] = run_id
    if not isinstance(clean.get("run_id"), str):
        raise ValueError("a run record needs a string 'run_id'")
    check_run_id(clean["run_id"])
    clean.setdefault("status", "completed")
    if isinstance(clean.get("scenario"), Mapping) and not clean.get("scenario_hash"):
        clean["scenario_hash"] = scenario_hash(clean["scenario"])
    return clean


def catalog_row(record: RecordLike) -> dict[str, Any]:
    """The catalog row of a run record (column name -> plain value; a
    missing summary measurement is NaN, see the module documentation)."""
    clean = normalized_record(record)
    row = {column: clean.get(column) for column in RECORD_COLUMNS}
    taken = {column.lower() for column in row}
    for section in ("scenario", "summary"):
        for key, value in flatten(clean.get(section) or {}, lists=section == "scenario").items():
            name = f"{section}.{key}" if key.lower() in taken else key
            if name and name.lower() not in taken:
                # run.json holds a missing measurement as null (JSON has no NaN); as NaN, a float, it still
                # makes its DOUBLE column, so a metric that is n/a in every run is a column all the same.
                row[name] = math.nan if section == "summary" and value is None else value
                taken.add(name.lower())
    return row


def check_run_id(run_id: str) -> None:
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise ValueError(
            f"invalid run id {run_id!r}: use letters, digits and _ . , = + @ -, "
            "not starting with '.' or '-', at most 200 characters"
        )

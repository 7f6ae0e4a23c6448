"""Plain JSON values: the one place where what Python holds becomes what strict JSON can say.

Run records (``run.json``, the catalog), ``--json`` output and the summary's list-valued metrics all pass
through :func:`to_jsonable`, so they agree on every edge: numpy and pandas scalars are unwrapped, NaN,
infinities and pandas' missing values (``NA``, ``NaT``) become ``None`` (JSON, RFC 8259, has no NaN and
most readers reject Python's ``NaN`` token), arrays and tuples become lists, dates ISO-8601 text, paths
text, pydantic models their JSON form. What has no JSON form is an error (``TypeError``) unless the caller
asks for its text instead (``strict=False``, for output meant to be read rather than read back).
:func:`json_text` writes the result, refusing NaN should one slip through.

numpy and pandas are recognised without being imported: writing a run never imports pandas (issue #12).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any


def _is_missing(value: Any) -> bool:
    """pandas' missing-value markers (``pd.NA``, ``pd.NaT``), if pandas is loaded at all."""
    pd = sys.modules.get("pandas")
    return pd is not None and (value is pd.NA or value is pd.NaT)


def to_jsonable(value: Any, *, strict: bool = True) -> Any:
    """A plain-JSON copy of ``value`` (see the module documentation). ``strict=False`` turns a value with no
    JSON form into its text instead of raising ``TypeError``."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item, strict=strict) for key, item in value.items()}
    if isinstance(value, (list, tuple)) or (np is not None and isinstance(value, np.ndarray)):
        return [to_jsonable(item, strict=strict) for item in value]
    if value is None or _is_missing(value):
        return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if hasattr(value, "model_dump"):  # pydantic models
        return to_jsonable(value.model_dump(mode="json"), strict=strict)
    if not strict:
        return str(value)
    raise TypeError(f"cannot store a {type(value).__name__} as JSON")


def json_text(value: Any, *, strict: bool = True, indent: int | None = None, sort_keys: bool = False, compact: bool = False) -> str:
    """Strict JSON text of :func:`to_jsonable` of ``value``; ``compact`` leaves out every optional blank
    (the canonical form hashes are taken of, with ``sort_keys``)."""
    separators = (",", ":") if compact else None
    return json.dumps(to_jsonable(value, strict=strict), indent=indent, sort_keys=sort_keys, separators=separators, allow_nan=False)

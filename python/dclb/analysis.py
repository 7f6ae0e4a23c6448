"""Reading a result store for tables and figures: which fields vary, means and confidence intervals over
seeds, normalisation to a baseline, axis labels with units.

Confidence intervals
--------------------
A point of a figure is the mean over the runs that differ only in their seed, with a 95 % confidence
interval ``mean ± t(0.975, n-1) · s / √n`` (``s`` the sample standard deviation, ``n`` the number of
seeds; no interval for ``n = 1``). The t quantile is :mod:`scipy`'s (a dependency of dclb, so that a
figure never depends on what else happens to be installed).

What a figure draws of it (the ``lo`` and ``hi`` columns of :func:`aggregate`) is that interval clipped to
the values the metric can physically take (:func:`physical_range`: a slowdown is at least 1, a miss rate lies
in [0, 1], times, throughputs, counts and ratios to a baseline are not negative), so a band never claims an
FCT below zero. With fewer than ``MIN_SEEDS_FOR_CI`` = 3 seeds nothing is drawn: from 2 seeds the interval is
``mean ± 12.7 · s / √2``, which says nothing about the metric (it reached a slowdown of -40), and the figure
says that there is no interval instead.

Normalisation
-------------
``normalize(runs, metric, "lb.scheme=ecmp")`` divides each run's metric by that of the baseline run with
the same seed and the same value of every other varying scenario field, the baseline field set to the
given value. When the baseline field is ``lb.scheme``, the other ``lb.*`` fields are not matched (they are
the schemes' own parameters). Runs without a baseline partner are dropped.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import UserError

#: Catalog columns that are not scenario fields although they contain a dot.
_NOT_SCENARIO_PREFIXES = ("summary.", "stats.", "scenario.")

#: Units by name suffix, longest first.
_UNITS = [
    ("_per_s", "1/s"),
    ("_gbps", "Gbps"),
    ("_mbps", "Mbps"),
    ("_bytes", "bytes"),
    ("_packets", "packets"),
    ("_us", "µs"),
    ("_ms", "ms"),
    ("_s", "s"),
]


# --------------------------------------------------------------------------------------------------------
# Labels


def unit_of(name: str) -> str | None:
    """The unit a name's suffix states (``short_afct_us`` -> ``µs``), or None."""
    for suffix, unit in _UNITS:
        if name.endswith(suffix):
            return unit
    return None


_PRETTY = {
    "fct_us": "Flow completion time",
    "slowdown": "Slowdown (FCT / ideal FCT)",
    "queue_bytes": "Queue length",
    "bytes": "Bytes delivered",
    "throughput_gbps": "Throughput",
    "time_us": "Time",
}


def label_of(name: str, with_unit: bool = True) -> str:
    """An axis label with its unit: ``short_afct_us`` -> ``Short flows (≤ 100 KB) mean FCT (µs)``."""
    from .summary import _row_spec

    known = {key: label for key, label, _ in _row_spec({})}
    unit = unit_of(name)
    if name in known:
        text = known[name]
    elif name in _PRETTY:
        text = _PRETTY[name]
    elif "." in name:  # a scenario field: keep its dotted name, which is what users type
        text = name
    else:
        text = name.replace("_", " ")
        if unit:
            stem = name
            for suffix, u in _UNITS:
                if name.endswith(suffix):
                    stem = name[: -len(suffix)]
                    break
            text = stem.replace("_", " ")
        text = text[:1].upper() + text[1:]
    return f"{text} ({unit})" if unit and with_unit else text


# --------------------------------------------------------------------------------------------------------
# Statistics


def t_quantile(p: float, dof: int) -> float:
    """Quantile ``p`` of Student's t with ``dof`` degrees of freedom."""
    if dof < 1:
        raise ValueError("t_quantile needs at least 1 degree of freedom")
    from scipy.stats import t as student_t  # imported when a figure needs it: scipy.stats takes a while to load

    return float(student_t.ppf(p, dof))


def mean_ci(values: Iterable[float], level: float = 0.95) -> tuple[float, float, int]:
    """(mean, half-width of the confidence interval, n) of the finite values; half-width NaN if n < 2."""
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, 0
    if n == 1:
        return float(x[0]), math.nan, 1
    half = t_quantile(0.5 + level / 2, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return float(x.mean()), half, n


#: Fewest seeds for which a figure draws a confidence interval (see the module documentation).
MIN_SEEDS_FOR_CI = 3


def physical_range(name: str, ratio: bool = False) -> tuple[float, float]:
    """(lowest, highest) value metric ``name`` can take: a slowdown (FCT / ideal FCT) is at least 1, a rate or
    fraction or share (``deadline_miss_rate``) lies in [0, 1], anything else dclb reports (times, throughputs, counts,
    bytes) is at least 0. With ``ratio`` (the metric divided by a baseline's) only the lower bound 0 holds."""
    if ratio:
        return 0.0, math.inf
    if "slowdown" in name:
        return 1.0, math.inf
    if name.endswith(("_rate", "_fraction", "_share")):
        return 0.0, 1.0
    return 0.0, math.inf


def clipped_interval(mean: float, half: float, n: int, bounds: tuple[float, float]) -> tuple[float, float]:
    """The interval ``mean ± half`` clipped to ``bounds``; (NaN, NaN) when there is none worth drawing
    (fewer than ``MIN_SEEDS_FOR_CI`` values, or no half-width)."""
    if n < MIN_SEEDS_FOR_CI or not math.isfinite(half) or not math.isfinite(mean):
        return math.nan, math.nan
    return max(mean - half, bounds[0]), min(mean + half, bounds[1])


def aggregate(frame: pd.DataFrame, by: Sequence[str], y: str, bounds: tuple[float, float] | None = None) -> pd.DataFrame:
    """Mean, CI half-width and count of ``y`` for each combination of ``by`` (NaN keys kept), with ``lo`` and
    ``hi``, the interval a figure draws: clipped to ``bounds`` (default: :func:`physical_range` of ``y``), NaN
    with fewer than ``MIN_SEEDS_FOR_CI`` values."""
    bounds = bounds or physical_range(y)
    rows = []
    groups = frame.groupby(list(by), dropna=False, sort=True) if by else [((), frame)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        mean, half, n = mean_ci(group[y])
        lo, hi = clipped_interval(mean, half, n, bounds)
        rows.append({**dict(zip(by, key)), "mean": mean, "ci": half, "n": n, "lo": lo, "hi": hi})
    return pd.DataFrame(rows, columns=[*by, "mean", "ci", "n", "lo", "hi"])


# --------------------------------------------------------------------------------------------------------
# The runs of a store


def scenario_columns(runs: pd.DataFrame) -> list[str]:
    """Catalog columns that hold scenario fields (dotted names such as ``lb.scheme``, plus ``name``)."""
    out = [c for c in runs.columns if "." in c and not c.startswith(_NOT_SCENARIO_PREFIXES)]
    return (["name"] if "name" in runs.columns else []) + out


def _distinct(series: pd.Series) -> list[Any]:
    values = series.dropna().tolist()
    out: list[Any] = []
    for v in values:
        if not any(v == u for u in out):
            out.append(v)
    try:
        return sorted(out)
    except TypeError:
        return sorted(out, key=str)


def varying_fields(runs: pd.DataFrame) -> list[str]:
    """Scenario fields with more than one distinct (non-null) value among ``runs`` (seed not included).

    A list field has a column of its own (JSON text) and one per element (``topology.links.0.rate_gbps``,
    see :mod:`dclb.store`); when an element varies, the element is the field that says how the runs differ
    and the whole list, which would only repeat it less readably, is left out."""
    varying = [c for c in scenario_columns(runs) if len(_distinct(runs[c])) > 1]
    return [c for c in varying if not any(other.startswith(c + ".") for other in varying)]


def field_values(runs: pd.DataFrame, fields: Sequence[str]) -> dict[str, list[Any]]:
    return {f: _distinct(runs[f]) for f in fields}


def is_numeric(series: pd.Series) -> bool:
    values = series.dropna()
    return bool(len(values)) and pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def load_runs(store: Any, where: str | None = None, completed: bool = True) -> pd.DataFrame:
    """The catalog rows (completed runs only unless ``completed=False``), optionally filtered by a SQL
    condition on the catalog such as ``"traffic.load >= 0.4"`` (quote dotted names: ``"lb.scheme" = 'rps'``
    is also accepted written as lb.scheme = 'rps')."""
    if where:
        condition = _quote_dotted(where)
        runs = store.sql(f"SELECT * FROM runs WHERE {condition} ORDER BY run_id")
    else:
        runs = store.runs()
    if completed:
        damaged = runs[runs["status"] == "damaged"]
        if len(damaged) and hasattr(store, "warn_damaged"):
            store.warn_damaged(dict(zip(damaged["run_id"], damaged["error"])))  # left out, and named
        runs = runs[runs["status"] == "completed"]
    return runs.reset_index(drop=True)


#: A dotted field name: a first part that starts with a letter, then parts that are names or list indices.
_DOTTED = re.compile(r'(?<![\w".\'])([A-Za-z_]\w*(?:\.(?:[A-Za-z_]\w*|\d+))+)(?![\w"])')


def _quote_dotted(condition: str) -> str:
    """Puts double quotes around bare dotted names outside string literals (``lb.scheme`` -> ``"lb.scheme"``)."""
    parts = re.split(r"('(?:[^']|'')*')", condition)
    return "".join(p if i % 2 else _DOTTED.sub(r'"\1"', p) for i, p in enumerate(parts))


def require_columns(runs: pd.DataFrame, names: Iterable[str | None], what: str = "field") -> None:
    import difflib

    for name in names:
        if name is None or name in runs.columns:
            continue
        close = difflib.get_close_matches(name, [str(c) for c in runs.columns], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UserError(f"{name}: no such {what} in the results{hint}")


def parse_baseline(text: str, runs: pd.DataFrame) -> tuple[str, Any]:
    """``"lb.scheme=ecmp"`` -> ("lb.scheme", "ecmp"), the value read like ``--set`` and checked to occur."""
    from .scenario import parse_override

    if "=" not in text:
        raise UserError(f"--normalize-to {text}: expected FIELD=VALUE, e.g. lb.scheme=ecmp")
    key = text.split("=", 1)[0].strip()
    require_columns(runs, [key])
    value = parse_override(text)[1]
    if not _matches(runs[key], value).any():
        raise UserError(f"--normalize-to {text}: no completed run has {key} = {value!r}; values: {', '.join(map(str, _distinct(runs[key])))}")
    return key, value


def _matches(series: pd.Series, value: Any) -> pd.Series:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and is_numeric(series):
        return pd.Series(np.isclose(series.astype(float), float(value), rtol=1e-9, atol=1e-12), index=series.index)
    return series.astype(str) == str(value)


def normalize(runs: pd.DataFrame, metric: str, baseline: str) -> pd.DataFrame:
    """``runs`` with ``metric`` divided by the matching baseline run's value (see the module docs)."""
    field, value = parse_baseline(baseline, runs)
    match = [f for f in varying_fields(runs) if f != field and not (field == "lb.scheme" and f.startswith("lb."))]
    keys = [*match, "seed"]
    is_base = _matches(runs[field], value)
    base = runs.loc[is_base, [*keys, metric]].rename(columns={metric: "__baseline"})
    base = base.drop_duplicates(subset=keys)
    key_frame = runs[keys].astype(str)
    base_keys = base[keys].astype(str)
    lookup = dict(zip(map(tuple, base_keys.to_numpy()), base["__baseline"]))
    denominators = [lookup.get(tuple(k)) for k in key_frame.to_numpy()]
    out = runs.copy()
    out["__baseline"] = pd.to_numeric(pd.Series(denominators, index=runs.index), errors="coerce")
    out = out[out["__baseline"].notna()].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out[metric] = out[metric].astype(float) / out["__baseline"].astype(float)
    return out.drop(columns="__baseline")

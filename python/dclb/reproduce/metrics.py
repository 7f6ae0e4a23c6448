"""The numbers the papers plot, as :class:`~dclb.reproduce.spec.Metric` objects.

Summary metrics come straight from a run's summary (definitions in docs/metrics.md, written once). Papers that
draw their own size classes (MDTLB's long flows are those above 10 MB, TR's three bins) get flow-table metrics:
the mean or a percentile of the FCT, or the mean goodput, of the completed flows whose size lies in ``(lo, hi]``.
FCTs are shown in milliseconds, rates in Gbps.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
import pandas as pd

from .spec import Metric

US_TO_MS = 1e-3


def summary(key: str, label: str, factor: float = 1.0) -> Metric:
    """The run summary's ``key``."""
    return Metric(key=key, label=label, summary=key, factor=factor)


SHORT_AFCT = summary("short_afct_us", "short-flow AFCT (ms)", US_TO_MS)
SHORT_P99 = summary("short_p99_fct_us", "short-flow 99th-percentile FCT (ms)", US_TO_MS)
LONG_AFCT = summary("long_afct_us", "long-flow AFCT (ms)", US_TO_MS)
OVERALL_AFCT = summary("overall_afct_us", "AFCT (ms)", US_TO_MS)
OVERALL_P99 = summary("overall_p99_fct_us", "99th-percentile FCT (ms)", US_TO_MS)
LONG_GOODPUT = summary("long_goodput_gbps", "long-flow goodput (Gbps)")
DEADLINE_MISS = summary("deadline_miss_rate", "deadline miss rate")
RETRANSMISSIONS = summary("retransmissions", "retransmitted packets")


def _in_range(flows: pd.DataFrame, lo: Optional[float], hi: Optional[float]) -> pd.DataFrame:
    done = flows[(flows["state"] == "completed") & (flows["transport"] != "udp")]
    size = done["size_bytes"]
    if lo is not None:
        done = done[size > lo]
        size = done["size_bytes"]
    if hi is not None:
        done = done[size <= hi]
    return done


def _range_name(lo: Optional[float], hi: Optional[float]) -> str:
    def b(v: Optional[float]) -> str:
        if v is None:
            return "inf"
        return (f"{v / 1e6:g}MB" if v >= 1e6 else f"{v / 1e3:g}KB").replace(".", "_")

    return f"{b(lo) if lo is not None else '0'}_{b(hi)}"


def fct_mean(lo: Optional[float], hi: Optional[float], label: str) -> Metric:
    """Mean FCT (ms) of completed flows with size in (lo, hi] (``None``: unbounded)."""

    def f(flows: pd.DataFrame) -> float:
        d = _in_range(flows, lo, hi)
        return float(d["fct_us"].mean()) * US_TO_MS if len(d) else math.nan

    return Metric(key=f"fct_mean_{_range_name(lo, hi)}", label=f"{label} (ms)", flows=f)


def fct_quantile(q: float, lo: Optional[float], hi: Optional[float], label: str) -> Metric:
    """The ``q`` quantile of FCT (ms) of completed flows with size in (lo, hi]."""

    def f(flows: pd.DataFrame) -> float:
        d = _in_range(flows, lo, hi)
        return float(np.quantile(d["fct_us"], q)) * US_TO_MS if len(d) else math.nan

    return Metric(key=f"fct_p{q * 100:g}_{_range_name(lo, hi)}".replace(".", "_"), label=f"{label} (ms)", flows=f)


def goodput_mean(lo: Optional[float], hi: Optional[float], label: str) -> Metric:
    """Mean per-flow goodput (size / FCT, Gbps) of completed flows with size in (lo, hi]."""

    def f(flows: pd.DataFrame) -> float:
        d = _in_range(flows, lo, hi)
        if not len(d):
            return math.nan
        return float((d["size_bytes"] * 8 / (d["fct_us"] * 1e3)).mean())

    return Metric(key=f"goodput_{_range_name(lo, hi)}", label=label, flows=f)

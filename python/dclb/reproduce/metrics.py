"""The numbers the papers plot, as :class:`~dclb.reproduce.spec.Metric` objects, defined once for all five.

Summary metrics come straight from a run's summary (definitions in docs/metrics.md). The rest are computed from
the run's flow table over a **size class** (:class:`Sizes`): the papers draw the line between short and long flows
at 100 KB but on different sides (LBT, TAM, MDTLB: short ≤ 100 KB; TR: short < 100 KB, long ≥ 100 KB; TR's large
scale bins (0, 100 KB], (100 KB, 1 MB], (1 MB, ∞)), so a class says which. A flow table is filtered by
:func:`flows_of`: its size class, TCP only (UDP flows have no FCT), completed flows for anything that reads an FCT,
and optionally without best-effort flows (LBT leaves them out of every number).

Where a paper leaves a metric undefined, both readings are defined here and a claim reads one and declares the
other as an alternative (``Reading(..., kind="metric")``; docs/reproduce.md § Undefined metrics): a deadline miss
rate that counts flows the network cancelled as misses (:data:`DEADLINE_MISS`) or leaves them out
(:func:`deadline_late_rate`); "overall performance" as the AFCT of all flows (:data:`OVERALL_AFCT`) or their mean
slowdown (:data:`MEAN_SLOWDOWN`). A miss rate has its counts beside it (:data:`DEADLINE_MISSES`,
:func:`deadline_count`, :func:`slack_miss_count`): a rate over a handful of flows says little on its own.

Units: FCTs in milliseconds, rates in Gbps, queueing in µs. A metric's key is its CSV column and names that unit
(``short_afct_ms``, never ``_us`` over values in ms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import pandas as pd

from .spec import Metric

US_TO_MS = 1e-3
#: The papers' line between short and long flows, bytes.
SHORT_LIMIT = 100_000


@dataclass(frozen=True)
class Sizes:
    """A size class of flows: ``(lo, hi]`` (``right_closed``) or ``[lo, hi)``; ``None`` is unbounded."""

    lo: Optional[float] = None
    hi: Optional[float] = None
    right_closed: bool = True

    def select(self, flows: pd.DataFrame) -> pd.DataFrame:
        size = flows["size_bytes"]
        keep = pd.Series(True, index=flows.index)
        if self.lo is not None:
            keep &= size > self.lo if self.right_closed else size >= self.lo
        if self.hi is not None:
            keep &= size <= self.hi if self.right_closed else size < self.hi
        return flows[keep]

    @property
    def name(self) -> str:
        """For keys: ``0_100KB``, ``100KB_inf``; ``lt`` / ``ge`` mark a left-closed class."""

        def b(v: Optional[float]) -> str:
            if v is None:
                return "inf"
            return (f"{v / 1e6:g}MB" if v >= 1e6 else f"{v / 1e3:g}KB").replace(".", "_")

        if self.lo is None and self.hi is None:
            return "all"
        if not self.right_closed:
            return f"lt{b(self.hi)}" if self.lo is None else f"ge{b(self.lo)}" if self.hi is None else f"{b(self.lo)}_lt{b(self.hi)}"
        return f"{b(self.lo) if self.lo is not None else '0'}_{b(self.hi)}"


ALL = Sizes()
#: ≤ 100 KB and > 100 KB (LBT, TAM, MDTLB's short flows, TR's large-scale first bin).
SHORT, LONG = Sizes(hi=SHORT_LIMIT), Sizes(lo=SHORT_LIMIT)
#: < 100 KB and ≥ 100 KB (TR's motivation, L35).
SHORT_LT, LONG_GE = Sizes(hi=SHORT_LIMIT, right_closed=False), Sizes(lo=SHORT_LIMIT, right_closed=False)


def flows_of(flows: pd.DataFrame, sizes: Sizes = ALL, *, completed: bool = True, best_effort: bool = True) -> pd.DataFrame:
    """The TCP flows of ``sizes`` (``completed``: those that completed; ``best_effort=False``: without best-effort
    flows)."""
    f = flows[flows["transport"] != "udp"]
    if completed:
        f = f[f["state"] == "completed"]
    if not best_effort and "best_effort" in f.columns:
        f = f[~f["best_effort"].astype(bool)]
    return sizes.select(f)


# ---------------------------------------------------------------------------------------------------------------
# From the run summary


def summary(key: str, label: str, unit: str = "", scale: str = "ratio", drains: bool = False) -> Metric:
    """The run summary's ``key``; ``unit="ms"`` shows a ``_us`` value in milliseconds under a ``_ms`` key;
    ``drains``: it reads only short flows (:attr:`~dclb.reproduce.spec.Metric.drains`)."""
    if unit == "ms" and key.endswith("_us"):
        return Metric(key=key[: -len("_us")] + "_ms", label=label, summary=key, factor=US_TO_MS, scale=scale, drains=drains)
    return Metric(key=key, label=label, summary=key, scale=scale, drains=drains)


def _short_only(sizes: "Sizes") -> bool:
    """Whether a size class holds only short flows, which end well within a drain after the window."""
    return sizes.hi is not None and sizes.hi <= SHORT_LIMIT


SHORT_AFCT = summary("short_afct_us", "short-flow AFCT (ms)", "ms", drains=True)
SHORT_P99 = summary("short_p99_fct_us", "short-flow 99th-percentile FCT (ms)", "ms", drains=True)
LONG_AFCT = summary("long_afct_us", "long-flow AFCT (ms)", "ms")
OVERALL_AFCT = summary("overall_afct_us", "AFCT (ms)", "ms")
OVERALL_P99 = summary("overall_p99_fct_us", "99th-percentile FCT (ms)", "ms")
LONG_GOODPUT = summary("long_goodput_gbps", "long-flow goodput (Gbps)")
#: Missed deadline flows over deadline flows; a flow the network cancelled (DAR's Level III) or that did not finish
#: is a miss (the engine's ``deadline_met``). The other reading is :data:`DEADLINE_MISS_LATE`.
DEADLINE_MISS = summary("deadline_miss_rate", "deadline miss rate", scale="difference")
#: How many deadline flows missed (cancelled ones included): the count behind :data:`DEADLINE_MISS`.
DEADLINE_MISSES = summary("deadline_misses", "missed deadline flows (count)", scale="difference")
# Their floor: the flows whose deadline is shorter than their FCT alone miss whatever the balancer (defined below).
#: Mean over completed flows of FCT / ideal FCT (each at least 1): every flow weighs the same, whatever its size,
#: where the AFCT of all flows is dominated by the largest flows.
MEAN_SLOWDOWN = summary("mean_slowdown", "mean slowdown (FCT / ideal FCT)")
#: Packets dropped anywhere (buffer overflow, failed links).
DROPS = summary("drops", "packets dropped", scale="difference")


# ---------------------------------------------------------------------------------------------------------------
# From the flow table


#: The flow table's FCT, and the FCT each flow would have alone on the fabric (its best path, the transport's
#: slow start and handshake: docs/metrics.md). An FCT metric read on the second is its headroom floor: no load
#: balancer can bring the metric below it (:attr:`~dclb.reproduce.spec.Metric.ideal`).
FCT, ALONE = "fct_us", "alone_fct_us"


def _fct_values(flows: pd.DataFrame, sizes: Sizes, best_effort: bool, column: str) -> Optional[pd.Series]:
    """The ``column`` (an FCT) of the completed flows of ``sizes``; None when the run's table lacks it (runs
    stored before the column existed)."""
    if column not in flows.columns:
        return None
    return flows_of(flows, sizes, best_effort=best_effort)[column]


def afct(sizes: Sizes, label: str, *, key: str = "", best_effort: bool = True, column: str = FCT) -> Metric:
    """Mean FCT (ms) of the completed flows of ``sizes``; its ``ideal`` is the same mean of their alone FCTs."""

    def f(flows: pd.DataFrame) -> float:
        v = _fct_values(flows, sizes, best_effort, column)
        return float(v.mean()) * US_TO_MS if v is not None and len(v) else math.nan

    key = key or f"afct_{sizes.name}_ms"
    ideal = afct(sizes, f"{label}, alone", key=f"{key}_alone", best_effort=best_effort, column=ALONE) if column == FCT else None
    return Metric(key=key, label=f"{label} (ms)", flows=f, ideal=ideal, drains=_short_only(sizes))


def fct_quantile(q: float, sizes: Sizes, label: str, *, key: str = "", best_effort: bool = True, column: str = FCT) -> Metric:
    """The ``q`` quantile of the FCT (ms) of the completed flows of ``sizes``; its ``ideal`` is the same quantile
    of their alone FCTs."""

    def f(flows: pd.DataFrame) -> float:
        v = _fct_values(flows, sizes, best_effort, column)
        return float(np.quantile(v, q)) * US_TO_MS if v is not None and len(v) else math.nan

    key = key or f"fct_p{q * 100:g}_{sizes.name}_ms".replace(".", "_")
    ideal = fct_quantile(q, sizes, f"{label}, alone", key=f"{key}_alone", best_effort=best_effort, column=ALONE) if column == FCT else None
    return Metric(key=key, label=f"{label} (ms)", flows=f, ideal=ideal, drains=_short_only(sizes))


# The run summary's FCT metrics read their floor from the flow table: the summary's short flows are those of at
# most ``run.short_threshold_bytes`` (100 KB, what every paper's scenario keeps), TCP flows that completed.
SHORT_AFCT = replace(SHORT_AFCT, ideal=afct(SHORT, "short-flow AFCT, alone", key="short_afct_ms_alone", column=ALONE))
SHORT_P99 = replace(SHORT_P99, ideal=fct_quantile(0.99, SHORT, "short-flow p99 FCT, alone", key="short_p99_fct_ms_alone", column=ALONE))
LONG_AFCT = replace(LONG_AFCT, ideal=afct(LONG, "long-flow AFCT, alone", key="long_afct_ms_alone", column=ALONE))
OVERALL_AFCT = replace(OVERALL_AFCT, ideal=afct(ALL, "AFCT, alone", key="overall_afct_ms_alone", column=ALONE))
OVERALL_P99 = replace(OVERALL_P99, ideal=fct_quantile(0.99, ALL, "p99 FCT, alone", key="overall_p99_fct_ms_alone", column=ALONE))


def goodput_mean(sizes: Sizes, label: str, *, key: str = "", best_effort: bool = True) -> Metric:
    """Mean per-flow goodput (size / FCT, Gbps) of the completed flows of ``sizes``: what "average throughput" of
    flows means (each flow's own rate, averaged)."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes, best_effort=best_effort)
        return float((d["size_bytes"] * 8 / (d["fct_us"] * 1e3)).mean()) if len(d) else math.nan

    return Metric(key=key or f"goodput_{sizes.name}_gbps", label=f"{label} (Gbps)", flows=f, drains=_short_only(sizes))


def busy_us(flows: pd.DataFrame) -> float:
    """Length of the union of the flows' [start, finish] intervals (µs): the time at least one is active."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(zip(flows["start_us"], flows["finish_us"])):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def delivered_gbps(sizes: Sizes, label: str, *, key: str = "") -> Metric:
    """The class's total throughput: bytes its completed flows delivered over the time at least one of them was
    active (:func:`busy_us`), in Gbps. Bounded by what the receivers can take, unlike a sum of per-flow rates."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes)
        t = busy_us(d) if len(d) else 0.0
        return float(d["size_bytes"].sum()) * 8 / (t * 1e3) if t > 0 else math.nan

    return Metric(key=key or f"delivered_{sizes.name}_gbps", label=f"{label} (Gbps)", flows=f, drains=_short_only(sizes))


def slack_miss_rate(sizes: Sizes, factor: float, label: str, *, key: str = "", best_effort: bool = True) -> Metric:
    """Share of the flows of ``sizes`` that miss a deadline of ``factor`` times their ideal FCT (unfinished ones
    miss)."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes, completed=False, best_effort=best_effort)
        if not len(d):
            return math.nan
        met = (d["state"] == "completed") & (d["fct_us"] <= factor * d["ideal_fct_us"])
        return float(1.0 - met.mean())

    return Metric(key=key or f"miss_{factor:g}x_{sizes.name}_rate", label=label, flows=f, scale="difference", drains=_short_only(sizes))


def slack_miss_count(sizes: Sizes, factor: float, label: str, *, key: str = "", best_effort: bool = True) -> Metric:
    """How many flows of ``sizes`` miss a deadline of ``factor`` times their ideal FCT (the count behind
    :func:`slack_miss_rate`)."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes, completed=False, best_effort=best_effort)
        met = (d["state"] == "completed") & (d["fct_us"] <= factor * d["ideal_fct_us"])
        return float((~met).sum())

    return Metric(key=key or f"miss_{factor:g}x_{sizes.name}_flows", label=label, flows=f, scale="difference", drains=_short_only(sizes))


def _deadline_flows(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[flows["deadline_us"].notna()] if "deadline_us" in flows.columns else flows.iloc[:0]


def _missed(d: pd.DataFrame) -> pd.Series:
    """Deadline flows that did not meet their deadline: ``deadline_met`` false (a cancelled or unfinished flow has
    it false too)."""
    return ~d["deadline_met"].fillna(False).astype(bool)


def deadline_late_rate(label: str = "deadline miss rate, late only (cancelled flows left out)", *, key: str = "deadline_late_rate") -> Metric:
    """The deadline miss rate with cancelled flows left out of both counts: deadline flows that missed (finished
    late, or did not finish) over deadline flows the network did not cancel.

    The other reading of a paper's "miss rate" beside :data:`DEADLINE_MISS`, which counts a cancelled flow as a
    miss. It is the rate a flow log that records only delivered flows would give (a flow the network gave up on
    never finishes, so it leaves no record); it flatters a scheme that cancels (DAR) and equals
    :data:`DEADLINE_MISS` for one that never does."""

    def f(flows: pd.DataFrame) -> float:
        d = _deadline_flows(flows)
        d = d[d["state"] != "cancelled"]
        return float(_missed(d).mean()) if len(d) else math.nan

    return Metric(key=key, label=label, flows=f, scale="difference")


def deadline_count(which: str, label: str, *, key: str = "") -> Metric:
    """How many deadline flows: ``"late"`` missed without being cancelled (finished late, or did not finish);
    ``"cancelled"`` cancelled by the network (each a miss under :data:`DEADLINE_MISS`). With
    :data:`DEADLINE_MISSES` (their sum) the counts behind the two miss rates."""
    if which not in ("late", "cancelled"):
        raise ValueError(f"deadline_count: which must be 'late' or 'cancelled', not {which!r}")

    def f(flows: pd.DataFrame) -> float:
        d = _deadline_flows(flows)
        cancelled = d["state"] == "cancelled"
        return float(cancelled.sum() if which == "cancelled" else (_missed(d) & ~cancelled).sum())

    return Metric(key=key or f"deadline_{which}_flows", label=label, flows=f, scale="difference")


def deadline_alone_misses(rate: bool, *, key: str) -> Metric:
    """The deadline flows that would miss even alone on the fabric (their ``alone_fct_us`` beyond their deadline):
    a share of the deadline flows (``rate``) or a count. The floor no load balancer can bring a miss rate or count
    below, so the headroom of a miss-rate claim (:attr:`~dclb.reproduce.spec.Metric.ideal`); NaN for runs stored
    before the column existed."""

    def f(flows: pd.DataFrame) -> float:
        if ALONE not in flows.columns:
            return math.nan
        d = _deadline_flows(flows)
        if not len(d):
            return math.nan
        missed = (d[ALONE].isna() | (d[ALONE] > d["deadline_us"])).sum()
        return float(missed / len(d) if rate else missed)

    what = "share" if rate else "count"
    return Metric(key=key, label=f"deadline flows that miss even alone ({what})", flows=f, scale="difference")


DEADLINE_MISS = replace(DEADLINE_MISS, ideal=deadline_alone_misses(True, key="deadline_miss_rate_alone"))
DEADLINE_MISSES = replace(DEADLINE_MISSES, ideal=deadline_alone_misses(False, key="deadline_misses_alone"))


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def retx_ratio(sizes: Sizes, label: str, *, key: str = "") -> Metric:
    """Retransmitted packets over packets sent, of every flow of ``sizes``."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes, completed=False)
        return _ratio(float(d["retransmissions"].sum()), float(d["packets_sent"].sum()))

    return Metric(key=key or f"retx_{sizes.name}_ratio", label=label, flows=f, scale="difference")


def retx_count(sizes: Sizes, label: str, *, key: str = "") -> Metric:
    """Retransmitted packets of every flow of ``sizes``, summed."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes, completed=False)
        return float(d["retransmissions"].sum()) if len(d) else math.nan

    return Metric(key=key or f"retx_{sizes.name}_packets", label=label, flows=f, scale="difference")


def queueing_per_packet(sizes: Sizes, label: str, *, key: str = "", completed: bool = False) -> Metric:
    """Mean queueing delay per packet (µs) of the flows of ``sizes``: their summed queueing time over the packets
    they sent (retransmissions included)."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes, completed=completed)
        return _ratio(float(d["queueing_delay_us"].sum()), float(d["packets_sent"].sum()))

    return Metric(key=key or f"queueing_{sizes.name}_us", label=f"{label} (µs)", flows=f)


def path_std_mbps(sizes: Sizes, label: str, *, key: str = "") -> Metric:
    """Population standard deviation, over the source leaf's uplinks, of the completed flows' rate on each (Mbps):
    each uplink's bytes of those flows over the time they are active (:func:`busy_us`)."""

    def f(flows: pd.DataFrame) -> float:
        d = flows_of(flows, sizes)
        if not len(d):
            return math.nan
        per_uplink = np.sum(np.stack([np.asarray(u, dtype=float) for u in d["uplink_bytes"]]), axis=0)
        t = busy_us(d)
        return float(np.std(per_uplink * 8 / t)) if t > 0 else math.nan  # bytes/µs x 8 = Mbps

    return Metric(key=key or f"path_std_{sizes.name}_mbps", label=f"{label} (Mbps)", flows=f)

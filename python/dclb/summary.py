"""Headline numbers of one simulation run.

How it works
------------
The engine hands back two tables and a dict: one row per flow, one row per
switch/host port, and engine counters (``events``, ``sim_time_us``,
``wall_s``, ...).  :func:`summarize` turns them into one *flat* dict of
scalars with stable key names.  That dict is what the CLI prints (through
:func:`summary_rows`), what ``run.json`` stores, and what the result catalog
turns into columns, so the names below are a public contract.

Which flows enter which number
------------------------------
* With a measurement window (``run.warmup_us``; the flow table then has a
  ``measured`` column), every number below covers the *measured* flows
  only -- those that arrived in their source's window -- except
  ``flows_total``, which counts every flow that ran (warm-up and cool-down
  flows included), and the port counters.  Without a window every flow is
  measured.
* Counts of flows by state (``flows_*``) cover every (measured) flow, UDP
  included.
* Flow-completion-time (FCT) statistics, slowdowns and the per-class counts
  (``short_*`` / ``long_*``) cover TCP flows only (transport other than
  ``"udp"``): a UDP flow has no completion in the TCP sense.
* FCT averages and percentiles are taken over *completed* flows only.  Flows
  that were cancelled or still running when the simulation stopped have no
  FCT; they are counted in ``short_unfinished`` / ``long_unfinished`` and
  ``short_cancelled`` / ``long_cancelled`` so they are never silently lost.
  ``fct_policy`` repeats this rule inside every summary.
* A flow is *short* when ``size_bytes <= short_threshold_bytes`` (default
  100 000 B) and *long* otherwise.  The fixed size bins are right-closed,
  with KB = 1000 B: (0, 100 KB], (100 KB, 1 MB], (1 MB, inf).
* Deadline statistics cover TCP flows with a deadline (``deadline_us`` not
  null).  Such a flow meets its deadline only if it completed and the engine
  reported ``deadline_met`` true; a cancelled or unfinished deadline flow is
  a miss.
* Percentiles use numpy's default (linear interpolation).  A statistic over
  an empty group is NaN; no exception and no numpy warning is raised.

Keys and units
--------------
Flow counts::

    flows_total            flows of every transport that ran (measured or not)
    flows_measured         ... of them measured (= flows_total without a
                           measurement window); the counts below are of these
    flows_completed        ... in state "completed"
    flows_cancelled        ... in state "cancelled"
    flows_unfinished       ... in state "unfinished"
    flows_udp              UDP flows (left out of everything that follows,
                           down to and including the deadline keys)
    short_threshold_bytes  short/long boundary used, bytes
    short_flows            TCP flows with size <= threshold
    short_completed        ... of them completed
    short_unfinished       ... of them unfinished (no FCT)
    short_cancelled        ... of them cancelled (no FCT)
    long_flows, long_completed, long_unfinished, long_cancelled
                           the same for size > threshold

Completion times (completed TCP flows; NaN for an empty group)::

    short_afct_us          mean FCT of short flows, µs
    short_p99_fct_us       99th-percentile FCT of short flows, µs
    long_afct_us           mean FCT of long flows, µs
    long_goodput_gbps      mean over long flows of size*8/FCT, Gbit/s
    fct_0_100k_avg_us      mean FCT, size in (0, 100 KB], µs
    fct_0_100k_p99_us      p99 FCT, size in (0, 100 KB], µs
    fct_100k_1m_avg_us     mean FCT, size in (100 KB, 1 MB], µs
    fct_100k_1m_p99_us     p99 FCT, size in (100 KB, 1 MB], µs
    fct_1m_inf_avg_us      mean FCT, size > 1 MB, µs
    fct_1m_inf_p99_us      p99 FCT, size > 1 MB, µs
    overall_afct_us        mean FCT of all completed TCP flows, µs
    overall_p99_fct_us     p99 FCT of all completed TCP flows, µs
    mean_slowdown          mean of FCT / ideal FCT (dimensionless, >= 1)
    p99_slowdown           p99 of FCT / ideal FCT

Deadlines (TCP flows with a deadline)::

    deadline_flows         flows carrying a deadline
    deadline_misses        of those, flows that missed it
    deadline_miss_rate     misses / deadline_flows, fraction 0..1 (NaN if none)

Long-lived flows (flows of unbounded size: a ``long_lived`` source without
``size_bytes``; they never complete, so they have no FCT and are counted as
long and unfinished above).  A flow's goodput is its in-order delivered bytes
x 8 over the time it was active: from its start to its finish, or to the end
of the run (the horizon) if it did not finish; a flow with no active time is
left out.  All NaN (and the count 0) without long-lived flows::

    long_lived_flows               flows of unbounded size
    long_lived_goodput_gbps        mean of their goodputs, Gbit/s
    long_lived_goodput_min_gbps    the lowest, Gbit/s
    long_lived_goodput_max_gbps    the highest, Gbit/s
    long_lived_goodput_total_gbps  the sum of their goodputs, Gbit/s

UDP flows (the measured ones; a UDP flow ends once every byte it sent was
delivered or dropped, at its last delivered byte; NaN and 0 without UDP
flows)::

    udp_bytes_sent         payload bytes the UDP flows sent
    udp_bytes_lost         ... of them the network dropped (NIC, switch, wire)
    udp_loss_ratio         udp_bytes_lost / udp_bytes_sent, fraction 0..1
    udp_flows_with_loss    UDP flows that lost at least one packet

Counters (integers)::

    drops, ecn_marks       packets, summed over all ports
    retransmissions, spurious_retransmissions, timeouts, out_of_order
                           summed over all (measured) flows (UDP included)

Measurement window (NaN without one; see docs/metrics.md)::

    window_carried_load_ratio  bits the poisson sources' flows delivered in
                               their windows / bits their nominal loads offer
                               in them, read by the engine at the window
                               bounds (exact, not estimated)
    window_drain_us            how long the last measured flow ran after the
                               run's last arrival, µs (0: measured flows never
                               saw a draining fabric)
    window_flows_not_arrived, window_opens_us, window_closes_us
                               passed through from the engine when it has a
                               window (cool-down flows drawn that had not
                               arrived when the run stopped; the window's span)

The whole fabric over the measured span (the window's, or without one the
poisson sources' first to last arrival; NaN without a poisson source; read
by the engine at the span's bounds, see docs/metrics.md)::

    fabric_carried_load_ratio  in-order payload every flow delivered to its
                               receiver in the span (a stationary start's
                               pre-loaded flows and other sources' flows
                               included) / payload the poisson sources'
                               nominal loads offer in it
    fabric_span_us             the span's length, µs
    util_host_to_leaf, util_leaf_to_host, util_leaf_to_spine,
    util_spine_to_leaf         mean utilisation (wire bytes sent / capacity)
                               over the span of the working links of each kind

A stationary start (``run.start = "stationary"``) passes through
``prefill_flows``, ``prefill_remaining_bytes``, ``prefill_fluid_flows``,
``prefill_fluid_time_us``, ``prefill_candidates``, ``prefill_load_ratio`` (the
fluid model's carried load in the state taken, of nominal) and
``prefill_cut_bytes``; a run stopped at its drain (``run.drain_us``) passes
through ``window_flows_censored``, the measured flows still running then.

Engine::

    events                 events processed (NaN if the engine did not say)
    events_per_s           events / wall_s, 1/s (NaN unless wall_s > 0)
    sim_time_us            simulated time, µs
    wall_s                 engine wall-clock time, s
    fct_policy             text stating how unfinished flows are treated

Any other key found in ``stats`` is passed through unchanged (non-scalar
values as JSON text); if its name clashes with a key above it is stored as
``stats.<name>``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Sequence, Any

from typing import TYPE_CHECKING

import numpy as np

from .jsonvalues import json_text
from .tables import Columns, columns_of

if TYPE_CHECKING:  # accepted but not imported: `dclb run` loads neither (issues #12, #30)
    import pandas as pd
    import pyarrow as pa

__all__ = ["summarize", "summary_rows", "FCT_POLICY", "SIZE_BINS"]

TableLike = "pa.Table | pd.DataFrame | Columns"
Scalar = float | int | str

KB = 1_000
MB = 1_000_000
DEFAULT_SHORT_THRESHOLD_BYTES = 100 * KB

#: (key stem, lower bound exclusive, upper bound inclusive) in bytes.
SIZE_BINS: tuple[tuple[str, float, float], ...] = (
    ("0_100k", 0, 100 * KB),
    ("100k_1m", 100 * KB, 1 * MB),
    ("1m_inf", 1 * MB, math.inf),
)

FCT_POLICY = (
    "FCT stats over completed TCP flows only; unfinished and cancelled flows "
    "are counted in short_/long_unfinished and short_/long_cancelled; UDP "
    "excluded; an uncompleted deadline flow is a miss"
)

_FLOW_COUNTERS = (
    "retransmissions",
    "spurious_retransmissions",
    "timeouts",
    "out_of_order",
)
_PORT_COUNTERS = ("drops", "ecn_marks")
#: The size the engine gives a flow that never ends (``UNBOUNDED`` in crates/dclb-core/src/traffic/mod.rs).
UNBOUNDED_BYTES = (2**64 - 1) // 4
#: The window's and the fabric meter's statistics every summary has (NaN in a run without a window, or
#: without a poisson source).
_WINDOW_STATS = (
    "window_carried_load_ratio",
    "window_drain_us",
    "fabric_carried_load_ratio",
    "fabric_span_us",
    "util_host_to_leaf",
    "util_leaf_to_host",
    "util_leaf_to_spine",
    "util_spine_to_leaf",
)
_KNOWN_STATS = ("events", "sim_time_us", "wall_s", "window_flows_measured", *_WINDOW_STATS)
NAN = float("nan")


# --------------------------------------------------------------------------
# small numeric helpers: empty input gives NaN, never a warning
# --------------------------------------------------------------------------


def _finite(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values[np.isfinite(values)]


def _mean(values: np.ndarray) -> float:
    values = _finite(values)
    return float(values.mean()) if values.size else NAN


def _p99(values: np.ndarray) -> float:
    values = _finite(values)
    return float(np.percentile(values, 99)) if values.size else NAN


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator) / float(denominator) if denominator > 0 else NAN


class _Columns:
    """Typed numpy views of a table's columns (:mod:`dclb.tables`), each restricted to the rows of ``mask``
    (all rows without)."""

    def __init__(self, table: Columns, mask: np.ndarray | None = None):
        self.table, self.mask = table, mask

    def rows(self, mask: np.ndarray) -> "_Columns":
        return _Columns(self.table, mask if self.mask is None else _restrict(self.mask, mask))

    def __len__(self) -> int:
        return self.table.num_rows if self.mask is None else int(self.mask.sum())

    def has(self, name: str) -> bool:
        return name in self.table.column_names

    def _take(self, values: np.ndarray) -> np.ndarray:
        return values if self.mask is None else values[self.mask]

    def floats(self, name: str) -> np.ndarray:
        """A numeric column as float64; nulls are NaN."""
        return self._take(self.table.floats(name))

    def ints(self, name: str) -> np.ndarray:
        """An integer column as int64."""
        return self._take(self.table.ints(name))

    def bools(self, name: str) -> np.ndarray:
        """A boolean column; nulls read as False."""
        return self._take(self.table.bools(name))

    def equals(self, name: str, text: str) -> np.ndarray:
        """Rows whose text column equals ``text``; nulls do not."""
        return self._take(self.table.equals(name, text))

    def present(self, name: str) -> np.ndarray:
        """Rows where the column is not null (and, for a float column, not NaN)."""
        return ~np.isnan(self.floats(name))

    def total(self, name: str) -> int:
        if not self.has(name) or len(self) == 0:
            return 0
        return int(np.nansum(self.floats(name)))


def _restrict(outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """A full-length mask of the rows selected by ``inner`` among those selected by ``outer``."""
    combined = outer.copy()
    combined[outer] = inner
    return combined


# --------------------------------------------------------------------------
# the groups of statistics
# --------------------------------------------------------------------------


def _state_counts(every_flow: _Columns, flows: _Columns) -> dict[str, Scalar]:
    """Flows that ran, measured flows (the same without a window), and the measured flows by state."""
    return {
        "flows_total": len(every_flow),
        "flows_measured": len(flows),
        "flows_completed": int(flows.equals("state", "completed").sum()),
        "flows_cancelled": int(flows.equals("state", "cancelled").sum()),
        "flows_unfinished": int(flows.equals("state", "unfinished").sum()),
        "flows_udp": int(flows.equals("transport", "udp").sum()),
    }


def _udp_stats(flows: _Columns) -> dict[str, Scalar]:
    """What the UDP flows sent and lost (a table from before the ``udp_lost_bytes`` column: nothing lost)."""
    udp = flows.rows(flows.equals("transport", "udp"))
    sent = udp.total("bytes_sent")
    lost = udp.total("udp_lost_bytes")
    with_loss = int((udp.floats("udp_lost_bytes") > 0).sum()) if udp.has("udp_lost_bytes") and len(udp) else 0
    return {
        "udp_bytes_sent": sent,
        "udp_bytes_lost": lost,
        "udp_loss_ratio": _ratio(lost, sent) if len(udp) else NAN,
        "udp_flows_with_loss": with_loss,
    }


def _class_counts(tcp: _Columns, is_short: np.ndarray) -> dict[str, Scalar]:
    counts: dict[str, Scalar] = {}
    for name, members in (("short", is_short), ("long", ~is_short)):
        counts[f"{name}_flows"] = int(members.sum())
        for wanted in ("completed", "unfinished", "cancelled"):
            counts[f"{name}_{wanted}"] = int((members & tcp.equals("state", wanted)).sum())
    return counts


def _fct_stats(done: _Columns, short_threshold_bytes: int) -> dict[str, Scalar]:
    size = done.floats("size_bytes")
    fct = done.floats("fct_us")
    short, long_ = size <= short_threshold_bytes, size > short_threshold_bytes
    stats: dict[str, Scalar] = {
        "short_afct_us": _mean(fct[short]),
        "short_p99_fct_us": _p99(fct[short]),
        "long_afct_us": _mean(fct[long_]),
        "long_goodput_gbps": _long_goodput_gbps(size[long_], fct[long_]),
    }
    for stem, low, high in SIZE_BINS:
        in_bin = (size > low) & (size <= high)
        stats[f"fct_{stem}_avg_us"] = _mean(fct[in_bin])
        stats[f"fct_{stem}_p99_us"] = _p99(fct[in_bin])
    slowdown = done.floats("slowdown")
    stats.update(
        overall_afct_us=_mean(fct),
        overall_p99_fct_us=_p99(fct),
        mean_slowdown=_mean(slowdown),
        p99_slowdown=_p99(slowdown),
    )
    return stats


def _long_goodput_gbps(size_bytes: np.ndarray, fct_us: np.ndarray) -> float:
    valid = fct_us > 0
    # bits per microsecond is Mbit/s; a further /1000 gives Gbit/s
    return _mean(size_bytes[valid] * 8.0 / fct_us[valid] / 1_000.0)


def _long_lived_stats(flows: _Columns, sim_time_us: float) -> dict[str, Scalar]:
    """Goodput of the flows that never end, at the end of the run (see the module documentation)."""
    # Compared as integers: UNBOUNDED_BYTES is not exact in a float64.
    long_lived = flows.rows(flows.ints("size_bytes") >= UNBOUNDED_BYTES)
    start = long_lived.floats("start_us")
    end = long_lived.floats("finish_us")
    end = np.where(np.isnan(end), sim_time_us, end)
    active = end - start
    if long_lived.has("bytes_delivered"):
        delivered = long_lived.floats("bytes_delivered")
    else:
        delivered = np.full(len(long_lived), np.nan)
    # bits per microsecond is Mbit/s; a further /1000 gives Gbit/s
    goodput = _finite(np.divide(delivered * 8.0, active, out=np.full(len(active), np.nan), where=active > 0) / 1_000.0)
    return {
        "long_lived_flows": len(long_lived),
        "long_lived_goodput_gbps": _mean(goodput),
        "long_lived_goodput_min_gbps": float(goodput.min()) if goodput.size else NAN,
        "long_lived_goodput_max_gbps": float(goodput.max()) if goodput.size else NAN,
        "long_lived_goodput_total_gbps": float(goodput.sum()) if goodput.size else NAN,
    }


def _deadline_stats(tcp: _Columns) -> dict[str, Scalar]:
    has_deadline = tcp.present("deadline_us")
    met = tcp.equals("state", "completed") & tcp.bools("deadline_met")
    flows = int(has_deadline.sum())
    misses = int((has_deadline & ~met).sum())
    return {
        "deadline_flows": flows,
        "deadline_misses": misses,
        "deadline_miss_rate": _ratio(misses, flows),
    }


def _engine_stats(stats: Mapping[str, Any]) -> dict[str, Scalar]:
    events = stats.get("events")
    wall_s = float(stats.get("wall_s", NAN))
    return {
        "events": int(events) if events is not None else NAN,
        "events_per_s": _ratio(events, wall_s) if events is not None else NAN,
        "sim_time_us": float(stats.get("sim_time_us", NAN)),
        "wall_s": wall_s,
    }


def _window_stats(stats: Mapping[str, Any]) -> dict[str, Scalar]:
    """The measurement window's numbers (NaN without a window, or for a bound the run never reached)."""
    return {key: NAN if stats.get(key) is None else float(stats[key]) for key in _WINDOW_STATS}


def _passthrough(stats: Mapping[str, Any], taken: set[str]) -> dict[str, Scalar]:
    extra: dict[str, Scalar] = {}
    for key, value in stats.items():
        if key in _KNOWN_STATS:
            continue
        name = f"stats.{key}" if key in taken else str(key)
        extra[name] = NAN if value is None else _as_scalar(value)
    return extra


def _as_scalar(value: Any) -> Scalar:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, str)):
        return value
    return json_text(value, strict=False, sort_keys=True)  # a list or object, as strict JSON text


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------


def summarize(
    flows: TableLike,
    ports: TableLike,
    stats: Mapping[str, Any] | None,
    short_threshold_bytes: int = DEFAULT_SHORT_THRESHOLD_BYTES,
) -> dict[str, Scalar]:
    """Reduce the per-flow and per-port tables of one run to flat scalars.

    See the module documentation for every key, its unit and which flows it
    covers.  Integers come back as ``int``, measurements as ``float`` (NaN for
    an empty group), ``fct_policy`` as ``str``.
    """
    every_flow = _Columns(columns_of(flows))
    port_columns = _Columns(columns_of(ports))
    stats = dict(stats or {})
    # With a measurement window, the flows that arrived in it; else every flow.
    flow_columns = every_flow.rows(every_flow.bools("measured")) if every_flow.has("measured") else every_flow

    tcp = flow_columns.rows(~flow_columns.equals("transport", "udp"))
    is_short = tcp.floats("size_bytes") <= short_threshold_bytes
    done = tcp.rows(tcp.equals("state", "completed"))

    summary: dict[str, Scalar] = {}
    summary.update(_state_counts(every_flow, flow_columns))
    summary["short_threshold_bytes"] = int(short_threshold_bytes)
    summary.update(_class_counts(tcp, is_short))
    summary.update(_fct_stats(done, short_threshold_bytes))
    summary.update(_long_lived_stats(flow_columns, float(stats.get("sim_time_us", NAN))))
    summary.update(_deadline_stats(tcp))
    summary.update(_udp_stats(flow_columns))
    for column in _PORT_COUNTERS:
        summary[column] = port_columns.total(column)
    for column in _FLOW_COUNTERS:
        summary[column] = flow_columns.total(column)
    summary.update(_window_stats(stats))
    summary.update(_engine_stats(stats))
    summary["fct_policy"] = FCT_POLICY
    summary.update(_passthrough(stats, set(summary)))
    return summary


#: Below this share of the nominal load, a run's summary warns that its flows offered less than asked.
LOAD_SHORTFALL = 0.8


def load_shortfall_note(summary: Mapping[str, Any]) -> str | None:
    """A warning when the fabric carried well under the nominal load: in the measurement window when the run
    has one (``window_carried_load_ratio``, measured), else while flows arrived (``carried_load_ratio``, an
    estimate; see :func:`dclb.runner.load_ratios`); None when it did not."""
    windowed = summary.get("window_carried_load_ratio")
    if not _is_missing(windowed):
        if windowed >= LOAD_SHORTFALL:
            return None
        head = f"note: in its measurement window the fabric carried {windowed:.0%} of the nominal load"
        prefill, offered = summary.get("prefill_load_ratio"), summary.get("offered_load_ratio")
        if _is_missing(prefill):
            return (
                f"{head}. The warm-up (run.warmup_us) is too short for the largest flows to be in flight, or the "
                "window too short to average them"
            )
        # A stationary start: the warm-up is not the cause when the flows it pre-loaded were at load (in the
        # fluid model of the same traffic); what is left is the flows drawn, or the scheme's own packet-level
        # shortfall (collisions a max-min fluid run does not have).
        if prefill < LOAD_SHORTFALL:
            return f"{head}; the stationary start pre-loaded only {prefill:.0%} of it (in its fluid model)"
        if _is_missing(offered) or offered >= LOAD_SHORTFALL:
            drawn = "" if _is_missing(offered) else f" and the flow sizes drawn offered {offered:.0%}"
            return (
                f"{head}, though the stationary start pre-loaded {prefill:.0%} of it{drawn}: the fabric under this "
                "scheme carried less than the traffic asked (flows queued behind others, as on colliding paths), "
                "or the window is too short to average a heavy tail. Compare schemes on the same seeds"
            )
        return (
            f"{head}; the stationary start pre-loaded {prefill:.0%} of it, but the flow sizes drawn offered only "
            f"{offered:.0%}: few flows of a heavy-tailed workload miss its largest ones; use more flows"
        )
    carried, offered = summary.get("carried_load_ratio"), summary.get("offered_load_ratio")
    if carried is None or _is_missing(carried) or carried >= LOAD_SHORTFALL:
        return None
    cause = f"; the flow sizes drawn offered {offered:.0%} of it" if offered is not None and not _is_missing(offered) else ""
    return (
        f"note: while flows arrived, the fabric carried about {carried:.0%} of the nominal load{cause}. Few flows "
        "from a heavy-tailed workload never reach steady state: use more flows for load-dependent results"
    )


# --------------------------------------------------------------------------
# human-readable rendering
# --------------------------------------------------------------------------


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _fmt_count(value: Any) -> str:
    return f"{int(value):,}"


def _fmt_time_us(value: Any) -> str:
    value = float(value)
    if abs(value) < 1_000:
        return f"{value:,.1f} µs"
    if abs(value) < 1_000_000:
        return f"{value / 1_000:,.2f} ms"
    return f"{value / 1_000_000:,.3f} s"


def _fmt_seconds(value: Any) -> str:
    return _fmt_time_us(float(value) * 1_000_000)


def _fmt_gbps(value: Any) -> str:
    return f"{float(value):,.2f} Gbps"


def _fmt_times(value: Any) -> str:
    return f"{float(value):,.2f}×"


def _fmt_percent(value: Any) -> str:
    return f"{float(value) * 100:.2f} %"


def _fmt_rate(value: Any) -> str:
    return f"{float(value):,.0f} events/s"


def _fmt_bytes(value: Any) -> str:
    value = float(value)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:,.4g} {unit}"
    return f"{value:,.0f} B"


def _fmt_any(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return _fmt_count(value)
    return f"{value:,.6g}"


def _row_spec(summary: Mapping[str, Any]) -> list[tuple[str, str, Callable[[Any], str]]]:
    threshold = _fmt_bytes(summary.get("short_threshold_bytes", DEFAULT_SHORT_THRESHOLD_BYTES))
    return [
        ("flows_total", "Flows", _fmt_count),
        ("flows_measured", "Flows measured", _fmt_count),
        ("flows_completed", "Flows completed", _fmt_count),
        ("flows_cancelled", "Flows cancelled", _fmt_count),
        ("flows_unfinished", "Flows unfinished", _fmt_count),
        ("flows_udp", "UDP flows (not in FCT stats)", _fmt_count),
        ("short_threshold_bytes", "Short/long threshold", _fmt_bytes),
        ("short_flows", f"Short flows (≤ {threshold})", _fmt_count),
        ("short_completed", "Short flows completed", _fmt_count),
        ("short_unfinished", "Short flows unfinished", _fmt_count),
        ("short_cancelled", "Short flows cancelled", _fmt_count),
        ("long_flows", f"Long flows (> {threshold})", _fmt_count),
        ("long_completed", "Long flows completed", _fmt_count),
        ("long_unfinished", "Long flows unfinished", _fmt_count),
        ("long_cancelled", "Long flows cancelled", _fmt_count),
        ("short_afct_us", f"Short flows (≤ {threshold}) mean FCT", _fmt_time_us),
        ("short_p99_fct_us", f"Short flows (≤ {threshold}) p99 FCT", _fmt_time_us),
        ("long_afct_us", f"Long flows (> {threshold}) mean FCT", _fmt_time_us),
        ("long_goodput_gbps", "Long flows mean goodput", _fmt_gbps),
        ("fct_0_100k_avg_us", "FCT (0, 100 KB] mean", _fmt_time_us),
        ("fct_0_100k_p99_us", "FCT (0, 100 KB] p99", _fmt_time_us),
        ("fct_100k_1m_avg_us", "FCT (100 KB, 1 MB] mean", _fmt_time_us),
        ("fct_100k_1m_p99_us", "FCT (100 KB, 1 MB] p99", _fmt_time_us),
        ("fct_1m_inf_avg_us", "FCT > 1 MB mean", _fmt_time_us),
        ("fct_1m_inf_p99_us", "FCT > 1 MB p99", _fmt_time_us),
        ("overall_afct_us", "All flows mean FCT", _fmt_time_us),
        ("overall_p99_fct_us", "All flows p99 FCT", _fmt_time_us),
        ("mean_slowdown", "Mean slowdown", _fmt_times),
        ("p99_slowdown", "p99 slowdown", _fmt_times),
        ("long_lived_flows", "Long-lived flows", _fmt_count),
        ("long_lived_goodput_gbps", "Long-lived goodput per flow, mean", _fmt_gbps),
        ("long_lived_goodput_min_gbps", "Long-lived goodput per flow, min", _fmt_gbps),
        ("long_lived_goodput_max_gbps", "Long-lived goodput per flow, max", _fmt_gbps),
        ("long_lived_goodput_total_gbps", "Long-lived goodput, total", _fmt_gbps),
        ("deadline_flows", "Flows with a deadline", _fmt_count),
        ("deadline_misses", "Deadline misses", _fmt_count),
        ("deadline_miss_rate", "Deadline miss rate", _fmt_percent),
        ("window_carried_load_ratio", "Load carried in the window (of nominal)", _fmt_percent),
        ("window_drain_us", "Measured flows after the last arrival", _fmt_time_us),
        ("fabric_carried_load_ratio", "Load the fabric carried (of nominal)", _fmt_percent),
        ("util_leaf_to_host", "Utilisation, leaf to host links", _fmt_percent),
        ("util_leaf_to_spine", "Utilisation, leaf to spine links", _fmt_percent),
        ("prefill_flows", "Flows pre-loaded (stationary start)", _fmt_count),
        ("window_flows_censored", "Measured flows censored at the drain", _fmt_count),
        ("udp_loss_ratio", "UDP bytes lost (of sent)", _fmt_percent),
        ("udp_flows_with_loss", "UDP flows that lost data", _fmt_count),
        ("drops", "Packet drops", _fmt_count),
        ("ecn_marks", "ECN marks", _fmt_count),
        ("retransmissions", "Retransmissions", _fmt_count),
        ("spurious_retransmissions", "Spurious retransmissions", _fmt_count),
        ("timeouts", "Retransmission timeouts", _fmt_count),
        ("out_of_order", "Out-of-order arrivals", _fmt_count),
        ("sim_time_us", "Simulated time", _fmt_time_us),
        ("wall_s", "Wall-clock time", _fmt_seconds),
        ("events", "Events", _fmt_count),
        ("events_per_s", "Event rate", _fmt_rate),
        ("fct_policy", "FCT policy", str),
    ]


def summary_rows(summary: Mapping[str, Any], keys: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(label, formatted value) pairs for display, in reading order.

    Known keys come first with units; keys this module does not know (for
    example engine counters passed through from ``stats``) follow, labelled
    by their own name.  Missing values are shown as ``n/a``.  With ``keys``,
    only those keys are shown, in that order.
    """
    rows: list[tuple[str, str]] = []
    shown: set[str] = set()
    spec = {key: (label, fmt) for key, label, fmt in _row_spec(summary)}
    if keys is not None:
        for key in keys:
            if key in summary:
                label, fmt = spec.get(key, (key, _fmt_any))
                rows.append((label, _render(summary[key], fmt)))
        return rows
    for key, (label, fmt) in spec.items():
        if key in summary:
            rows.append((label, _render(summary[key], fmt)))
            shown.add(key)
    for key, value in summary.items():
        if key not in shown:
            rows.append((key, _render(value, _fmt_any)))
    return rows


def _render(value: Any, fmt: Callable[[Any], str]) -> str:
    return "n/a" if _is_missing(value) else fmt(value)

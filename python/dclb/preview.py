"""What a run would be, before it runs: the sizes ``dclb run --dry-run`` and ``dclb sweep --dry-run`` print, and
the three rules about them that every run must pass before it starts (:func:`check_run_size`).

Nothing is simulated and nothing large is allocated; everything comes from the validated scenario and its
resolution (:func:`dclb.scenario.resolve`), with the engine's own numbers for mean flow sizes, offered loads and
capacities (``describe_sources``).

* **Fabric.** ``leaves x hosts_per_leaf`` hosts, ``leaves + spines`` switches; ports as the engine numbers them:
  one NIC per host, on each leaf one port per host and one per uplink (``spines x links_per_pair``), on each
  spine one per leaf uplink.
* **Flows.** Exact for every pattern but a poisson source bounded by ``duration_us``, whose count is the
  expected number of arrivals, ``rate x duration`` with ``rate = offered load / (8 x mean size)`` (capped by
  ``flows`` when both are given: arrivals stop at whichever comes first). With a horizon, the flows that
  start before it are counted too (a flow that would start later is never started).
* **Simulated time.** With a horizon, the run stops there at the latest. Without one it ends when the last flow
  ends, estimated as the latest of: the last arrival (poisson: ``start + flows / rate``; group: ``start +
  spread``; incast: the last round; list: the last start) plus the mean flow alone at its rate; the first
  arrival plus the largest flow alone; and the first arrival plus the source's bytes over its senders' host
  links (and over their leaves' uplinks, for the share of pairs on different leaves). Each is a lower bound
  (queueing makes real runs longer); it is printed as an estimate.
* **Events.** A rough estimate of every event source the front can count: the data packets to move (about 16
  events per data packet sent between leaves: a packet and its ACK each cross four links, two events per
  link; measured 15-16 on web search, data mining, web server, RPS and long-lived runs; about half as many
  within a leaf), the probes of the schemes that probe paths (Hermes, MDTLB: every ``lb.probe_us`` each host's
  timer fires, and each sending host probes three paths to each other leaf, a probe and its reply costing about
  as much as a packet and its ACK), the sampler's ticks and LBT's periodic threshold updates. Retransmissions,
  drops and the other schemes' internal timers come on top. Flows of unbounded size (long-lived) move at most
  ``min(their host links, the fabric's uplinks)`` until the horizon.

The rules (:func:`check_run_size`, run by :func:`dclb.scenario.resolve` after the engine's check, so ``dclb
run``, its dry run, every sweep point and the Python API all apply them):

* **The clock's range.** The engine counts time in picoseconds in 64 bits (:data:`dclb.scenario.MAX_US`, 213
  days). A time the run computes from the scenario -- a source's end (``start_us + duration_us``), its last
  arrival or round, a flow's deadline -- must fit it, and the estimated end of a run without a horizon must
  stay within :data:`CLOCK_HEADROOM` of it (the estimate is a lower bound; retransmission timeouts and queueing
  come on top). Beyond, times would wrap or saturate into a result that looks valid.
* **Work to do.** Every source must be expected to start at least one flow before the run ends (an arrival
  window too short for its rate, a start at or after the horizon): a source that makes nothing would be input
  silently ignored, and a run with nothing to do reports nothing. (The run itself also refuses to store a
  source that made no flow, :func:`dclb.runner.simulate`, since a poisson count is random.)
* **Size.** A run estimated at more than :func:`event_limit` events (default :data:`DEFAULT_EVENT_LIMIT`) is
  refused: it would take hours and may be a typo (``lb.probe_us = 1e-6``). ``DCLB_EVENT_LIMIT`` raises the
  limit (a count such as ``1e12``) or turns the rule off (``none``) for a run that is meant to be that long.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from . import _core
from .errors import ScenarioError, UserError

if TYPE_CHECKING:
    from .scenario import Resolution, Scenario

#: Events the engine handles per data packet sent between leaves (see the module documentation).
EVENTS_PER_PACKET = 16
#: Paths a probing host probes to each destination leaf every probe interval (two random ones and the best).
PROBES_PER_LEAF = 3
#: The schemes that probe paths, by their probe interval parameter.
PROBING_SCHEMES = {"hermes": "probe_us", "mdtlb": "probe_us"}
#: The engine's clock range in microseconds (picoseconds in 64 bits).
CLOCK_RANGE_US = (2**64 - 1) / 1e6
#: The estimated end of a run must stay within this fraction of the clock's range.
CLOCK_HEADROOM = 0.1
#: Events above which a run is refused unless ``DCLB_EVENT_LIMIT`` says otherwise (hours of engine time).
DEFAULT_EVENT_LIMIT = 1e11
EVENT_LIMIT_ENV = "DCLB_EVENT_LIMIT"


@dataclass(frozen=True)
class SourceEstimate:
    """What one source will do, as far as it can be known before the run."""

    field: str  # the user's name for the source ("traffic", "traffic.sources[1]")
    flows: float  # flows it makes (expected, for a poisson source bounded by time)
    started: float  # of those, the flows that start before the run's horizon (all without one)
    first_us: float  # when its first flow starts (expected)
    last_us: float  # when its last flow starts (expected)
    end_us: float  # when its last flow ends at the earliest (a lower bound; inf for unbounded flows)
    packets: float  # data packets it sends (long-lived: until the horizon)
    #: (field, reason) of the clock rule this source breaks, if any.
    clock_problem: Optional[tuple[str, str]] = None
    #: (field, reason) of the work rule this source breaks, if any.
    work_problem: Optional[tuple[str, str]] = None


@dataclass(frozen=True)
class Preview:
    hosts: int
    leaves: int
    spines: int
    ports: int
    host_ports: int
    switch_ports: int
    flows: float
    flows_exact: bool
    #: Why the count is an expectation (empty when it is exact).
    flows_note: str
    #: At most the horizon when ``horizon`` is true; else an estimate of when the last flow ends.
    sim_time_us: float
    horizon: bool
    #: Rough estimate of the events the engine will process.
    events: float
    #: The estimate by source: data packets, probes, timers (sampler, LBT).
    events_by_kind: dict[str, float] = field(default_factory=dict)
    sources: list[SourceEstimate] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The facts as plain data (``--dry-run --json``), with each source's flows, those expected to start
        before the horizon and its earliest end (None when its flows never end)."""
        out = asdict(self)
        out["sources"] = [
            {"field": e.field, "flows": e.flows, "started": e.started, "end_us": e.end_us if math.isfinite(e.end_us) else None}
            for e in self.sources
        ]
        return out

    def lines(self) -> list[str]:
        """What ``--dry-run`` prints, one fact per line."""
        flows = f"{self.flows:,.0f}" if self.flows_exact else f"about {self.flows:,.0f} expected ({self.flows_note})"
        if self.horizon:
            time = f"at most {_time(self.sim_time_us)} (run.horizon_us)"
        else:
            time = f"about {_time(self.sim_time_us)} (estimate: when the last flow could end at the earliest)"
        parts = [f"{kind} {_count(n)}" for kind, n in self.events_by_kind.items() if n >= 1 and kind != "packets"]
        detail = f"; of which {', '.join(parts)}" if parts else ""
        return [
            f"fabric: {self.hosts:,} hosts, {self.leaves + self.spines:,} switches "
            f"({self.leaves:,} leaves, {self.spines:,} spines), "
            f"{self.ports:,} ports ({self.host_ports:,} host NICs, {self.switch_ports:,} switch ports)",
            f"flows: {flows}",
            f"simulated time: {time}",
            f"events: about {_count(self.events)} (rough estimate: ~{EVENTS_PER_PACKET} per data packet between leaves{detail})",
        ]


def _time(us: float) -> str:
    if not math.isfinite(us):
        return "unbounded"
    if us < 1_000:
        return f"{us:,.1f} us"
    if us < 1_000_000:
        return f"{us / 1_000:,.2f} ms"
    return f"{us / 1_000_000:,.3f} s"


def _count(n: float) -> str:
    if n >= 1e13:
        return f"{n:.2g}"
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,.0f}"


def _num(value: float) -> str:
    """A number for a message: ``1e-06``, ``0.4``, ``2,000``."""
    if value != 0 and (abs(value) >= 1e7 or abs(value) < 1e-3):
        return f"{value:.3g}"
    return f"{value:,.6g}"


def preview(sc: "Scenario") -> Preview:
    """The sizes of ``sc``'s run (see the module documentation)."""
    from .scenario import resolve

    return estimate(sc, resolve(sc))


def _crossing_share(senders: list[int], receivers: list[int], hosts_per_leaf: int, inter_leaf_only: bool) -> float:
    """The share of a source's random (sender, receiver) pairs whose hosts are on different leaves."""
    if inter_leaf_only:
        return 1.0
    per_leaf_s: dict[int, int] = {}
    per_leaf_r: dict[int, int] = {}
    for h in senders:
        per_leaf_s[h // hosts_per_leaf] = per_leaf_s.get(h // hosts_per_leaf, 0) + 1
    for h in receivers:
        per_leaf_r[h // hosts_per_leaf] = per_leaf_r.get(h // hosts_per_leaf, 0) + 1
    both = len(set(senders) & set(receivers))
    pairs = len(senders) * len(receivers) - both  # a host never sends to itself
    same_leaf = sum(n * per_leaf_r.get(leaf, 0) for leaf, n in per_leaf_s.items()) - both
    return 0.0 if pairs <= 0 else max(0.0, 1.0 - same_leaf / pairs)


def _largest_bytes(src: Any, fact: dict[str, Any]) -> float:
    s = src.source
    if src.workloads:
        return max(c.points[-1][0] for _, _, c in src.workloads)
    if s.size_bytes is not None:
        return float(s.size_bytes)
    if src.listed:
        return float(max(f["size_bytes"] for f in src.listed))
    return float(fact.get("mean_bytes") or 0.0)


@dataclass
class _Fabric:
    """The few facts of the fabric that the estimate of every source needs."""

    horizon: Optional[float]
    host_bps: float
    #: The fastest a flow between leaves can go on its uplink: no link is faster than the fastest rate given.
    fastest_uplink_bps: float
    #: The most the fabric's uplinks can carry at once.
    uplinks_bps: float
    hosts_per_leaf: int
    mss_bytes: int
    wire_bytes: int


def estimate(sc: "Scenario", resolution: "Resolution") -> Preview:
    """The sizes of ``sc``'s run from its resolution (see the module documentation)."""
    t, tp = sc.topology, sc.transport
    uplinks = t.spines * t.links_per_pair
    hosts = t.leaves * t.hosts_per_leaf
    host_ports = hosts
    switch_ports = t.leaves * (t.hosts_per_leaf + uplinks) + t.spines * t.leaves * t.links_per_pair
    fabric = _Fabric(
        horizon=sc.run.horizon_us,
        host_bps=t.host_rate_gbps * 1e9,
        fastest_uplink_bps=max([t.fabric_rate_gbps, *(o.rate_gbps for o in t.links if o.rate_gbps is not None and not o.failed)]) * 1e9,
        uplinks_bps=t.leaves * uplinks * t.fabric_rate_gbps * 1e9,
        hosts_per_leaf=t.hosts_per_leaf,
        mss_bytes=tp.mss_bytes,
        wire_bytes=tp.mss_bytes + tp.header_bytes,
    )
    facts = _core.describe_sources(json.dumps(resolution.config))
    sources = [_source_estimate(src, fact, fabric) for src, fact in zip(resolution.sources, facts)]
    notes = [_poisson_note(src, fact) for src, fact in zip(resolution.sources, facts) if src.source.pattern == "poisson" and src.source.duration_us is not None]
    horizon = sc.run.horizon_us
    sim_time = horizon if horizon is not None else max((e.end_us for e in sources), default=0.0)
    kinds = {"packets": float(math.ceil(sum(e.packets for e in sources) * EVENTS_PER_PACKET))}
    kinds.update(_timer_events(sc, resolution, sim_time, t.leaves, t.spines, hosts))
    return Preview(
        hosts=hosts, leaves=t.leaves, spines=t.spines, ports=host_ports + switch_ports, host_ports=host_ports,
        switch_ports=switch_ports, flows=sum(e.flows for e in sources), flows_exact=not notes, flows_note="; ".join(notes),
        sim_time_us=float(sim_time), horizon=horizon is not None, events=float(sum(kinds.values())),
        events_by_kind=kinds, sources=sources,
    )


def _poisson_note(src: Any, fact: dict[str, Any]) -> str:
    """Why a poisson source bounded by time has an expected flow count rather than an exact one."""
    s = src.source
    note = f"{src.field}: poisson arrivals over duration_us = {s.duration_us:g}"
    if s.flows is not None:
        note += f", {'before' if _arrivals_in(s.duration_us, _rate(fact)) < s.flows else 'capped by'} flows = {s.flows:,}"
    return note


def _rate(fact: dict[str, Any]) -> float:
    """A poisson source's arrivals per second (0 for any other): its offered load over 8 x the mean size."""
    mean, offered = float(fact["mean_bytes"]), float(fact["offered_bps"])
    return offered / (8 * mean) if mean > 0 and offered > 0 else 0.0


def _arrivals_in(window_us: float, rate: float) -> float:
    """The expected arrivals within ``window_us`` at ``rate`` per second."""
    return rate * window_us / 1e6


def _source_estimate(src: Any, fact: dict[str, Any], fabric: _Fabric) -> SourceEstimate:
    """What one source will do: its flows (and those before the horizon), when they start and end at the
    earliest, its data packets, and which rule of :func:`check_run_size` it breaks, if any."""
    s, f = src.source, src.field
    mean, rate = float(fact["mean_bytes"]), _rate(fact)
    n, first, last, clock = _arrivals(src, rate)
    if s.pattern == "list":
        mean = sum(fl["size_bytes"] for fl in src.listed) / n if n else 0.0
    deadline = {"fixed": s.deadline.us, "uniform": s.deadline.hi_us}.get(s.deadline.kind)
    if clock is None and deadline is not None and math.isfinite(last) and last + deadline > CLOCK_RANGE_US:
        name = "us" if s.deadline.kind == "fixed" else "hi_us"
        clock = (f"{f}.deadline.{name}", f"the last flow's deadline falls at about {_num(last + deadline)} us")
    started = _started_before(src, n, rate, fabric.horizon)

    # When the last flow ends at the earliest, and the data packets to move.
    sending_bps = min(fabric.host_bps, s.udp_rate_gbps * 1e9) if s.transport == "udp" else fabric.host_bps
    crossing = _crossing_share(src.senders, src.receivers, fabric.hosts_per_leaf, s.inter_leaf_only) if s.pattern != "list" else 1.0
    alone_bps = min(sending_bps, fabric.fastest_uplink_bps) if crossing >= 1.0 else sending_bps
    if s.pattern == "long_lived" and s.size_bytes is None:  # unbounded: until the horizon
        end = math.inf
        active_us = max(0.0, (fabric.horizon or 0.0) - s.start_us)
        packets = min(n * sending_bps, fabric.uplinks_bps) * active_us / 1e6 / 8 / fabric.wire_bytes
        return SourceEstimate(f, n, started, first, last, end, packets, clock, _work_problem(src, started, rate, fabric.horizon))
    total_bits = n * mean * 8
    access = float(fact.get("access_capacity_bps") or 0.0)
    if s.pattern == "list":
        access = len({fl["src"] for fl in src.listed}) * sending_bps
    elif s.transport == "udp":
        access = min(access, len(src.senders) * sending_bps)
    uplinks = float(fact.get("fabric_capacity_bps") or 0.0)
    work_us = total_bits / access * 1e6 if access > 0 else 0.0
    if crossing > 0 and uplinks > 0:
        work_us = max(work_us, total_bits * crossing / uplinks * 1e6)
    end = max(
        last + mean * 8 / alone_bps * 1e6,
        first + _largest_bytes(src, fact) * 8 / alone_bps * 1e6 if n > 0 else 0.0,
        (first if math.isfinite(first) else s.start_us) + work_us,
    )
    packets = n * (mean / fabric.mss_bytes + 0.5)  # a flow's last packet is partly full
    if clock is None and fabric.horizon is None and end > CLOCK_HEADROOM * CLOCK_RANGE_US:
        # Name what takes the time: the arrivals, or the sending at a rate too low.
        if last - s.start_us > (end - s.start_us) / 2:
            name = {"poisson": f"{f}.load", "group": f"{f}.spread_us", "incast": f"{f}.period_us"}.get(s.pattern, f"{f}.start_us")
        elif s.transport == "udp" and s.udp_rate_gbps * 1e9 < fabric.host_bps:
            name = f"{f}.udp_rate_gbps"
        elif alone_bps < sending_bps:
            name = "topology.fabric_rate_gbps"
        else:
            name = "topology.host_rate_gbps"
        clock = (name, f"the flows of {f} would end at about {_num(end)} us at the earliest")
    return SourceEstimate(f, n, started, first, last, end, packets, clock, _work_problem(src, started, rate, fabric.horizon))


def _arrivals(src: Any, rate: float) -> tuple[float, float, float, Optional[tuple[str, str]]]:
    """(flows, first start, last start, clock problem) of a source, the starts expected for a poisson one."""
    s, f = src.source, src.field
    clock = None
    if s.pattern == "poisson":
        first = s.start_us + (1e6 / rate if rate > 0 else math.inf)
        if s.duration_us is not None:
            n = _arrivals_in(s.duration_us, rate)
            if s.flows is not None:
                n = min(n, float(s.flows))
            last = s.start_us + min(s.duration_us, n / rate * 1e6 if rate > 0 else math.inf)
            if s.start_us + s.duration_us > CLOCK_RANGE_US:
                clock = (f"{f}.duration_us", f"start_us + duration_us = {_num(s.start_us + s.duration_us)} us")
        else:
            n = float(s.flows or 0)
            last = s.start_us + (n / rate * 1e6 if rate > 0 else math.inf)
            if last > CLOCK_RANGE_US:
                clock = (f"{f}.load", f"{_num(n)} flows arriving at {_num(rate)} per second from {_num(s.start_us)} us: the last at about {_num(last)} us")
        return n, first, last, clock
    if s.pattern == "group":
        last = s.start_us + s.spread_us
        if last > CLOCK_RANGE_US:
            clock = (f"{f}.spread_us", f"start_us + spread_us = {_num(last)} us")
        return float(s.flows or 0), s.start_us, last, clock
    if s.pattern == "incast":
        receiver = src.receivers[0]
        last = s.start_us + (s.rounds - 1) * s.period_us
        if last > CLOCK_RANGE_US:
            clock = (f"{f}.period_us", f"the last round starts at start_us + (rounds - 1) x period_us = {_num(last)} us")
        return float(s.rounds * sum(1 for h in src.senders if h != receiver)), s.start_us, last, clock
    if s.pattern == "long_lived":
        return float(len(src.senders)), s.start_us, s.start_us, None
    starts = [fl["start_us"] for fl in src.listed]
    for i, fl in enumerate(src.listed):
        if fl.get("deadline_us") is not None and fl["start_us"] + fl["deadline_us"] > CLOCK_RANGE_US:
            clock = (src.item_origin("list", i), f"start_us + deadline_us = {_num(fl['start_us'] + fl['deadline_us'])} us")
            break
    return float(len(starts)), min(starts, default=0.0), max(starts, default=0.0), clock


def _started_before(src: Any, n: float, rate: float, horizon: Optional[float]) -> float:
    """Of a source's ``n`` flows, those expected to start before the horizon (all without one)."""
    s = src.source
    if horizon is None or n <= 0:
        return n
    if s.pattern == "poisson":
        window = max(0.0, horizon - s.start_us)
        if s.duration_us is not None:
            window = min(window, s.duration_us)
        return min(n, _arrivals_in(window, rate))
    if s.pattern == "list":
        return float(sum(1 for fl in src.listed if fl["start_us"] < horizon))
    if s.start_us >= horizon:
        return 0.0
    if s.pattern == "group" and s.spread_us > 0:
        return n * min(1.0, (horizon - s.start_us) / s.spread_us)
    if s.pattern == "incast" and s.period_us > 0:
        return n * min(s.rounds, math.ceil((horizon - s.start_us) / s.period_us)) / s.rounds
    return n


def _work_problem(src: Any, started: float, rate: float, horizon: Optional[float]) -> Optional[tuple[str, str]]:
    """Why source ``src`` would start no flow (field, reason), or None: it must be expected to start one."""
    s, f = src.source, src.field
    # A poisson source must be expected to start one flow; the other patterns start theirs at set times (a
    # group's spread drawn at random), so only one with no flow before the horizon at all is refused here.
    if started >= 1.0 or (started > 0 and s.pattern != "poisson"):
        return None
    if s.pattern == "poisson":
        window = s.duration_us if s.duration_us is not None else math.inf
        cut = horizon is not None and horizon - s.start_us < window
        if cut and horizon <= s.start_us:
            return (f"{f}.start_us", f"{_num(s.start_us)} us is not before run.horizon_us ({_num(horizon)} us), so the source would start no flow")
        if cut:
            return (
                "run.horizon_us",
                f"{f}'s flows arrive at {_num(rate)} per second from start_us = {_num(s.start_us)} us, so about {started:.2g} would start before the horizon at {_num(horizon)} us; "
                "a source must be expected to start at least one flow (a later horizon, a higher load or an earlier start)",
            )
        return (
            f"{f}.duration_us",
            f"{_num(s.duration_us)} us of arrivals at {_num(rate)} flows per second makes about {started:.2g} flows; "
            "a source must be expected to make at least one (a longer duration_us or a higher load)",
        )
    if s.pattern == "list":
        return (f"{f}.{'flows_csv' if s.flows_csv else 'flow_list'}", f"every flow starts at or after run.horizon_us ({_num(horizon or 0)} us), so none would start")
    return (f"{f}.start_us", f"{_num(s.start_us)} us is not before run.horizon_us ({_num(horizon or 0)} us), so the source would start no flow")


def _param(sc: "Scenario", name: str) -> Any:
    """Scheme parameter ``name`` as given, else its registry default (None if the scheme has no such one)."""
    given = sc.lb.params()
    if name in given:
        return given[name]
    scheme = next((s for s in _core.schemes() if s["name"] == sc.lb.scheme), None)
    if scheme is None:
        return None
    return next((p["default"] for p in scheme["params"] if p["name"] == name), None)


def _timer_events(sc: "Scenario", resolution: "Resolution", sim_time_us: float, leaves: int, spines: int, hosts: int) -> dict[str, float]:
    """Events of the periodic sources the front knows: probes (Hermes, MDTLB), LBT's updates, the sampler."""
    out: dict[str, float] = {}
    if not math.isfinite(sim_time_us) or sim_time_us <= 0:
        return out
    probe_param = PROBING_SCHEMES.get(sc.lb.scheme)
    if probe_param is not None:
        interval = _param(sc, probe_param)
        if isinstance(interval, (int, float)) and interval > 0:
            rounds = sim_time_us / float(interval)
            senders = {h for src in resolution.sources for h in src.senders} if _param(sc, "probe_scope") != "all" else set(range(hosts))
            per_round = hosts + len(senders) * max(leaves - 1, 0) * PROBES_PER_LEAF * EVENTS_PER_PACKET
            out["probes"] = float(math.ceil(rounds * per_round))
    if sc.lb.scheme == "lbt":
        period = _param(sc, "period_us")
        if isinstance(period, (int, float)) and period > 0:
            out["timers"] = float(math.ceil(sim_time_us / float(period) * (leaves + spines)))
    if sc.run.sampler is not None:
        out["sampler"] = float(math.ceil(sim_time_us / sc.run.sampler.interval_us))
    return out


def event_limit() -> Optional[float]:
    """The most events a run may be estimated at: ``DCLB_EVENT_LIMIT`` (a count, or ``none``), else
    :data:`DEFAULT_EVENT_LIMIT`; None for no limit."""
    text = os.environ.get(EVENT_LIMIT_ENV)
    if text is None:
        return DEFAULT_EVENT_LIMIT
    if text.strip().lower() in ("none", "off"):
        return None
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 1):
        raise UserError(f"{EVENT_LIMIT_ENV}: cannot read {text!r}; give a count of events such as 1e12, or none to turn the limit off")
    return value


def check_run_size(sc: "Scenario", resolution: "Resolution") -> Preview:
    """Refuses a run that breaks the clock, work or size rule (see the module documentation) with one line
    naming the field; returns the estimate."""
    est = estimate(sc, resolution)
    for e in est.sources:
        if e.clock_problem is not None:
            name, what = e.clock_problem
            raise ScenarioError(
                f"{name}: {what}, beyond what the engine's clock can hold ({_num(CLOCK_RANGE_US)} us, picoseconds in 64 bits"
                + (f"; a run's estimated end must stay within {CLOCK_HEADROOM:g} of it, as the estimate leaves out queueing and timeouts)" if "at the earliest" in what else ")")
                + "; use values that keep the run's times within it"
            )
    for e in est.sources:
        if e.work_problem is not None:
            name, what = e.work_problem
            raise ScenarioError(f"{name}: {what}")
    limit = event_limit()
    if limit is not None and est.events > limit:
        kinds = est.events_by_kind
        main = max(kinds, key=lambda k: kinds[k])
        name = {
            "probes": f"lb.{PROBING_SCHEMES.get(sc.lb.scheme, 'probe_us')}",
            "timers": "lb.period_us",
            "sampler": "run.sampler.interval_us",
        }.get(main, "run.horizon_us" if est.horizon and kinds.get("packets", 0) and any(math.isinf(e.end_us) for e in est.sources) else "traffic")
        parts = ", ".join(f"{kind} {_count(n)}" for kind, n in kinds.items() if n >= 1)
        raise ScenarioError(
            f"{name}: the run would take about {_count(est.events)} events ({parts}; rough estimate), more than the limit of "
            f"{_count(limit)} (hours of engine time); set {EVENT_LIMIT_ENV}=none (or a larger count) to run it anyway"
        )
    return est

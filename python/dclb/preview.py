"""What a run would be, before it runs: the sizes ``dclb run --dry-run`` and ``dclb sweep --dry-run`` print, and
the event limit the run is held to (:func:`event_limit`).

Nothing is simulated and nothing large is allocated. The numbers are the engine's own estimate of the run
(``_core.run_size``, ``crates/dclb-core/src/runsize.rs``), which its check also refuses from, so what the dry run
prints is what decided that the run may start:

* **Fabric.** ``leaves x hosts_per_leaf`` hosts, ``leaves + spines`` switches; ports as the engine numbers them:
  one NIC per host, on each leaf one port per host and one per uplink (``spines x links_per_pair``), on each
  spine one per leaf uplink.
* **Flows.** Exact for every pattern but a poisson source bounded by ``duration_us``, whose count is the
  expected number of arrivals (capped by ``flows`` when both are given). With a horizon, the flows that start
  before it are counted too.
* **Simulated time.** With a horizon, the run stops there at the latest. Without one, an estimate of when the
  last flow could end at the earliest (its arrival, a base round trip and the flow alone at its rate; each
  source's bytes over its senders' links), a lower bound.
* **Events.** A rough estimate of every event source: about 16 per data packet sent between leaves, every
  balancer timer (each switch's and host's period, as the scheme's balancers are built for this scenario:
  DAR's, TAM's and TR's sweeps, CONGA's DRE, LBT's periods, Hermes' and MDTLB's probe rounds), the probes of
  the schemes that probe paths, and the sampler's ticks. Retransmissions and drops come on top.

The rules about these sizes are the engine's (``Config::check``, applied through ``_core.check_config`` for
every run, dry run and sweep point, and again when a run starts): every time the run computes within the
engine's clock (the estimated end without a horizon within a tenth of it), every source expected to start a
flow, and the estimated events within :func:`event_limit` (default :data:`DEFAULT_EVENT_LIMIT`).
``DCLB_EVENT_LIMIT`` raises the limit (a count such as ``1e12``) or turns it off (``none``) for a run that is
meant to be that long; the running simulation is held to it too.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from . import _core
from .errors import UserError

if TYPE_CHECKING:
    from .scenario import Resolution, Scenario

#: Events the engine counts per data packet sent between leaves (its ``EVENTS_PER_PACKET``).
EVENTS_PER_PACKET = 16
#: The engine's clock range in microseconds (picoseconds in 64 bits).
CLOCK_RANGE_US = 2**64 / 1e6
#: The estimated end of a run without a horizon must stay within this fraction of the clock's range.
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
    #: The estimate by source: data packets, balancer timers, probes, sampler ticks.
    events_by_kind: dict[str, float] = field(default_factory=dict)
    sources: list[SourceEstimate] = field(default_factory=list, repr=False)
    #: Of ``flows``, those measured (all without a measurement window); the warm-up (µs) with a window; the
    #: flows a stationary start pre-loads (expected; not in ``flows``).
    measured_flows: float = 0.0
    warmup_us: Optional[float] = None
    preloaded_flows: float = 0.0

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
        if self.warmup_us is not None:
            # A window: say which flows are measured and which only warm the fabric up or keep it loaded.
            flows += (
                f" ({self.measured_flows:,.0f} measured in the window, about {self.flows - self.measured_flows:,.0f} more in "
                f"the {_time(self.warmup_us)} warm-up and the cool-down)"
            )
        if self.preloaded_flows > 0:
            flows += f", and about {self.preloaded_flows:,.0f} pre-loaded by the stationary start"
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


def preview(sc: "Scenario") -> Preview:
    """The sizes of ``sc``'s run (see the module documentation)."""
    from .scenario import resolve

    return estimate(sc, resolve(sc))


def estimate(sc: "Scenario", resolution: "Resolution") -> Preview:
    """The sizes of ``sc``'s run from its resolution: the engine's estimate (see the module documentation)."""
    t = sc.topology
    uplinks = t.spines * t.links_per_pair
    hosts = t.leaves * t.hosts_per_leaf
    switch_ports = t.leaves * (t.hosts_per_leaf + uplinks) + t.spines * t.leaves * t.links_per_pair
    size = json.loads(_core.run_size(json.dumps(resolution.config)))
    infinite = math.inf
    sources = [
        SourceEstimate(
            field=src.field, flows=e["flows"], started=e["started"],
            first_us=e["first_us"] if e["first_us"] is not None else infinite,
            last_us=e["last_us"] if e["last_us"] is not None else infinite,
            end_us=e["end_us"] if e["end_us"] is not None else infinite, packets=e["packets"],
        )
        for src, e in zip(resolution.sources, size["sources"])
    ]
    notes = [_poisson_note(src, e) for src, e in zip(resolution.sources, sources) if src.source.pattern == "poisson" and src.source.duration_us is not None]
    kinds: dict[str, float] = {}
    for part in size["events"]:
        kinds[part["kind"]] = kinds.get(part["kind"], 0.0) + float(part["events"])
    sim_time = size["sim_time_us"] if size["sim_time_us"] is not None else infinite
    return Preview(
        hosts=hosts, leaves=t.leaves, spines=t.spines, ports=hosts + switch_ports, host_ports=hosts,
        switch_ports=switch_ports, flows=sum(e.flows for e in sources), flows_exact=not notes, flows_note="; ".join(notes),
        sim_time_us=float(sim_time), horizon=bool(size["horizon"]), events=float(sum(kinds.values())),
        events_by_kind=kinds, sources=sources, measured_flows=float(size.get("measured_flows", 0.0)),
        warmup_us=size.get("warmup_us"), preloaded_flows=float(size.get("preloaded_flows", 0.0)),
    )


def _poisson_note(src: Any, e: SourceEstimate) -> str:
    """Why a poisson source bounded by time has an expected flow count rather than an exact one."""
    s = src.source
    note = f"{src.field}: poisson arrivals over duration_us = {s.duration_us:g}"
    if s.flows is not None:
        note += f", {'capped by' if e.flows >= s.flows else 'before'} flows = {s.flows:,}"
    return note


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


def engine_event_limit() -> Optional[tuple[float, str]]:
    """The event limit as the engine takes it (``check_config``, ``Simulation``): the count, and where it
    comes from with how to insist, for the refusal; None for no limit."""
    limit = event_limit()
    if limit is None:
        return None
    given = os.environ.get(EVENT_LIMIT_ENV)
    origin = f"{EVENT_LIMIT_ENV}={given.strip()}" if given is not None else "the default limit, hours of engine time"
    return limit, f"{origin}; set {EVENT_LIMIT_ENV}=none (or a larger count) to run it anyway"

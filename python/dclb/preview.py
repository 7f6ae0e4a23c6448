"""What a run would be, before it runs: the sizes ``dclb run --dry-run`` and ``dclb sweep --dry-run`` print.

Nothing is simulated and nothing large is allocated; everything comes from the validated scenario and its
resolution (:func:`dclb.scenario.resolve`), with the engine's own numbers for mean flow sizes and offered loads
(``describe_sources``).

* **Fabric.** ``leaves x hosts_per_leaf`` hosts, ``leaves + spines`` switches; ports as the engine numbers them:
  one NIC per host, on each leaf one port per host and one per uplink (``spines x links_per_pair``), on each
  spine one per leaf uplink.
* **Flows.** Exact for every pattern but a poisson source bounded by ``duration_us``, whose count is the
  expected number of arrivals, ``rate x duration`` with ``rate = offered load / (8 x mean size)`` (capped by
  ``flows`` when both are given: arrivals stop at whichever comes first).
* **Simulated time.** With a horizon, the run stops there at the latest. Without one it ends when the last flow
  ends: estimated as the last arrival (poisson: ``start + flows / rate``; group: ``start + spread``; incast:
  the last round; list: the last start) plus the time the mean flow would take alone at the host rate. Queueing
  makes real runs longer; it is an estimate and printed as one.
* **Events.** A rough estimate from the data packets to move: the engine handles about 16 events per data
  packet sent between leaves (a packet and its ACK each cross four links, two events per link; measured 15-16
  on web search, data mining, web server, RPS and long-lived runs), about half as many within a leaf.
  Retransmissions, probes and drops come on top. Flows of unbounded size (long-lived) move at most
  ``min(their host links, the fabric's uplinks)`` until the horizon.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from . import _core
from .scenario import Scenario, resolve

#: Events the engine handles per data packet sent between leaves (see the module documentation).
EVENTS_PER_PACKET = 16


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

    def as_dict(self) -> dict[str, float | int | bool]:
        return asdict(self)

    def lines(self) -> list[str]:
        """What ``--dry-run`` prints, one fact per line."""
        flows = f"{self.flows:,.0f}" if self.flows_exact else f"about {self.flows:,.0f} expected ({self.flows_note})"
        if self.horizon:
            time = f"at most {_time(self.sim_time_us)} (run.horizon_us)"
        else:
            time = f"about {_time(self.sim_time_us)} (estimate: the last arrival plus the mean flow alone at the host rate)"
        return [
            f"fabric: {self.hosts:,} hosts, {self.leaves + self.spines:,} switches "
            f"({self.leaves:,} leaves, {self.spines:,} spines), "
            f"{self.ports:,} ports ({self.host_ports:,} host NICs, {self.switch_ports:,} switch ports)",
            f"flows: {flows}",
            f"simulated time: {time}",
            f"events: about {_count(self.events)} (rough estimate: ~{EVENTS_PER_PACKET} per data packet between leaves)",
        ]


def _time(us: float) -> str:
    if us < 1_000:
        return f"{us:,.1f} us"
    if us < 1_000_000:
        return f"{us / 1_000:,.2f} ms"
    return f"{us / 1_000_000:,.3f} s"


def _count(n: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,.0f}"


def preview(sc: Scenario) -> Preview:
    """The sizes of ``sc``'s run (see the module documentation)."""
    resolution = resolve(sc)
    t, tp = sc.topology, sc.transport
    uplinks = t.spines * t.links_per_pair
    hosts = t.leaves * t.hosts_per_leaf
    host_ports = hosts
    switch_ports = t.leaves * (t.hosts_per_leaf + uplinks) + t.spines * t.leaves * t.links_per_pair
    facts = _core.describe_sources(json.dumps(resolution.config))
    horizon = sc.run.horizon_us
    host_bps = t.host_rate_gbps * 1e9

    flows_total, exact, packets, last_end, notes = 0.0, True, 0.0, 0.0, []
    for src, fact in zip(resolution.sources, facts):
        s = src.source
        mean = float(fact["mean_bytes"])
        rate = fact["offered_bps"] / (8 * mean) if mean > 0 and fact["offered_bps"] > 0 else 0.0  # flows per s
        last = s.start_us  # when the source's last flow starts
        unbounded = False
        if s.pattern == "poisson":
            if s.duration_us is not None:
                n = rate * s.duration_us / 1e6
                note = f"{src.field}: poisson arrivals over duration_us = {s.duration_us:g}"
                if s.flows is not None:
                    note += f", {'before' if n < s.flows else 'capped by'} flows = {s.flows:,}"
                    n = min(n, float(s.flows))
                notes.append(note)
                exact = False
            else:
                n = float(s.flows or 0)
            last += n / rate * 1e6 if rate > 0 else 0.0
        elif s.pattern == "group":
            n = float(s.flows or 0)
            last += s.spread_us
        elif s.pattern == "incast":
            receiver = src.receivers[0]
            n = float(s.rounds * sum(1 for h in src.senders if h != receiver))
            last += (s.rounds - 1) * s.period_us
        elif s.pattern == "long_lived":
            n = float(len(src.senders))
            unbounded = s.size_bytes is None
        else:  # list
            n = float(len(src.listed))
            mean = sum(f["size_bytes"] for f in src.listed) / n if n else 0.0
            last = max((f["start_us"] for f in src.listed), default=0.0)
        flows_total += n
        if unbounded:
            active_us = max(0.0, (horizon or 0.0) - s.start_us)
            bps = min(n * host_bps, t.leaves * uplinks * t.fabric_rate_gbps * 1e9)
            packets += bps * active_us / 1e6 / 8 / (tp.mss_bytes + tp.header_bytes)
        else:
            packets += n * (mean / tp.mss_bytes + 0.5)  # a flow's last packet is partly full
            last_end = max(last_end, last + mean * 8 / host_bps * 1e6)
    sim_time = horizon if horizon is not None else last_end
    return Preview(
        hosts=hosts, leaves=t.leaves, spines=t.spines, ports=host_ports + switch_ports, host_ports=host_ports,
        switch_ports=switch_ports, flows=flows_total, flows_exact=exact, flows_note="; ".join(notes),
        sim_time_us=float(sim_time), horizon=horizon is not None, events=float(math.ceil(packets * EVENTS_PER_PACKET)),
    )

"""How a reproduction reaches its nominal load before it measures: a stationary start, or a long warm-up.

At a scale that sets ``stationary`` (the quick scale), each run with a TCP poisson source starts with the flows
it would have in flight in steady state (``run.start = "stationary"``: the engine draws them from a fluid model
of the same traffic, then warms up for 20 ms) and measures the flows that arrive after that; when every metric
of its figure reads only short flows, it stops :data:`DRAIN_US` after its window (``run.drain_us``) instead of
waiting for its largest measured flow, and the measured flows still running then are counted as censored. The
validation against the long warm-up is in docs/assumptions.md (*Stationary start*). A scenario whose poisson
source is UDP cannot be pre-loaded (the fluid model is TCP's sharing) and gets the long warm-up below.

A run that starts from an empty fabric and measures every flow carries well under its nominal load on a
heavy-tailed workload: the largest flows, which carry most of the bytes, take a long time to fill the fabric
(docs/assumptions.md, *Steady-state measurement*). At a scale that sets ``steady_state`` (the paper scale of
every paper), each run with a poisson source therefore gets a warm-up (``run.warmup_us``): its flows are
measured only after it, and arrivals go on after the measured ones (the engine's default cool-down).

The warm-up is a multiple of the workload's *fill time*, E[S²] / (2 E[S]) at the host rate: the mean time a
byte waits for its flow to have been sent, were every flow alone at the host rate. Fifteen fill times reached
84% of the nominal load on data mining at 10 Gbps (3 s, measured in docs/assumptions.md, against 17% without a
window); the same factor gives 66 ms for web search at 10 Gbps. The warm-up is rounded to two significant digits,
so that a run's id does not move with the last bits of a CDF's arithmetic, and whether it was enough is in each
run's ``window_carried_load_ratio``, which the figure headers report.
"""

from __future__ import annotations

import math
from typing import Any, Optional

#: How long a drained run goes on after its window (µs): ten times the largest minimum RTO the papers use
#: (5 ms), so a short flow that arrived at the window's end finishes unless it is stalled far beyond any
#: balancer's doing; one still running is counted as censored.
DRAIN_US = 50_000.0

#: Fill times per warm-up (docs/assumptions.md: 3 s on data mining at 10 Gbps reached 84% of the load).
FILL_TIMES = 15.0


def fill_time_us(scenario: Any) -> Optional[float]:
    """The longest fill time (µs) over the scenario's poisson sources, None without one (no window needed: the
    other patterns are not a steady load)."""
    from ..scenario import resolve

    rate_bps = scenario.topology.host_rate_gbps * 1e9
    longest: Optional[float] = None
    for src in resolve(scenario).sources:
        if src.source.pattern != "poisson":
            continue
        if src.workloads:
            total = sum(w for _, w, _ in src.workloads)
            mean = sum(w * c.mean_bytes for _, w, c in src.workloads) / total
            second = sum(w * c.second_moment_bytes2 for _, w, c in src.workloads) / total
        else:
            mean = float(src.source.size_bytes or 0)
            second = mean * mean
        if mean <= 0:
            continue
        t = second / (2.0 * mean) * 8.0 / rate_bps * 1e6
        longest = t if longest is None else max(longest, t)
    return longest


def warmup_us(scenario: Any) -> Optional[float]:
    """The warm-up a steady-state reproduction gives ``scenario`` (µs, two significant digits), None when it has
    no poisson source."""
    fill = fill_time_us(scenario)
    if fill is None or fill <= 0:
        return None
    t = FILL_TIMES * fill
    digits = 1 - int(math.floor(math.log10(t)))
    return float(round(t, digits))


def stationary_ok(scenario: Any) -> Optional[bool]:
    """None when the scenario is not a steady load: no poisson source, or one beside sources of other patterns
    (TAM's microbenchmarks: a group of long flows and a light poisson stream of short ones, judged on the long
    flows' goodput). Such a run starts as written: a window opened by the poisson arrivals would leave the other
    flows unmeasured, and the run would stop before they end. False when a poisson source is UDP (the stationary
    start models TCP's sharing and refuses it); True otherwise."""
    from ..scenario import resolve

    sources = [src.source for src in resolve(scenario).sources]
    poisson = [s for s in sources if s.pattern == "poisson"]
    if not poisson or len(poisson) < len(sources):
        return None
    return all(s.transport != "udp" for s in poisson)

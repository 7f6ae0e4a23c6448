"""What a paper's reproduction is made of: scenario files, sweeps over them, figures and the claims they test.

A :class:`Paper` is a list of :class:`Figure` objects plus the scales it runs at. A figure names the runs it needs
as :class:`Sweep` objects (a shipped scenario file, a list of :class:`Series` — the lines or bars of the
figure, each a set of field overrides such as a scheme with its parameters — and a grid over the x axis); it
draws :class:`Panel` objects from those runs and checks :class:`Claim` objects against them: each claim is data,
the paper's words with one of the shapes of :mod:`dclb.reproduce.claims` (compare, rank, trend, level, not
testable), judged by the rule of :mod:`dclb.reproduce.verdict`. Nothing here runs anything: :mod:`dclb.reproduce.plan` turns a paper at a scale into the points of one sweep, and the data, drawing,
verdict and report modules read the result store.

The scenario files live beside the package (``dclb/data/papers/<paper>/``) as ordinary scenarios: each can be
run with ``dclb run`` or swept with ``dclb sweep`` on its own, and a user can copy and change it.

Scales. Every figure runs at one of three scales, each a :class:`Scale` of the paper: ``paper`` (the paper's
flow counts, 3-5 seeds, measured after a warm-up), ``quick`` (every setting kept, fewer flows, 3 seeds: the fewest with which a verdict
judges a difference; minutes on two cores) and ``ci`` (the least that still draws every figure: few flows, one
seed, each grid trimmed to its ends; its verdicts read "noise unknown").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import pandas as pd

#: Where the shipped scenario files of every paper are.
PAPERS_DIR = Path(__file__).resolve().parent.parent / "data" / "papers"
SCALES = ("paper", "quick", "ci")


@dataclass(frozen=True)
class Scale:
    """How big a paper's runs are at one scale.

    ``seeds``: seeds per point; ``set``: ``--set`` texts applied to every scenario of the paper (flow counts,
    durations); ``trim``: keep only the first and last value of every grid (the ``ci`` scale); ``steady_state``:
    measure after a long warm-up from an empty fabric (:mod:`dclb.reproduce.steady`) in every run with a poisson
    source; ``stationary``: start those runs from the fabric's steady state instead (``run.start =
    "stationary"``, a short warm-up) and stop them a drain after their window when every metric of the figure
    allows it (:attr:`Metric.drains`). A scale that sets neither measures from an empty fabric and is not at
    load on heavy-tailed workloads (the ``ci`` scale)."""

    seeds: int
    set: tuple[str, ...] = ()
    trim: bool = False
    steady_state: bool = False
    stationary: bool = False


@dataclass(frozen=True)
class Series:
    """One line (or bar group) of a figure: a label and the overrides that make its runs."""

    label: str
    set: tuple[str, ...]


@dataclass(frozen=True)
class Sweep:
    """Runs of one scenario file: every series at every point of ``grid`` (a cartesian product).

    ``scale_set`` adds overrides at one scale only (e.g. fewer flows for a heavy workload at ``quick``).
    ``linked`` maps a grid field to a function of its value that returns more overrides for the points at that
    value: fields that move with the axis, e.g. the loads of two sources that split one offered load (DAR's
    deadline and non-deadline flows). They apply after the series' overrides, before the grid values.

    ``axes`` are x axes that no single scenario field carries: a name mapped to ``{value: overrides}``, e.g. TR's
    bad-to-good RTT ratio, which sets the delay of ten links at once. Each value's overrides are applied (after
    the sweep's, before the series'), and the value becomes a column of the figure's frame under that name, as a
    grid field would; the points are the product of the axes and the grid, and ``trim`` keeps each axis's first
    and last value. Give the name a dot (``asym.rtt_ratio``) so that the frame treats it as a grid field.

    ``seeds`` gives this sweep its own number of seeds per point at a scale, instead of the scale's (e.g. fewer for
    heavy runs; below 3 their verdicts read "noise unknown"; MDTLB gives its figures more seeds than its scale).

    ``empty_start`` names the scales at which this sweep's runs start from an empty fabric although the scale is
    ``stationary``: runs too costly to carry at load there (TR's and TAM's 200 hosts at 40 Gbps), which then are
    not at load, and their figure's header says so."""

    scenario: str
    series: tuple[Series, ...]
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    set: tuple[str, ...] = ()
    scale_set: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    linked: Mapping[str, Callable[[Any], Sequence[str]]] = field(default_factory=dict)
    axes: Mapping[str, Mapping[Any, tuple[str, ...]]] = field(default_factory=dict)
    seeds: Mapping[str, int] = field(default_factory=dict)
    empty_start: tuple[str, ...] = ()


@dataclass(frozen=True)
class Metric:
    """A number per run, from its summary or computed from its per-flow table.

    ``summary``: a key of the run summary; ``flows``: a function of the run's flow table (a DataFrame with
    ``size_bytes``, ``fct_us``, ``completed``, ...) returning a number; ``switches``: a function of the run's
    switch table (``kind``, ``index``, ``decisions``, ``state_bytes`` and the schemes' own counters, one row per
    switch) returning a number; ``run``: a function of a
    :class:`~dclb.reproduce.data.RunTables` (the run's record and its flow, port and sample tables, each read
    on first use) returning a number, for numbers that need the port or sample tables (link utilisation, a
    queue averaged over a window). ``factor`` scales the value (e.g. 1e-3 for µs to ms); the key names the unit
    the values are in after it (``short_afct_ms``), since it is the figure's CSV column.

    ``scale`` says how two runs' values compare in a verdict: ``"ratio"`` (the log of their ratio, for FCTs,
    throughputs and other positive quantities) or ``"difference"`` (for quantities that can be zero: miss rates,
    retransmissions, shares). ``ideal``: the same number with every flow at its ideal FCT, when known: it bounds
    what any load balancer could reach (the ``headroom`` reason of :mod:`dclb.reproduce.verdict`); the figure's
    frame then has a ``<key>@ideal`` column. A difference-scale metric counts events, so its bound is zero: a
    claim that it falls by some percent cannot be tested where the baseline has none.

    ``drains``: the metric reads only flows that end soon after they arrive (short flows), so it is sound on a run
    that stops a drain after its measurement window (``run.drain_us``); a figure whose metrics all drain is run
    that way at a stationary scale, and the measured flows still running at the stop are counted in the frame
    (``flows_censored``), never dropped silently. A metric that needs the long flows finished (their AFCT, the
    AFCT of all flows, a slowdown over every size) does not drain: its figure waits for its largest measured flow,
    and its cost says so."""

    key: str
    label: str
    summary: Optional[str] = None
    flows: Optional[Callable[[pd.DataFrame], float]] = None
    samples: Optional[Callable[[pd.DataFrame], pd.DataFrame]] = None
    factor: float = 1.0
    switches: Optional[Callable[[pd.DataFrame], float]] = None
    run: Optional[Callable[[Any], float]] = None
    scale: str = "ratio"
    ideal: Optional["Metric"] = None
    drains: bool = False

    @property
    def needs_flows(self) -> bool:
        return self.flows is not None

    @property
    def needs_samples(self) -> bool:
        return self.samples is not None


@dataclass(frozen=True)
class Panel:
    """One plot of a figure.

    ``kind``: ``line`` (y against the grid field ``x``, one line per series), ``bar`` (one bar per series at
    each value of ``x``), ``timeseries`` (the metric's ``samples`` function gives ``time_us`` and ``value``
    columns per run; one line per series) or ``model`` (lines from ``model``, a function of the figure's data
    returning a frame with ``x``, ``value`` and ``series`` columns, drawn over the simulated points).
    ``where`` keeps runs whose grid values match; ``normalize_to`` divides by the same seed and point of that
    series; ``normalize_at`` (grid values, e.g. ``{"lb.long_threshold_bytes": 100000}``) divides by the same
    series and seed at that point of the grid, the other grid fields equal."""

    title: str
    y: Metric
    x: Optional[str] = None
    kind: str = "line"
    where: Mapping[str, Any] = field(default_factory=dict)
    normalize_to: Optional[str] = None
    xlabel: Optional[str] = None
    logy: bool = False
    model: Optional[Callable[[pd.DataFrame], pd.DataFrame]] = None
    normalize_at: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """Another way to judge a claim on the same runs: a ``reading`` of the paper's words or another ``metric``,
    with its label (e.g. "tail = 95th percentile"). Its verdict enters the claim's reason, not its outcome."""

    label: str
    check: Callable[["pd.DataFrame"], Any]
    kind: str = "reading"


@dataclass(frozen=True)
class Claim:
    """A claim of the paper about a figure: its words (with the line it comes from) and its shape, a
    :mod:`dclb.reproduce.claims` object that judges it on the figure's data. ``concession``: the paper concedes
    it (a weakness of its scheme, or a limit of its result). ``alternatives``: other readings or metrics it is also
    judged under."""

    text: str
    check: Any
    concession: bool = False
    alternatives: tuple[Reading, ...] = ()


@dataclass(frozen=True)
class Figure:
    """One evaluation figure of a paper."""

    id: str
    title: str
    sweeps: tuple[Sweep, ...]
    panels: tuple[Panel, ...]
    claims: tuple[Claim, ...] = ()
    note: str = ""

    @property
    def slug(self) -> str:
        return "fig" + "".join(c if c.isalnum() else "_" for c in self.id)


@dataclass(frozen=True)
class Paper:
    """A paper's whole evaluation."""

    key: str
    title: str
    citation: str
    setup: str
    transport: str
    figures: tuple[Figure, ...]
    scales: Mapping[str, Scale]

    def scenario_path(self, name: str) -> Path:
        return PAPERS_DIR / self.key / name

    def figure(self, fig_id: str) -> Figure:
        for f in self.figures:
            if f.id == fig_id or f.slug == fig_id or f.slug == "fig" + fig_id:
                return f
        known = ", ".join(f.id for f in self.figures)
        from ..errors import ScenarioError

        raise ScenarioError(f"--figure: paper '{self.key}' has no figure {fig_id!r}; it has: {known}")

"""Sensitivity: each paper's headline claims re-judged under the settings the paper does not state and under other
readings of its scheme's ambiguous rules (issue #23, items 3 and 4).

What a paper declares
---------------------
At the end of its file, a paper declares ``SENSITIVITY = Sensitivity(headlines=..., variants=...)``:

* a :class:`Headline` names a figure and the claims of it that carry the paper's result (each by a piece of its
  words, which must match exactly one claim of the figure), the paper's scheme and one baseline, and a short-flow
  and a long-flow metric: beside every verdict the report shows both metrics of the scheme against the baseline
  under that variant, so that a variant that helps short flows by starving long ones shows it;
* a :class:`Variant` is a named set of ``--set`` overrides and a kind. A ``setting`` is something the paper does
  not state (initial window, ECN threshold, buffer, transport, minimum RTO, hosts per leaf, intra-leaf pairs, the
  deadline model, the workload), varied alone around the shipped value and applied to every series. A
  ``reading`` is another reading of the paper's own scheme, applied to that scheme's series only (``only``); the
  baselines stay as shipped. A variant may give its overrides per scenario file (``by_scenario``: ECN K in packets
  in one file, in bytes in another); a figure none of whose scenario files it lists is "not applicable" to it. A
  variant that cannot run is declared all the same with why (``skip``): an engine option not yet available
  (:func:`needs_engine`), or a setting that makes no difference or no sense in the headline setups
  (:func:`not_applicable`). It gets its row in the report and the CSV, and adding the option later is one line.

:func:`around` builds the settings every paper shares from its scenario files (the shipped value read from the
file, the variant beside it), so that a variant stays "half the shipped K" when a file's K changes.

How it runs
-----------
``dclb reproduce PAPER --sensitivity`` plans, for each headline figure among the figures drawn, only the sweeps,
series and grid points its headline claims read (:func:`reads`; at every scale the claims' own points, not the
``ci`` scale's trimmed grid), once as shipped and once per variant, with :func:`dclb.reproduce.plan.plan_paper`:
the runs of a variant differ from the shipped ones by their overrides, so each has its own run id in the same
store, a point already complete is never run again (at quick and paper scale the shipped points are the
reproduction's own runs), and an interrupted invocation resumes where it stopped. A reading leaves the baselines'
runs as they are, so only the scheme's own runs are new.

Each headline claim is judged on the shipped frame and on each variant's frame (:func:`judge`); the variants'
verdicts go to :func:`dclb.reproduce.verdict.judge_claim` as alternatives, so a claim that fails as shipped and
holds under a variant gets the reason "setting-dependent: holds with <variant>" in the report's summary as well
as in its sensitivity section. That section has one table per headline figure (a row per variant; per claim the
verdict and dclb's effect with its interval; the scheme's short- and long-flow metric against the baseline), and
``sensitivity.csv`` one row per claim and variant, skipped and not-applicable ones included (both written by
:mod:`dclb.reproduce.sensitivity_report`).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from ..errors import ScenarioError
from .spec import PAPERS_DIR, Claim, Figure, Metric, Paper, Series, Sweep
from .verdict import Alternative, Judgement, Outcome, Verdict, judge_claim

#: Kinds of variant: a setting the paper does not state, or a reading of the paper's own scheme.
SETTING, READING = "setting", "reading"
#: What became of a variant for one headline figure.
JUDGED, SKIPPED, NOT_APPLICABLE, INVALID = "judged", "skipped", "not applicable", "invalid"
#: Label of the shipped setting in tables and CSV.
SHIPPED = "as shipped"

Point = Mapping[str, Any]


# ---------------------------------------------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True, eq=False)
class Variant:
    """One way to run the headline figures other than as shipped (see the module documentation).

    ``label`` names it in reasons ("holds with <label>"), tables and the CSV: for a single override, the override
    itself. ``group`` is the axis it varies ("initial window", "ECN K", ...). ``only``: the series it applies to (a
    reading of the paper's scheme); empty for every series. ``by_scenario``: overrides per scenario file, added
    to ``set``; a sweep of a file not listed is left as shipped. ``linked``: replaces a sweep's linked-field
    functions (:attr:`dclb.reproduce.spec.Sweep.linked`) where the variant changes what they compute (a workload
    whose short flows carry another share of the bytes). ``skip``: declared, not run, and why. ``note``: how
    the value was chosen."""

    label: str
    set: tuple[str, ...] = ()
    kind: str = SETTING
    group: str = ""
    only: tuple[str, ...] = ()
    by_scenario: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    linked: Mapping[str, Callable[[Any], Sequence[str]]] = field(default_factory=dict)
    skip: str = ""
    note: str = ""

    def overrides_for(self, scenario: str) -> Optional[tuple[str, ...]]:
        """The overrides for a sweep of ``scenario``, or None when the variant leaves that file as shipped."""
        if self.by_scenario:
            if scenario not in self.by_scenario:
                return None
            return (*self.set, *self.by_scenario[scenario])
        return tuple(self.set)

    @property
    def overrides_text(self) -> str:
        parts = [" ".join(self.set)] if self.set else []
        parts += [f"{' '.join(o)} ({s})" for s, o in self.by_scenario.items()]
        text = "; ".join(p for p in parts if p)
        return text + (f" [{', '.join(self.only)} only]" if self.only and text else "")

    @property
    def alternative(self) -> Alternative:
        return Alternative(self.label, self.kind)


def setting(label: str, *overrides: str, group: str = "", note: str = "", by_scenario: Optional[Mapping[str, Sequence[str]]] = None, linked: Optional[Mapping[str, Callable[[Any], Sequence[str]]]] = None) -> Variant:
    """A setting the paper does not state, applied to every series."""
    return Variant(label, tuple(overrides), SETTING, group, (), {k: tuple(v) for k, v in (by_scenario or {}).items()}, dict(linked or {}), "", note)


def reading(*overrides: str, only: Sequence[str], label: str = "", group: str = "", note: str = "", by_scenario: Optional[Mapping[str, Sequence[str]]] = None) -> Variant:
    """Another reading of the paper's own scheme: ``overrides`` (and ``by_scenario``'s) on the series ``only``, the
    baselines as shipped. The label defaults to the overrides and the series, e.g. ``lb.long_mode=per_packet (LBT)``."""
    if not only:
        raise ValueError("a reading applies to the paper's own scheme: give its series in only=")
    if not label and not overrides:
        raise ValueError("a reading with overrides per scenario file needs a label")
    name = label or f"{' '.join(overrides)} ({', '.join(only)})"
    return Variant(name, tuple(overrides), READING, group, tuple(only), {k: tuple(v) for k, v in (by_scenario or {}).items()}, {}, "", note)


def needs_engine(label: str, option: str, *, kind: str = READING, group: str = "", note: str = "") -> Variant:
    """A variant the engine cannot run yet: it is listed, skipped, with the option it needs."""
    return Variant(label, (), kind, group, (), {}, {}, f"needs engine option {option} (not yet available)", note)


def not_applicable(label: str, why: str, *, group: str = "", kind: str = SETTING) -> Variant:
    """A variant of the issue's list that does not apply to this paper's headline setups, and why."""
    return Variant(label, (), kind, group, (), {}, {}, f"not applicable: {why}", "")


@dataclass(frozen=True)
class Headline:
    """A headline figure: which of its claims are the paper's result, and what to show beside their verdicts.

    ``claims``: a piece of the words of each headline claim (matched against the figure's claims; each must match
    exactly one). ``scheme`` and ``baseline``: series compared on ``short`` and ``long`` at ``at`` (a point or
    several; the per-seed mean over them) under every variant. ``why``: why these claims carry the paper."""

    figure: str
    claims: tuple[str, ...]
    scheme: str
    baseline: str
    short: Metric
    long: Metric
    at: Union[Point, Sequence[Point]]
    why: str = ""

    def resolve(self, fig: Figure) -> tuple[Claim, ...]:
        """The figure's claims that ``claims`` name, in that order; a ScenarioError when one does not match
        exactly one claim (the words changed: update the declaration)."""
        out = []
        for piece in self.claims:
            found = [c for c in fig.claims if piece in c.text]
            if len(found) != 1:
                known = "; ".join(c.text[:60] for c in fig.claims)
                raise ScenarioError(f"sensitivity: headline {piece!r} matches {len(found)} claims of Fig. {fig.id}, not one (its claims: {known})")
            out.append(found[0])
        return tuple(out)

    def tradeoff(self) -> tuple[Claim, Claim]:
        """The scheme against the baseline on the short- and the long-flow metric, as claims whose verdicts carry
        the effects (their direction is not judged: only the effect is shown)."""
        from .claims import compare

        return (
            Claim(f"[short] {self.scheme} vs {self.baseline}", compare(self.short, self.scheme, self.baseline, at=self.at, mean=True)),
            Claim(f"[long] {self.scheme} vs {self.baseline}", compare(self.long, self.scheme, self.baseline, at=self.at, mean=True)),
        )


@dataclass(frozen=True)
class Sensitivity:
    """A paper's headline figures and the variants they are judged under."""

    headlines: tuple[Headline, ...]
    variants: tuple[Variant, ...]

    def __post_init__(self) -> None:
        labels = [v.label for v in self.variants]
        dup = {x for x in labels if labels.count(x) > 1}
        if dup:
            raise ValueError(f"sensitivity: variant labels must differ; repeated: {', '.join(sorted(dup))}")
        figs = [h.figure for h in self.headlines]
        if len(set(figs)) != len(figs):
            raise ValueError("sensitivity: one Headline per figure")


def of_paper(key: str) -> Optional[Sensitivity]:
    """The paper's declaration (``SENSITIVITY`` in its module), or None."""
    import importlib

    return getattr(importlib.import_module(f"dclb.reproduce.papers.{key}"), "SENSITIVITY", None)


def headline_texts(key: str) -> dict[str, set[str]]:
    """Per figure id, the words of its headline claims (for the summary's tag); empty when none are declared or a
    declaration no longer matches."""
    from . import get_paper

    sens = of_paper(key)
    if sens is None:
        return {}
    paper = get_paper(key)
    out: dict[str, set[str]] = {}
    for h in sens.headlines:
        try:
            out[paper.figure(h.figure).id] = {c.text for c in h.resolve(paper.figure(h.figure))}
        except ScenarioError:
            continue
    return out


# ---------------------------------------------------------------------------------------------------------------
# Settings every paper shares, from its scenario files

#: The engine's defaults, for fields a scenario file leaves out.
def _engine_defaults() -> dict[str, Any]:
    from .. import _core

    return json.loads(_core.default_config())


def _per_scenario(group: str, label: str, per: Mapping[str, tuple[str, ...]], note: str = "", files: Sequence[str] = ()) -> Variant:
    """One variant whose overrides may differ per scenario file: labelled by its overrides when they are the same
    in every one of ``files``, else by ``label`` with the files' overrides in ``by_scenario`` (a file left out of
    ``per`` stays as shipped)."""
    values = set(per.values())
    if len(values) == 1 and set(per) == set(files):
        only = next(iter(values))
        return Variant(" ".join(only), only, SETTING, group, (), {}, {}, "", note)
    if len(values) == 1:
        label = f"{' '.join(next(iter(values)))} ({', '.join(per)} only)"
    return Variant(label, (), SETTING, group, (), dict(per), {}, "", note)


def around(
    paper_key: str,
    scenarios: Sequence[str],
    *,
    init_cwnd: bool = True,
    ecn_k: bool = True,
    buffer: bool = True,
    transport: bool = True,
    min_rto_us: Sequence[float] = (1000, 200_000),
    inter_leaf: Union[bool, Sequence[str]] = True,
    dctcp_k: Optional[int] = None,
    notes: Optional[Mapping[str, str]] = None,
) -> tuple[Variant, ...]:
    """The settings of issue #23 item 3 that every paper shares, each varied alone around the value its scenario
    files ship (read from the files in ``dclb/data/papers/<paper_key>/``):

    * the initial window: 2 (ns-2's default) where 10 is shipped, else 10;
    * the ECN marking threshold K at half and at double the shipped value, in the unit the file uses
      (``ecn_k_packets`` or ``ecn_k_bytes``; half rounded to a whole number, at least 1); none where marking is off;
    * the buffer at half and at double, likewise;
    * the transport: NewReno (whose packets are not ECN-capable: no marking acts on them) where DCTCP is shipped,
      DCTCP where NewReno is, with marking at ``dctcp_k`` (in the file's unit) when the file marks nothing;
    * the minimum RTO at each of ``min_rto_us`` that is not the shipped one;
    * intra-leaf pairs allowed where they are not, and not where they are (``inter_leaf``: every file, none, or
      the files where pairs on one leaf can exist at all).

    ``notes`` adds a note to a group's variants (by group name)."""
    from ..scenario import read_scenario_file

    defaults = _engine_defaults()
    raws = {s: read_scenario_file(PAPERS_DIR / paper_key / s) for s in scenarios}
    notes = dict(notes or {})
    out: list[Variant] = []

    def topo(raw: Mapping[str, Any]) -> Mapping[str, Any]:
        return raw.get("topology") or {}

    def unit(raw: Mapping[str, Any]) -> str:
        return str(topo(raw).get("queue_unit", defaults["topology"]["queue_unit"]))

    def stated(raw: Mapping[str, Any], s: str, what: str) -> float:
        key = f"{what}_{unit(raw)}"
        if key not in topo(raw):
            raise ScenarioError(f"sensitivity: {paper_key}/{s} must state topology.{key} for its half and double to be varied")
        return float(topo(raw)[key])

    if init_cwnd:
        per = {}
        for s, raw in raws.items():
            iw = int((raw.get("transport") or {}).get("init_cwnd_packets", defaults["transport"]["init_cwnd_packets"]))
            per[s] = (f"transport.init_cwnd_packets={2 if iw != 2 else 10}",)
        out.append(_per_scenario("initial window", "initial window 2", per, notes.get("initial window", "2 is ns-2's default initial window, 10 RFC 6928's"), raws))
    for what, group, flag in (("ecn_k", "ECN K", ecn_k), ("buffer", "buffer", buffer)):
        if not flag:
            continue
        for factor, word in ((0.5, "half"), (2.0, "double")):
            per = {}
            for s, raw in raws.items():
                v = stated(raw, s, what)
                if v <= 0:
                    continue  # marking off in this file: no threshold to vary
                new = max(1, math.floor(v * factor + 0.5))
                per[s] = (f"topology.{what}_{unit(raw)}={new}",)
            if per:
                out.append(_per_scenario(group, f"{group} x{factor:g}", per, notes.get(group, f"{word} the shipped value"), raws))
    if transport:
        per = {}
        for s, raw in raws.items():
            traffic = raw.get("traffic") or {}
            shipped = str(traffic.get("transport", defaults_source()["transport"]))
            other = "newreno" if shipped == "dctcp" else "dctcp"
            o = [f"traffic.transport={other}"]
            for i, src in enumerate(traffic.get("sources") or []):
                if "transport" in src and str(src["transport"]) not in ("udp", other):  # a source's own transport
                    o.append(f"traffic.sources.{i}.transport={other}")
            if other == "dctcp" and stated(raw, s, "ecn_k") <= 0:
                if dctcp_k is None:
                    raise ScenarioError(f"sensitivity: {paper_key}/{s} marks nothing; give dctcp_k for its DCTCP variant")
                o.append(f"topology.ecn_k_{unit(raw)}={dctcp_k}")
            per[s] = tuple(o)
        label = "NewReno without ECN" if all("traffic.transport=newreno" in o for o in per.values()) else "DCTCP"
        v = _per_scenario("transport", label, per, notes.get("transport", ""), raws)
        out.append(replace(v, label=f"{label} ({v.label})") if v.set else v)
    for rto in min_rto_us:
        per = {}
        for s, raw in raws.items():
            shipped = float((raw.get("transport") or {}).get("min_rto_us", defaults["transport"]["min_rto_us"]))
            if float(rto) != shipped:
                per[s] = (f"transport.min_rto_us={rto:g}",)
        if per:
            out.append(_per_scenario("minimum RTO", f"minimum RTO {rto:g} us", per, notes.get("minimum RTO", ""), raws))
    files = list(raws) if inter_leaf is True else [] if inter_leaf is False else list(inter_leaf)
    if files:
        per = {}
        for s in files:
            shipped = bool((raws[s].get("traffic") or {}).get("inter_leaf_only", defaults_source()["inter_leaf_only"]))
            per[s] = (f"traffic.inter_leaf_only={'false' if shipped else 'true'}",)
        out.append(_per_scenario("intra-leaf pairs", "intra-leaf pairs", per, notes.get("intra-leaf pairs", ""), raws))
    return tuple(out)


def defaults_source() -> dict[str, Any]:
    """The engine's defaults of a traffic source."""
    from .. import _core

    return json.loads(_core.default_parts())["source"]


# ---------------------------------------------------------------------------------------------------------------
# What a claim reads

#: (the series read, None for every series of the figure; the grid values fixed, the others all read)
Read = tuple[Optional[frozenset], dict]


def _series_of(x: Any) -> Optional[frozenset]:
    from .claims import Ratio, Spread

    if isinstance(x, Spread):
        return None if x.series is None else frozenset(x.series)
    if isinstance(x, Ratio):
        return frozenset((x.num, x.den))
    return frozenset((x,))


def reads(shape: Any) -> list[Read]:
    """The series and grid points a claim's shape reads: enough to plan only its runs. A point leaves unfixed
    the grid fields whose every value is read (a trend without its ends given reads the whole axis)."""
    from .claims import Combined, Compare, Level, NotTestable, Rank, Trend

    if isinstance(shape, Compare):
        return [(_series_of(side.series), {**p, **side.where}) for p in shape.points for pair in shape.pairs for side in pair]
    if isinstance(shape, Rank):
        names = None if shape.among is None else frozenset((*shape.among, shape.series))
        return [(names, dict(p)) for p in shape.points]
    if isinstance(shape, Trend):
        every = shape.series is None or (shape.goes in ("least", "most") and shape.than is None)
        names = None if every else frozenset((*shape.series, *(shape.than or ())))
        if shape.goes == "flat" and shape.values is not None:
            return [(names, {**shape.at, shape.along: v}) for v in shape.values]
        if shape.lo is None or shape.hi is None:
            return [(names, dict(shape.at))]
        return [(names, {**shape.at, shape.along: x}) for x in (shape.lo, shape.hi)]
    if isinstance(shape, Level):
        return [(_series_of(s), dict(p)) for s in shape.series for p in shape.points]
    if isinstance(shape, NotTestable):
        if shape.show is None:
            return []
        _, names, where = shape.show
        return [(frozenset(names) if names else None, dict(where))]
    if isinstance(shape, Combined):
        return [r for part in shape.parts for r in reads(part)]
    raise TypeError(f"sensitivity: cannot tell what a {type(shape).__name__} reads")


def claim_reads(claim: Claim) -> list[Read]:
    return [r for shape in (claim.check, *(a.check for a in claim.alternatives)) for r in reads(shape)]


def _point_key(p: Mapping[str, Any]) -> frozenset:
    from .claims import _key

    return frozenset((k, _key(v)) for k, v in p.items())


def restrict(paper: Paper, fig: Figure, claims: Sequence[Claim]) -> Figure:
    """``fig`` cut down to what ``claims`` read: per sweep and point read, a sweep of the series read with its grid
    (the file's and the figure's) and derived axes fixed at the point's values. No panels: only the claims."""
    from .claims import _key
    from .plan import _file_grid
    from ..sweeps import normalize_grid

    wanted: dict[frozenset, tuple[dict, Optional[frozenset]]] = {}
    for c in claims:
        for names, p in claim_reads(c):
            k = _point_key(p)
            if k in wanted:
                old = wanted[k][1]
                names = None if old is None or names is None else old | names
            wanted[k] = (dict(p), names)
    sweeps: list[Sweep] = []
    for sw in fig.sweeps:
        grid = _file_grid(paper.scenario_path(sw.scenario))
        grid.update(normalize_grid(dict(sw.grid), f"figure {fig.id} grid"))
        for point, names in wanted.values():
            sub_grid = {k: list(v) for k, v in grid.items()}
            sub_axes = {k: dict(v) for k, v in sw.axes.items()}
            fits = True
            for k, v in point.items():
                if k in sub_grid:
                    sub_grid[k] = [x for x in sub_grid[k] if _key(x) == _key(v)]
                    fits &= bool(sub_grid[k])
                elif k in sub_axes:
                    sub_axes[k] = {x: o for x, o in sub_axes[k].items() if _key(x) == _key(v)}
                    fits &= bool(sub_axes[k])
            series = tuple(s for s in sw.series if names is None or s.label in names)
            if fits and series:
                sweeps.append(replace(sw, series=series, grid=sub_grid, axes=sub_axes))
    return replace(fig, sweeps=tuple(sweeps), panels=(), claims=tuple(claims))


def with_variant(fig: Figure, v: Variant) -> tuple[Optional[Figure], str]:
    """``fig`` (already restricted) with ``v`` applied: its overrides after each affected series' own, its linked
    functions in place of the sweep's. (None, why) when it changes nothing here."""
    sweeps, changed, files = [], False, []
    for sw in fig.sweeps:
        files.append(sw.scenario)
        extra = v.overrides_for(sw.scenario)
        if extra is None:
            sweeps.append(sw)
            continue
        series = []
        for s in sw.series:
            if v.only and s.label not in v.only:
                series.append(s)
            else:
                series.append(Series(s.label, (*s.set, *extra)))
                changed = True
        if v.only:
            # A series the reading turns the scheme into (MDTLB read by RTT alone is dclb's series "MDTLB (RTT only)")
            # would tie with it by construction: it is left out under this reading.
            read = [set(s.set) for s in series if s.label in v.only]
            series = [s for s in series if s.label in v.only or set(s.set) not in read]
        linked = {**sw.linked, **{k: f for k, f in v.linked.items() if k in sw.linked}}
        sweeps.append(replace(sw, series=tuple(series), linked=linked))
    if not changed:
        if v.by_scenario and not any(f in v.by_scenario for f in files):
            return None, f"changes {', '.join(v.by_scenario)} only; this figure runs {', '.join(dict.fromkeys(files))}"
        return None, f"this figure has no {', '.join(v.only)} series"
    return replace(fig, sweeps=tuple(sweeps)), ""


# ---------------------------------------------------------------------------------------------------------------
# Planning


@dataclass
class HeadlineFigure:
    headline: Headline
    figure: Figure
    claims: tuple[Claim, ...]
    #: The figure cut down to the headline claims' reads (and the tradeoff's), as shipped.
    derived: Figure
    tradeoff: tuple[Claim, Claim]


@dataclass
class VariantPlan:
    variant: Variant
    status: str
    why: str = ""
    pp: Any = None  # PaperPlan of the variant's figures
    #: Per headline figure id: the figure under the variant (those it applies to) ...
    figures: dict[str, Figure] = field(default_factory=dict)
    #: ... and why it does not apply to the others.
    not_applicable: dict[str, str] = field(default_factory=dict)


@dataclass
class SensitivityPlan:
    paper: Paper
    scale: str
    sensitivity: Sensitivity
    headlines: list[HeadlineFigure]
    shipped: Any  # PaperPlan
    variants: list[VariantPlan]
    #: Every run of the shipped setting and the variants, each once.
    plan: Any

    def runs_of(self, vp: Optional[VariantPlan]) -> set[str]:
        pp = self.shipped if vp is None else vp.pp
        return {e.run_id for e in pp.entries} if pp is not None else set()


def _unique_entries(pp: Any) -> Any:
    seen, entries = set(), []
    for e in pp.entries:
        k = (e.figure, e.series, e.run_id)
        if k not in seen:
            seen.add(k)
            entries.append(e)
    pp.entries = entries
    return pp


def plan_sensitivity(paper: Paper, sens: Sensitivity, scale: str, figure_ids: Sequence[str] = ()) -> SensitivityPlan:
    """The runs of ``sens`` at ``scale`` for the headline figures among ``figure_ids`` (default: all)."""
    from ..sweeps import Plan
    from .plan import plan_paper

    if scale not in paper.scales:
        raise ScenarioError(f"--scale: paper {paper.key} has no scale {scale!r}")
    chosen = {paper.figure(f).id for f in figure_ids} if figure_ids else None
    flat = {**paper.scales, scale: replace(paper.scales[scale], trim=False)}
    heads = []
    for h in sens.headlines:
        fig = paper.figure(h.figure)
        if chosen is not None and fig.id not in chosen:
            continue
        claims = h.resolve(fig)
        tradeoff = h.tradeoff()
        heads.append(HeadlineFigure(h, fig, claims, restrict(paper, fig, (*claims, *tradeoff)), tradeoff))

    def plan_of(figs: Sequence[Figure]) -> Any:
        return _unique_entries(plan_paper(replace(paper, figures=tuple(figs), scales=flat), scale))

    shipped = plan_of([hf.derived for hf in heads]) if heads else None
    variants = []
    for v in sens.variants:
        if v.skip:
            variants.append(VariantPlan(v, SKIPPED, v.skip))
            continue
        figs, na = {}, {}
        for hf in heads:
            fv, why = with_variant(hf.derived, v)
            if fv is None:
                na[hf.figure.id] = why
            else:
                figs[hf.figure.id] = fv
        if not figs:
            variants.append(VariantPlan(v, NOT_APPLICABLE, "; ".join(dict.fromkeys(na.values())), None, {}, na))
            continue
        try:
            pp = plan_of(list(figs.values()))
        except ScenarioError as e:
            variants.append(VariantPlan(v, INVALID, str(e), None, {}, na))
            continue
        variants.append(VariantPlan(v, JUDGED, "", pp, figs, na))
    points: dict[str, Any] = {}
    for pp in [shipped, *(vp.pp for vp in variants)]:
        for p in (pp.plan.points if pp is not None else ()):
            points.setdefault(p.run_id, p)
    plan = Plan(name=f"{paper.key}-{scale}-sensitivity", grid={}, seeds=[], points=list(points.values()))
    return SensitivityPlan(paper, scale, sens, heads, shipped, variants, plan)


def estimate_events(points: Sequence[Any]) -> float:
    """The engine's own estimate of the events of ``points`` (:func:`dclb.preview.preview`, as ``dclb run
    --dry-run`` prints it), summed; NaN when one cannot be estimated."""
    from ..preview import preview

    total = 0.0
    for p in points:
        try:
            total += float(preview(p.scenario).events)
        except Exception:  # an estimate that cannot be made leaves the total unknown, not the plan
            return math.nan
    return total


def describe(splan: SensitivityPlan, reproduction_runs: set[str] = frozenset(), events: bool = False) -> list[str]:
    """Lines for ``--list``: per variant, its runs (and those beyond the reproduction's and the shipped ones) or why
    it is not run; with ``events``, the engine's estimate of each variant's events."""
    head = ", ".join(f"Fig. {hf.figure.id} ({len(hf.claims)} claims)" for hf in splan.headlines) or "none among the figures chosen"
    total = splan.plan.points
    new = [p for p in total if p.run_id not in reproduction_runs]
    ev = f"; about {_count(estimate_events(new))} engine events beyond the reproduction's" if events else ""
    lines = [f"sensitivity at scale {splan.scale}: headline {head}; {len(total)} runs, {len(new)} beyond the reproduction's{ev}"]
    shipped = splan.runs_of(None)
    lines.append(f"    {SHIPPED:<44} {len(shipped)} runs ({len(shipped - set(reproduction_runs))} beyond the reproduction's)")
    for vp in splan.variants:
        v = vp.variant
        if vp.status != JUDGED:
            lines.append(f"    {v.label:<44} [{v.kind}] {vp.status}: {vp.why}")
            continue
        runs = splan.runs_of(vp)
        own = runs - shipped - set(reproduction_runs)
        pts = [p for p in vp.pp.plan.points if p.run_id in own]
        more = f", about {_count(estimate_events(pts))} events" if events else ""
        na = f"; not applicable to Fig. {', '.join(vp.not_applicable)}" if vp.not_applicable else ""
        lines.append(f"    {v.label:<44} [{v.kind}] {len(runs)} runs, {len(own)} of its own{more}{na}")
    return lines


def _count(x: float) -> str:
    if not math.isfinite(x):
        return "unknown"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.1f} {unit}"
    return f"{x:.0f}"


# ---------------------------------------------------------------------------------------------------------------
# Judging


@dataclass
class Cell:
    """One headline claim under one variant (``variant`` None: as shipped)."""

    variant: Optional[Variant]
    status: str
    verdict: Optional[Verdict] = None
    short: Optional[Verdict] = None
    long: Optional[Verdict] = None
    why: str = ""

    @property
    def label(self) -> str:
        return SHIPPED if self.variant is None else self.variant.label


@dataclass
class ClaimSensitivity:
    figure: str
    headline: Headline
    claim: Claim
    #: The claim judged as shipped with every judged variant as an alternative (its reason).
    judgement: Judgement
    cells: list[Cell]
    #: The judged variants and their frames (what :meth:`SensitivityResult.settings_for` hands the main report).
    frames: list[tuple[Alternative, Any]] = field(default_factory=list, repr=False)

    @property
    def holds_under(self) -> tuple[int, int]:
        """(variants under which the claim is reproduced, variants judged), the shipped setting left out."""
        judged = [c for c in self.cells[1:] if c.status == JUDGED]
        return sum(1 for c in judged if c.verdict is not None and c.verdict.outcome is Outcome.REPRODUCED), len(judged)


@dataclass
class SensitivityResult:
    splan: SensitivityPlan
    claims: list[ClaimSensitivity]
    runs: int = 0
    ran: int = 0
    failed: int = 0
    wall_s: float = 0.0

    def settings_for(self, figure_id: str, claim: Claim) -> list[tuple[Alternative, Any]]:
        """The judged variants' frames of a headline claim, for :func:`judge_claim` in the main report (empty for
        any other claim)."""
        for cs in self.claims:
            if cs.figure == figure_id and cs.claim.text == claim.text:
                return list(cs.frames)
        return []


def judge(splan: SensitivityPlan, frames: Mapping[tuple[Optional[str], str], Any]) -> list[ClaimSensitivity]:
    """Every headline claim judged on ``frames`` (keyed by (variant label or None for the shipped setting, figure
    id); a frame or its :class:`~dclb.reproduce.claims.FrameData`)."""
    from .claims import FrameData

    data = {k: FrameData.of(f) for k, f in frames.items()}
    out = []
    for hf in splan.headlines:
        fid = hf.figure.id
        shipped = data.get((None, fid))
        short_s, long_s = hf.tradeoff
        for claim in hf.claims:
            cells = [Cell(None, JUDGED, claim.check(shipped), short_s.check(shipped), long_s.check(shipped)) if shipped is not None else Cell(None, INVALID, why="no runs")]
            alts: list[tuple[Alternative, Any]] = []
            for vp in splan.variants:
                v = vp.variant
                if vp.status in (SKIPPED, INVALID) or (vp.status == NOT_APPLICABLE and not vp.not_applicable):
                    cells.append(Cell(v, vp.status, why=vp.why))
                    continue
                if fid not in vp.figures:
                    cells.append(Cell(v, NOT_APPLICABLE, why=vp.not_applicable.get(fid, vp.why)))
                    continue
                d = data.get((v.label, fid))
                if d is None:
                    cells.append(Cell(v, INVALID, why="no frame"))
                    continue
                cells.append(Cell(v, JUDGED, claim.check(d), short_s.check(d), long_s.check(d)))
                alts.append((v.alternative, d))
            judgement = judge_claim(claim, shipped, alts) if shipped is not None else judge_claim(claim, FrameData(None), ())
            out.append(ClaimSensitivity(fid, hf.headline, claim, judgement, cells, alts))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Running


class _Progress:
    """One line per variant whose runs are done (no terminal), or rich bars: the whole and one per variant."""

    def __init__(self, splan: SensitivityPlan, log: Callable[[str], None], bars: bool) -> None:
        self.log, self.t0, self.done = log, time.perf_counter(), 0
        self.total = len(splan.plan.points)
        self.key = f"{splan.paper.key} ({splan.scale}) sensitivity"
        groups = {SHIPPED: splan.runs_of(None)}
        groups.update({vp.variant.label: splan.runs_of(vp) for vp in splan.variants if vp.status == JUDGED})
        self.left = {k: set(v) for k, v in groups.items()}
        self.bar = None
        if bars:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True))
            self.overall = self.bar.add_task(f"[bold]{self.key}", total=max(self.total, 1))
            self.tasks = {k: self.bar.add_task(f"  {k}", total=max(len(v), 1)) for k, v in groups.items()}

    def __enter__(self) -> "_Progress":
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, reply: dict[str, Any]) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.advance(self.overall)
        for k, runs in self.left.items():
            if reply["run_id"] in runs:
                runs.discard(reply["run_id"])
                if self.bar is not None:
                    self.bar.advance(self.tasks[k])
                elif not runs:
                    self.log(f"{self.key}: {k}: runs done ({self.done} of {self.total}, {time.perf_counter() - self.t0:.0f} s)")


def run_sensitivity(
    splan: SensitivityPlan,
    out: Path,
    jobs: Optional[int] = None,
    dask: Any = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    terminal: bool = False,
) -> SensitivityResult:
    """Runs what the store ``out/store`` lacks of ``splan`` and judges every headline claim under every variant."""
    from ..store import open_store
    from ..sweeps import execute
    from .data import RunReader, figure_frame

    store_dir = out / "store"
    t0 = time.perf_counter()
    result = SensitivityResult(splan, [], runs=len(splan.plan.points))
    if splan.plan.points:
        with _Progress(splan, log, bars=progress and terminal) as bar:
            frame = execute(
                splan.plan,
                out=store_dir,
                jobs=jobs,
                dask=dask,
                on_start=lambda total, todo, where: log(f"{splan.paper.key}: sensitivity: {total} runs at scale {splan.scale}, {todo} to run on {where}") if not (progress and terminal) else None,
                on_reply=bar if progress else None,
            )
        result.ran = int((~frame["reused"]).sum()) if len(frame) else 0
        result.failed = int((frame["status"] == "failed").sum()) if len(frame) else 0
    result.wall_s = time.perf_counter() - t0
    reader = RunReader(open_store(store_dir, create=True))
    frames: dict[tuple[Optional[str], str], Any] = {}
    for hf in splan.headlines:
        frames[(None, hf.figure.id)] = figure_frame(splan.shipped, hf.derived, reader)
    for vp in splan.variants:
        if vp.status == JUDGED:
            for fid, fig in vp.figures.items():
                frames[(vp.variant.label, fid)] = figure_frame(vp.pp, fig, reader)
    result.claims = judge(splan, frames)
    return result

"""``dclb reproduce``: plan a paper's figures at a scale, run what the store lacks, draw, judge, report.

Layout of the output directory (``--out``, default ``reproduce-<scale>``)::

    <out>/store/                 the result store of every run (shared by the papers; resumable)
    <out>/<paper>/figN.png       each figure, as drawn
    <out>/<paper>/figN.csv       the numbers behind it: one row per series, grid point and seed
    <out>/<paper>/figN.section.json  the figure's part of the report, so ``--figure`` keeps the others
    <out>/<paper>/report.html    claims beside figures, with a verdict and its reason computed from the data
    <out>/<paper>/summary.csv    one row per claim: figure, claim, verdict, reason, the paper's number, dclb's effect
    <out>/<paper>/sensitivity.csv  with ``--sensitivity``: one row per headline claim and variant
    <out>/<paper>/sensitivity.section.json  the report's sensitivity section, kept for later invocations
    <out>/index.html, summary.csv  with ``all``: the five papers' summaries together

Runs go through :func:`dclb.sweeps.execute`, so they run on local cores or a Dask cluster, every run is stored
as it finishes, and a second invocation runs only what is missing or failed. On a terminal, progress shows one
bar per figure and one for the whole paper with an estimate of the time left; otherwise (a log file, CI) it is
one line per figure whose runs are done and one per figure drawn.

With ``--sensitivity`` the headline claims' runs under every variant the paper declares follow, through the same
machinery into the same store (:mod:`dclb.reproduce.sensitivity`), before anything is judged: their verdicts are
the alternatives those claims' reasons weigh.

Each figure is judged claim by claim (:func:`dclb.reproduce.verdict.judge_claim`), and its report header states
what was run (:class:`Header`): the flows per run and the seeds as the runs' records have them, the load the
runs carried against the nominal one, and the command for the paper scale with its cost, measured when the runs
are the paper scale's, else estimated from these runs (their time per event of the engine's estimate,
:func:`dclb.preview.preview`, times the paper scale's events).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from ..errors import ScenarioError
from .data import RunReader, figure_frame
from .plan import PaperPlan, plan_paper
from .spec import Figure, Paper
from .verdict import Judgement, judge_claim


@dataclass
class Header:
    """What a figure's runs were, as their records say: what its report header prints."""

    #: Fewest and most flows per run over the completed runs (the measured flows when the runs had a warm-up).
    flows: Optional[tuple[int, int]] = None
    seeds: tuple[int, ...] = ()
    #: Per nominal load (the grid's ``traffic.load``; None for a figure without a load axis): the median share of
    #: it the runs carried (:func:`carried_ratio`) and how many runs it is over.
    load: tuple[tuple[Optional[float], float, int], ...] = ()
    #: The command that draws this figure at paper scale, and its cost in words.
    command: str = ""
    cost: str = ""
    #: Which seed the figure's time series show (None without time series).
    timeseries_seed: Optional[int] = None
    #: Whether the runs measured after a warm-up (their flow counts and load are then the measured window's).
    windowed: bool = False
    #: How the runs with a poisson source started: ``"stationary"`` (the steady state's flows pre-loaded),
    #: ``"warm-up"`` (an empty fabric and a long warm-up), ``"empty"`` (measured from an empty fabric: not at load
    #: on a heavy-tailed workload), several of them joined by ``" and "``; ``""`` without such runs.
    start: str = ""
    #: The lowest share of the nominal load any run carried (:func:`carried_ratio`), None when none is known.
    lowest: Optional[float] = None
    #: Measured flows still running when their runs stopped a drain after the window (counted, not dropped).
    censored: int = 0


@dataclass(frozen=True)
class SavedLine:
    """A claim's verdict line as an earlier invocation's report kept it (``--figure`` redraws only some)."""

    text: str
    holds: Optional[bool]


def outcome_of(line: Any) -> str:
    """A verdict line's outcome (:class:`~dclb.reproduce.verdict.Outcome` value): a judgement's own, or for a line
    an earlier invocation saved, the outcome its text states after ``=>``."""
    outcome = getattr(line, "outcome", None)
    if outcome is not None:
        return outcome.value
    head, sep, tail = line.text.rpartition(" => ")
    return tail.split(" (")[0] if sep else "cannot tell"


def outcome_counts(lines: Any) -> str:
    """``3 reproduced, 2 indistinguishable, 1 opposite``: how many verdict lines read each outcome, in the order
    of :class:`~dclb.reproduce.verdict.Outcome`."""
    from collections import Counter

    from .verdict import Outcome

    counts = Counter(outcome_of(line) for line in lines)
    order = [o.value for o in Outcome] + sorted(set(counts) - {o.value for o in Outcome})
    return ", ".join(f"{counts[o]} {o}" for o in order if counts[o]) or "none"


@dataclass
class FigureResult:
    figure: Figure
    image: Optional[Path]
    data: Optional[Path]
    judgements: list[Judgement]
    runs: int
    failed: int
    error: Optional[str] = None
    #: Set when some of the figure's runs offered well under their nominal load (see :func:`load_note`).
    load_note: Optional[str] = None
    header: Header = field(default_factory=Header)
    #: True for a figure an earlier invocation drew into the same directory at the same scale (kept in the report).
    earlier: bool = False
    saved: list[tuple[str, SavedLine]] = field(default_factory=list)

    @property
    def verdicts(self) -> list[tuple[str, Any]]:
        """(claim words, line) pairs: the judgements (with ``text`` and ``holds``), or what was saved of them."""
        if self.earlier:
            return list(self.saved)
        return [(j.claim.text, j) for j in self.judgements]


@dataclass
class PaperResult:
    paper: Paper
    scale: str
    out: Path
    #: The figures of the report, in the paper's order: those drawn now and those kept from earlier invocations.
    figures: list[FigureResult] = field(default_factory=list)
    runs: int = 0
    ran: int = 0
    failed: int = 0
    #: Seconds running (or finding in the store) the plan's runs, and then drawing, judging and writing the report.
    wall_s: float = 0.0
    report_s: float = 0.0
    report: Optional[Path] = None
    #: One summary row per claim of the report (:data:`dclb.reproduce.report.SUMMARY_COLUMNS`), earlier figures' too.
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: With ``--sensitivity``: the headline claims under every variant (:mod:`dclb.reproduce.sensitivity`).
    sensitivity: Any = None


class _Progress:
    """Rich progress: the paper overall (with the time left) and one bar per figure."""

    def __init__(self, pp: PaperPlan) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self.figures_of: dict[str, list[str]] = defaultdict(list)
        for e in pp.entries:
            if e.figure not in self.figures_of[e.run_id]:
                self.figures_of[e.run_id].append(e.figure)
        self.overall = self.progress.add_task(f"[bold]{pp.paper.key} ({pp.scale})", total=max(len(pp.plan.points), 1))
        self.tasks = {f.id: self.progress.add_task(f"  Fig. {f.id}", total=max(len(pp.runs_of(f.id)), 1)) for f in pp.figures}

    def __enter__(self) -> "_Progress":
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def __call__(self, reply: dict[str, Any]) -> None:
        self.progress.advance(self.overall)
        for f in self.figures_of.get(reply["run_id"], []):
            self.progress.advance(self.tasks[f])


class _Lines:
    """Progress where no terminal shows bars: one line when the last run of a figure is done."""

    def __init__(self, pp: PaperPlan, log: Callable[[str], None]) -> None:
        self.log, self.t0 = log, time.perf_counter()
        self.key = f"{pp.paper.key} ({pp.scale})"
        self.left = {f.id: set(pp.runs_of(f.id)) for f in pp.figures}
        self.total, self.done = len(pp.plan.points), 0

    def __call__(self, reply: dict[str, Any]) -> None:
        self.done += 1
        for fig_id, runs in self.left.items():
            if reply["run_id"] in runs:
                runs.discard(reply["run_id"])
                if not runs:
                    self.log(f"{self.key}: Fig. {fig_id}: runs done ({self.done} of {self.total} runs, {time.perf_counter() - self.t0:.0f} s)")


def _terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def run_paper(
    paper: Paper,
    scale: str = "quick",
    figure_ids: Sequence[str] = (),
    out: str | Path | None = None,
    jobs: int | None = None,
    dask: Any = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    sensitivity: bool = False,
) -> PaperResult:
    """Runs and draws ``paper`` (its ``figure_ids``, default all) at ``scale`` into ``out``; with ``sensitivity``,
    also its headline claims under every variant it declares (:mod:`dclb.reproduce.sensitivity`), whose verdicts
    enter those claims' reasons."""
    from ..store import open_store
    from ..sweeps import execute

    out = Path(out if out is not None else f"reproduce-{scale}")
    pp = plan_paper(paper, scale, figure_ids)
    splan = _sensitivity_plan(paper, scale, figure_ids) if sensitivity else None
    store_dir = out / "store"
    result = PaperResult(paper=paper, scale=scale, out=out / paper.key, runs=len(pp.plan.points))
    t0 = time.perf_counter()
    bars = progress and _terminal()
    bar = _Progress(pp) if bars else None
    lines = _Lines(pp, log) if progress and not bars else None
    if bar is not None:
        bar.__enter__()
    try:
        frame = execute(
            pp.plan,
            out=store_dir,
            jobs=jobs,
            dask=dask,
            on_start=lambda total, todo, where: log(f"{paper.key}: {total} runs at scale {scale}, {todo} to run on {where}") if not bars else None,
            on_reply=bar if bar is not None else lines,
        )
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    result.wall_s = time.perf_counter() - t0
    result.ran = int((~frame["reused"]).sum()) if len(frame) else 0
    result.failed = int((frame["status"] == "failed").sum()) if len(frame) else 0
    settings = None
    if splan is not None:
        from .sensitivity import run_sensitivity

        result.sensitivity = run_sensitivity(splan, out, jobs, dask, progress, log, terminal=bars)
        settings = result.sensitivity.settings_for
    t_report = time.perf_counter()
    store = open_store(store_dir)
    reader = RunReader(store)
    result.out.mkdir(parents=True, exist_ok=True)
    costs = _CostModel(pp, reader, out)
    for fig in pp.figures:
        fr = _draw_and_judge(pp, fig, reader, result.out, settings)
        fr.header = header_of(pp, fig, fr, reader, costs)
        result.figures.append(fr)
        if progress and not bars:
            counts = _counts(fr.judgements)
            log(f"{paper.key} ({scale}): Fig. {fig.id} drawn: {fr.runs} runs; claims: {counts or 'none'}")
    from .report import write_report

    result.report_s = time.perf_counter() - t_report
    result.report = write_report(result, pp)
    return result


def _counts(judgements: Sequence[Judgement]) -> str:
    seen: dict[str, int] = {}
    for j in judgements:
        seen[j.outcome.value] = seen.get(j.outcome.value, 0) + 1
    return ", ".join(f"{n} {o}" for o, n in seen.items())


def _sensitivity_plan(paper: Paper, scale: str, figure_ids: Sequence[str]) -> Any:
    """The paper's sensitivity plan at ``scale``, planned before anything runs so that a declaration that no
    longer fits its paper stops the invocation with one line."""
    from .sensitivity import of_paper, plan_sensitivity

    sens = of_paper(paper.key)
    if sens is None:
        raise ScenarioError(f"--sensitivity: paper {paper.key} declares no headline claims or variants (SENSITIVITY in its module)")
    return plan_sensitivity(paper, sens, scale, figure_ids)


def _draw_and_judge(pp: PaperPlan, fig: Figure, reader: RunReader, where: Path, settings: Optional[Callable[[str, Any], Any]] = None) -> FigureResult:
    from ..plots import save
    from .claims import FrameData
    from .draw import draw_figure
    from .verdict import Outcome, Reason, Verdict

    frame = figure_frame(pp, fig, reader)
    runs = len(pp.runs_of(fig.id))
    failed = int((frame["status"] != "completed").sum()) if len(frame) else 0
    data = where / f"{fig.slug}.csv"
    frame.to_csv(data, index=False)
    indexed = FrameData(frame)
    judgements: list[Judgement] = []
    for claim in fig.claims:
        try:
            judgements.append(judge_claim(claim, indexed, settings(fig.id, claim) if settings is not None else ()))
        except Exception as e:  # a verdict that cannot be computed must not lose the figure
            v = Verdict(Outcome.CANNOT_TELL, f"verdict could not be computed: {type(e).__name__}: {e}")
            judgements.append(Judgement(claim, v, (), Reason.NO_DATA, "the verdict failed"))
    image: Optional[Path] = None
    error = None
    try:
        carried = {nominal: ratio for nominal, ratio, _ in load_reached(pp, fig, reader) if isinstance(nominal, (int, float))}
        image = save(draw_figure(pp, fig, frame, reader, carried), where / f"{fig.slug}.png")
    except Exception as e:  # keep the rest of the report; the error is shown in place of the figure
        error = f"{type(e).__name__}: {e}"
    return FigureResult(fig, image, data, judgements, runs, failed, error, load_note(frame, reader))


class _CostModel:
    """What drawing a figure at paper scale costs: measured from the runs when they are the paper scale's, else
    estimated as its runs' events (:func:`dclb.preview.preview`, the engine's estimate) times the seconds per
    estimated event that this scale's runs took."""

    def __init__(self, pp: PaperPlan, reader: RunReader, out: Path) -> None:
        self.pp, self.reader, self.out = pp, reader, out
        self._paper: Optional[PaperPlan] = None
        self._events: dict[str, float] = {}

    def _preview_events(self, point: Any) -> float:
        if point.run_id not in self._events:
            from ..preview import preview

            try:
                self._events[point.run_id] = float(preview(point.scenario).events)
            except Exception:  # an estimate that cannot be made leaves the cost unknown, not the figure
                self._events[point.run_id] = math.nan
        return self._events[point.run_id]

    def paper_plan(self) -> Optional[PaperPlan]:
        if self._paper is None and self.pp.scale != "paper":
            try:
                self._paper = plan_paper(self.pp.paper, "paper")
            except ScenarioError:
                return None
        return self._paper if self.pp.scale != "paper" else self.pp

    def describe(self, fig: Figure) -> str:
        run_ids = self.pp.runs_of(fig.id)
        walls = [((self.reader.record(r) or {}).get("wall_s")) for r in run_ids]
        walls = [float(w) for w in walls if isinstance(w, (int, float)) and math.isfinite(w)]
        if self.pp.scale == "paper":
            return f"{len(run_ids)} runs, measured {_duration(sum(walls))} of one core" if walls else f"{len(run_ids)} runs"
        paper = self.paper_plan()
        if paper is None:
            return "cost unknown"
        by_id = {p.run_id: p for p in paper.plan.points}
        paper_runs = [by_id[r] for r in paper.runs_of(fig.id)]
        here = {p.run_id: p for p in self.pp.plan.points}
        est_here = sum(self._preview_events(here[r]) for r in run_ids if r in here)
        est_paper = sum(self._preview_events(p) for p in paper_runs)
        if not walls or not (est_here > 0) or not math.isfinite(est_paper):
            return f"{len(paper_runs)} runs; cost unknown (no timed runs at this scale)"
        seconds = est_paper * sum(walls) / est_here
        return f"{len(paper_runs)} runs, about {_duration(seconds)} of one core (estimate from this scale's {len(walls)} runs, {_duration(sum(walls))})"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def carried_ratio(summary: Mapping[str, Any]) -> Optional[float]:
    """The share of its nominal load a run carried: over the whole fabric in its measurement window when measured
    (``fabric_carried_load_ratio``: every flow's bytes, pre-loaded ones too), else its measured source's bytes in
    the window, else while its flows arrived (the summary's ``carried_load_ratio``); None when none is known."""
    for key in ("fabric_carried_load_ratio", "window_carried_load_ratio", "carried_load_ratio"):
        value = summary.get(key)
        if isinstance(value, (int, float)) and math.isfinite(value):
            return float(value)
    return None


def steady_ratio(record: Mapping[str, Any]) -> Optional[float]:
    """:func:`carried_ratio` of a run whose traffic is a steady load (poisson sources only), None for the others:
    beside a group of long flows or an incast a light poisson stream's carried share is a ratio of small numbers
    that no axis promises (TAM's microbenchmarks read 62-216%)."""
    traffic = (record.get("scenario") or {}).get("traffic") or {}
    sources = traffic.get("sources") or [traffic]
    if any(src.get("pattern", traffic.get("pattern", "poisson")) != "poisson" for src in sources):
        return None
    return carried_ratio(record.get("summary") or {})


def load_reached(pp: PaperPlan, fig: Figure, reader: RunReader) -> tuple[tuple[Optional[float], float, int], ...]:
    """Per nominal load of ``fig``'s runs (the grid's ``traffic.load``; None without a load axis): the median
    share of it the runs carried (:func:`carried_ratio`) and how many runs that is over."""
    by_load = defaultdict(list)
    for e in pp.entries:
        if e.figure != fig.id:
            continue
        ratio = steady_ratio(reader.record(e.run_id) or {})
        if ratio is not None:
            by_load[e.values.get("traffic.load")].append(ratio)
    return tuple((nominal, statistics.median(v), len(v)) for nominal, v in sorted(by_load.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def start_of(summary: Mapping[str, Any]) -> str:
    """How a run started (:attr:`Header.start`): from its summary's pre-load and window statistics; ``""`` for a
    run without a poisson source (no load to reach)."""
    def known(key: str) -> bool:
        v = summary.get(key)
        return isinstance(v, (int, float)) and math.isfinite(v)

    if known("prefill_flows") and summary.get("prefill_candidates"):
        return "stationary"
    if known("window_carried_load_ratio"):
        return "warm-up"
    return "empty" if known("carried_load_ratio") else ""


def header_of(pp: PaperPlan, fig: Figure, fr: FigureResult, reader: RunReader, costs: Optional[_CostModel] = None) -> Header:
    """What ``fig``'s runs were, from their records (see :class:`Header`)."""
    entries = [e for e in pp.entries if e.figure == fig.id]
    flows = []
    windowed = False
    starts: list[str] = []
    ratios: list[float] = []
    censored = 0
    for e in entries:
        summary = (reader.record(e.run_id) or {}).get("summary") or {}
        n = summary.get("flows_measured", summary.get("flows_total"))
        if isinstance(n, (int, float)):
            flows.append(int(n))
        w = summary.get("window_carried_load_ratio")
        windowed = windowed or (isinstance(w, (int, float)) and math.isfinite(w))
        start = start_of(summary)
        if start and start not in starts:
            starts.append(start)
        ratio = steady_ratio(reader.record(e.run_id) or {})
        if ratio is not None:
            ratios.append(ratio)
        c = summary.get("window_flows_censored")
        if isinstance(c, (int, float)) and math.isfinite(c):
            censored += int(c)
    seeds = tuple(sorted({e.seed for e in entries}))
    series_ts = any(p.kind == "timeseries" for p in fig.panels)
    command = f"dclb reproduce {pp.paper.key} --figure {fig.id} --scale paper"
    cost = costs.describe(fig) if costs is not None else ""
    return Header(
        (min(flows), max(flows)) if flows else None, seeds, load_reached(pp, fig, reader), command, cost,
        seeds[0] if series_ts and seeds else None, windowed, " and ".join(sorted(starts)), min(ratios) if ratios else None, censored,
    )


def load_note(frame: Any, reader: RunReader) -> Optional[str]:
    """One sentence when some of the figure's runs carried well under their nominal load in their measurement
    window (:func:`carried_ratio`), naming the cause the runs point to. The series of a figure run the same flows
    per seed from the same start, so when some series carry the load and others do not, the shortfall is those
    schemes' (they could not serve the offered load: queues grew, flows waited), not the start's; when no series
    carries it, the fabric never reached the load (an empty start with too few flows, or too short a warm-up);
    when every series carries it but single runs do not, those seeds' windows were light (a small fabric over a
    short window carries what its giants in flight carry)."""
    from ..summary import LOAD_SHORTFALL

    if not len(frame):
        return None
    by_series: dict[str, list[float]] = {}
    done = frame.loc[frame["status"] == "completed"]
    if "series" not in done.columns:
        done = done.assign(series="all")
    # What each series ran apart from its scheme: the shortfall is a scheme's only between series that ran the
    # same traffic on the same fabric (not TR's Figs. 11-14 side by side, whose series are workloads). The
    # transport is left out: a scheme brings its own host settings (Presto's and DRB's reorder buffer, Clove's
    # ECN), and MDTLB's Fig. 10 compares the same flows on the same fabric although Presto's transport differs.
    traffic: dict[str, set[str]] = {}
    windowed: list[bool] = []
    for _, row in done[["run_id", "series"]].drop_duplicates("run_id").iterrows():
        record = reader.record(row["run_id"]) or {}
        value = steady_ratio(record)
        if value is not None:
            by_series.setdefault(str(row["series"]), []).append(value)
            windowed.append(start_of(record.get("summary") or {}) in ("stationary", "warm-up"))
            scenario = {k: v for k, v in (record.get("scenario") or {}).items() if k in ("topology", "traffic")}
            traffic.setdefault(str(row["series"]), set()).add(json.dumps(scenario, sort_keys=True, default=str))
    ratios = sorted(r for rs in by_series.values() for r in rs)
    low = [r for r in ratios if r < LOAD_SHORTFALL]
    if not low:
        return None
    # Runs from an empty start have no window: their share is over the whole run, warm-up included.
    where = (
        "in the measurement window" if all(windowed)
        else "over the run (an empty start, no measurement window)" if not any(windowed)
        else "in the measurement window, or over the run where it started empty"
    )
    head = (
        f"load reached: in {len(low)} of {len(ratios)} runs the fabric carried under {LOAD_SHORTFALL:.0%} of the nominal "
        f"load {where} (all runs: {ratios[0]:.0%} to {ratios[-1]:.0%}, median {ratios[len(ratios) // 2]:.0%}); "
    )
    medians = {k: statistics.median(v) for k, v in by_series.items()}
    short = sorted((k for k, m in medians.items() if m < LOAD_SHORTFALL), key=lambda k: medians[k])
    best = max(medians, key=lambda k: medians[k])
    named = ", ".join(f"{k} {medians[k]:.0%}" for k in short)
    if short and medians[best] >= LOAD_SHORTFALL and any(traffic.get(k) != traffic.get(best) for k in short):
        return head + (
            f"by series (median), {named} against {best} {medians[best]:.0%}; the series ran different traffic or fabrics, "
            "so the shortfall is that of their traffic from this start, not shown to be a scheme's"
        )
    if short and medians[best] >= LOAD_SHORTFALL:
        return head + (
            f"by series (median), {named} against {best} {medians[best]:.0%}: from the same flows and start, those schemes "
            "did not carry the offered load (a shortfall of the scheme, not of the start), and their FCTs are those of an overloaded fabric"
        )
    if short:
        return head + "no series carried its nominal load: the fabric did not reach it (too few flows from an empty start, or too short a warm-up), so load-dependent claims are weak here"
    return head + "every series carried it at the median: single seeds' windows were light (a small fabric over a short window carries what its giants in flight carry)"


def reproduce(
    paper_key: str,
    scale: str = "quick",
    figure_ids: Sequence[str] = (),
    out: str | Path | None = None,
    jobs: int | None = None,
    dask: Any = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    sensitivity: bool = False,
) -> list[PaperResult]:
    """``paper_key`` one of the registered papers, or ``all``; ``sensitivity``: also each paper's headline claims
    under its variants."""
    from . import PAPERS, get_paper

    if paper_key == "all":
        if figure_ids:
            raise ScenarioError("--figure: give one paper, not 'all', to choose figures")
        keys = list(PAPERS)
    else:
        keys = [get_paper(paper_key).key]
    from ..paths import output_dir

    output_dir(out if out is not None else f"reproduce-{scale}", "out")  # before any run
    results = [run_paper(get_paper(k), scale, figure_ids, out, jobs, dask, progress, log, sensitivity) for k in keys]
    if paper_key == "all":
        from .report import write_index

        write_index(results, Path(out if out is not None else f"reproduce-{scale}"))
    return results

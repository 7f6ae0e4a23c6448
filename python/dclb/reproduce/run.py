"""``dclb reproduce``: plan a paper's figures at a scale, run what the store lacks, draw, judge, report.

Layout of the output directory (``--out``, default ``reproduce-<scale>``)::

    <out>/store/                 the result store of every run (shared by the papers; resumable)
    <out>/<paper>/figN.png       each figure, as drawn
    <out>/<paper>/figN.csv       the numbers behind it: one row per series, grid point and seed
    <out>/<paper>/figN.section.json  the figure's part of the report, so ``--figure`` keeps the others
    <out>/<paper>/report.html    claims beside figures, with a verdict computed from the data
    <out>/index.html             with ``all``: one line per paper, linking its report

Runs go through :func:`dclb.sweeps.execute`, so they run on local cores or a Dask cluster, every run is stored
as it finishes, and a second invocation runs only what is missing or failed. Progress shows one bar per figure
and one for the whole paper with an estimate of the time left.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ..errors import ScenarioError
from .data import RunReader, figure_frame
from .plan import PaperPlan, plan_paper
from .spec import Figure, Paper, Verdict


@dataclass
class FigureResult:
    figure: Figure
    image: Optional[Path]
    data: Optional[Path]
    verdicts: list[tuple[str, Verdict]]
    runs: int
    failed: int
    error: Optional[str] = None
    #: Set when some of the figure's runs offered well under their nominal load (see :func:`load_note`).
    load_note: Optional[str] = None


@dataclass
class PaperResult:
    paper: Paper
    scale: str
    out: Path
    figures: list[FigureResult] = field(default_factory=list)
    runs: int = 0
    ran: int = 0
    failed: int = 0
    wall_s: float = 0.0
    report: Optional[Path] = None


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


def run_paper(
    paper: Paper,
    scale: str = "quick",
    figure_ids: Sequence[str] = (),
    out: str | Path | None = None,
    jobs: int | None = None,
    dask: Any = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> PaperResult:
    """Runs and draws ``paper`` (its ``figure_ids``, default all) at ``scale`` into ``out``."""
    from ..store import open_store
    from ..sweeps import execute

    out = Path(out if out is not None else f"reproduce-{scale}")
    pp = plan_paper(paper, scale, figure_ids)
    store_dir = out / "store"
    result = PaperResult(paper=paper, scale=scale, out=out / paper.key, runs=len(pp.plan.points))
    t0 = time.perf_counter()
    bar = _Progress(pp) if progress else None
    if bar is not None:
        bar.__enter__()
    try:
        frame = execute(
            pp.plan,
            out=store_dir,
            jobs=jobs,
            dask=dask,
            on_start=lambda total, todo, where: log(f"{paper.key}: {total} runs at scale {scale}, {todo} to run on {where}") if not progress else None,
            on_reply=bar,
        )
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    result.wall_s = time.perf_counter() - t0
    result.ran = int((~frame["reused"]).sum()) if len(frame) else 0
    result.failed = int((frame["status"] == "failed").sum()) if len(frame) else 0
    store = open_store(store_dir)
    reader = RunReader(store)
    result.out.mkdir(parents=True, exist_ok=True)
    for fig in pp.figures:
        result.figures.append(_draw_and_judge(pp, fig, reader, result.out))
    from .report import write_report

    result.report = write_report(result, pp)
    return result


def _draw_and_judge(pp: PaperPlan, fig: Figure, reader: RunReader, where: Path) -> FigureResult:
    from ..plots import save
    from .draw import draw_figure

    frame = figure_frame(pp, fig, reader)
    runs = len(pp.runs_of(fig.id))
    failed = int((frame["status"] != "completed").sum()) if len(frame) else 0
    data = where / f"{fig.slug}.csv"
    frame.to_csv(data, index=False)
    verdicts: list[tuple[str, Verdict]] = []
    for claim in fig.claims:
        try:
            verdicts.append((claim.text, claim.check(frame)))
        except Exception as e:  # a verdict that cannot be computed must not lose the figure
            verdicts.append((claim.text, Verdict(f"verdict could not be computed: {type(e).__name__}: {e}", None)))
    image: Optional[Path] = None
    error = None
    try:
        image = save(draw_figure(pp, fig, frame, reader), where / f"{fig.slug}.png")
    except Exception as e:  # keep the rest of the report; the error is shown in place of the figure
        error = f"{type(e).__name__}: {e}"
    return FigureResult(fig, image, data, verdicts, runs, failed, error, load_note(frame, reader))


def load_note(frame: Any, reader: RunReader) -> Optional[str]:
    """One sentence when the figure's runs carried well under their nominal load while flows arrived (the
    summary's ``carried_load_ratio``): on heavy-tailed workloads a small scale's few flows never reach steady
    state, so a "load 0.5" point may have run at a fraction of it."""
    from ..summary import LOAD_SHORTFALL

    if not len(frame):
        return None
    ratios = []
    for run_id in frame.loc[frame["status"] == "completed", "run_id"]:
        value = ((reader.record(run_id) or {}).get("summary") or {}).get("carried_load_ratio")
        if isinstance(value, (int, float)) and value == value:
            ratios.append(float(value))
    low = [r for r in ratios if r < LOAD_SHORTFALL]
    if not low:
        return None
    ratios.sort()
    return (
        f"load reached: in {len(low)} of {len(ratios)} runs the fabric carried under {LOAD_SHORTFALL:.0%} of the nominal "
        f"load while flows arrived (all runs: {ratios[0]:.0%} to {ratios[-1]:.0%}, median {ratios[len(ratios) // 2]:.0%}); "
        "too few flows to reach steady state, so load-dependent claims are weak at this scale"
    )


def reproduce(
    paper_key: str,
    scale: str = "quick",
    figure_ids: Sequence[str] = (),
    out: str | Path | None = None,
    jobs: int | None = None,
    dask: Any = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> list[PaperResult]:
    """``paper_key`` one of the registered papers, or ``all``."""
    from . import PAPERS, get_paper

    if paper_key == "all":
        if figure_ids:
            raise ScenarioError("--figure: give one paper, not 'all', to choose figures")
        from . import available

        keys = available()
        missing = [k for k in PAPERS if k not in keys]
        if missing:
            log(f"not written yet, skipped: {', '.join(missing)}")
    else:
        keys = [get_paper(paper_key).key]
    results = [run_paper(get_paper(k), scale, figure_ids, out, jobs, dask, progress, log) for k in keys]
    if paper_key == "all":
        from .report import write_index

        write_index(results, Path(out if out is not None else f"reproduce-{scale}"))
    return results

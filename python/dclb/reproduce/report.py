"""The reproduction report: for each figure, the paper's claims in words beside dclb's figure and a verdict line
computed from the data. One self-contained HTML page per paper (figures embedded), plus an index for ``all``.

Each figure's section is also kept beside its image (``figN.section.json``, with the scale it was drawn at), so
``dclb reproduce PAPER --figure N`` redraws figure N and rebuilds a report that still holds every other figure
drawn earlier at that scale into the same directory, instead of a report of figure N alone.
"""

from __future__ import annotations

import base64
import html
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

if TYPE_CHECKING:
    from .plan import PaperPlan
    from .run import FigureResult, PaperResult

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0} td,th{border:1px solid #ddd;padding:.3em .6em;vertical-align:top;font-size:.92em}
th{background:#f4f4f4;text-align:left} .holds{color:#1a7f37;font-weight:bold} .fails{color:#b42318;font-weight:bold}
.unknown{color:#777} img{max-width:100%} .note{color:#555;font-size:.92em} code{background:#f4f4f4;padding:0 .2em}
"""


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _mark(holds: Any) -> str:
    if holds is True:
        return '<span class="holds">holds</span>'
    if holds is False:
        return '<span class="fails">does not hold</span>'
    return '<span class="unknown">cannot tell</span>'


def _series_table(pp: "PaperPlan", fig_id: str) -> str:
    fig = next(f for f in pp.figures if f.id == fig_id)
    rows = []
    for sw in fig.sweeps:
        grid = ", ".join(f"{k} = {list(v)}" for k, v in {**sw.axes, **sw.grid}.items()) or "(the file's grid)"
        if pp.scale in sw.seeds:
            n = sw.seeds[pp.scale]
            grid += f"; {n} seed{'s' if n != 1 else ''} per point at this scale"
        for s in sw.series:
            rows.append(f"<tr><td>{_esc(s.label)}</td><td><code>{_esc(sw.scenario)}</code></td><td><code>{_esc(' '.join(s.set))}</code></td><td>{_esc(grid)}</td></tr>")
    return "<table><tr><th>series</th><th>scenario file</th><th>overrides</th><th>grid</th></tr>" + "".join(rows) + "</table>"


def figure_section(fr: "FigureResult", pp: "PaperPlan") -> str:
    """One figure's part of the report: title, notes, the claims with their verdicts, the image, its runs."""
    fig = fr.figure
    parts = [f"<h2 id='{fig.slug}'>Fig. {_esc(fig.id)}: {_esc(fig.title)}</h2>"]
    if fig.note:
        parts.append(f"<p class='note'>{_esc(fig.note)}</p>")
    if fr.load_note:
        parts.append(f"<p class='fails'>{_esc(fr.load_note)}</p>")
    if fr.verdicts:
        rows = "".join(f"<tr><td>{_esc(text)}</td><td>{_esc(v.text)}</td><td>{_mark(v.holds)}</td></tr>" for text, v in fr.verdicts)
        parts.append(f"<table><tr><th>the paper says</th><th>dclb</th><th>verdict</th></tr>{rows}</table>")
    if fr.image is not None and fr.image.exists():
        data = base64.b64encode(fr.image.read_bytes()).decode()
        parts.append(f"<p><img alt='Fig. {_esc(fig.id)}' src='data:image/png;base64,{data}'></p>")
    elif fr.error:
        parts.append(f"<p class='fails'>the figure could not be drawn: {_esc(fr.error)}</p>")
    parts.append(f"<p class='note'>{fr.runs} runs, {fr.failed} not complete; numbers in <code>{_esc(fr.data.name if fr.data else '')}</code>.</p>")
    parts.append(_series_table(pp, fig.id))
    return "\n".join(parts)


@dataclass
class Section:
    """A figure's drawn report section, kept beside its image (``figN.section.json``) so that a later
    ``--figure`` invocation can rebuild the whole report without drawing the other figures again."""

    figure: str
    scale: str
    html: str
    holds: list[Optional[bool]]
    drawn: str

    @staticmethod
    def path(where: Path, slug: str) -> Path:
        return where / f"{slug}.section.json"

    def save(self, where: Path, slug: str) -> None:
        path = self.path(where, slug)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(asdict(self)), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, where: Path, slug: str) -> Optional["Section"]:
        """The stored section, or None when there is none or it cannot be read (it is then drawn again)."""
        try:
            return cls(**json.loads(cls.path(where, slug).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None


def report_sections(result: "PaperResult", pp: "PaperPlan") -> tuple[list[Section], list[str]]:
    """The report's figures, in the paper's order: those drawn now, and those an earlier invocation drew at the
    same scale into the same directory (``--figure`` draws only some). Also the ids of figures not drawn yet."""
    now = time.strftime("%Y-%m-%d %H:%M:%S")
    fresh = {}
    for fr in result.figures:
        sec = Section(fr.figure.id, result.scale, figure_section(fr, pp), [v.holds for _, v in fr.verdicts], now)
        sec.save(result.out, fr.figure.slug)
        fresh[fr.figure.id] = sec
    sections, missing = [], []
    for fig in result.paper.figures:
        sec = fresh.get(fig.id) or Section.load(result.out, fig.slug)
        if sec is not None and sec.scale == result.scale and sec.figure == fig.id:
            sections.append(sec)
        else:
            missing.append(fig.id)
    return sections, missing


def build_report(result: "PaperResult", pp: "PaperPlan") -> str:
    paper = result.paper
    sections, missing = report_sections(result, pp)
    held = [h for sec in sections for h in sec.holds]
    n_hold, n_fail, n_unknown = held.count(True), held.count(False), held.count(None)
    scale = paper.scales[result.scale]
    drawn_now = {fr.figure.id for fr in result.figures}
    earlier = [sec for sec in sections if sec.figure not in drawn_now]
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>dclb reproduce {_esc(paper.key)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_esc(paper.title)}</h1><p class='note'>{_esc(paper.citation)}</p>",
        f"<p><b>Scale</b> {_esc(result.scale)} ({scale.seeds} seed{'s' if scale.seeds != 1 else ''} per point"
        f"{' unless a figure says otherwise' if any(result.scale in sw.seeds for f in pp.figures for sw in f.sweeps) else ''}; "
        f"overrides <code>{_esc(' '.join(scale.set) or 'none')}</code>{'; every grid trimmed to its ends' if scale.trim else ''}). "
        f"This invocation: {result.runs} runs ({result.ran} run now, {result.runs - result.ran} reused from the store, {result.failed} failed), "
        f"{result.wall_s:.0f} s.</p>",
    ]
    if earlier:
        when = ", ".join(f"Fig. {_esc(sec.figure)} ({_esc(sec.drawn)})" for sec in earlier)
        parts.append(f"<p class='note'>Drawn by an earlier invocation into this directory, at the same scale: {when}.</p>")
    if missing:
        parts.append(f"<p class='note'>Not drawn yet at this scale: {', '.join('Fig. ' + _esc(m) for m in missing)}.</p>")
    parts += [
        f"<p><b>Claims</b>: {n_hold} hold, {n_fail} do not hold, {n_unknown} cannot be told from these runs.</p>",
        f"<h2>Setup</h2><p>{_esc(paper.setup)}</p><p><b>Transport.</b> {_esc(paper.transport)}</p>",
        f"<p class='note'>Scenario files: <code>{_esc(paper.scenario_path(''))}</code> (readable TOML; each runs with "
        "<code>dclb run</code> or <code>dclb sweep</code> on its own).</p>",
    ]
    parts += [sec.html for sec in sections]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(result: "PaperResult", pp: "PaperPlan") -> Path:
    path = result.out / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(build_report(result, pp), encoding="utf-8")
    tmp.replace(path)
    return path


def write_index(results: Sequence["PaperResult"], out: Path) -> Path:
    rows = []
    for r in results:
        held = [v.holds for f in r.figures for _, v in f.verdicts]
        rel = r.report.relative_to(out) if r.report else ""
        rows.append(
            f"<tr><td><a href='{_esc(rel)}'>{_esc(r.paper.key)}</a></td><td>{_esc(r.paper.title)}</td><td>{len(r.figures)}</td>"
            f"<td>{r.runs}</td><td>{held.count(True)} / {held.count(False)} / {held.count(None)}</td><td>{r.wall_s:.0f} s</td></tr>"
        )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>dclb reproduce all</title><style>{_STYLE}</style></head><body>"
        "<h1>dclb reproduce all</h1><table><tr><th>paper</th><th>title</th><th>figures</th><th>runs</th>"
        "<th>claims hold / not / cannot tell</th><th>wall time</th></tr>" + "".join(rows) + "</table></body></html>"
    )
    path = out / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path

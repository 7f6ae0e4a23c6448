"""The reproduction report: for each figure, what was run, the paper's claims in words beside dclb's figure, and
for each claim a verdict and its reason computed from the data. One self-contained HTML page per paper (figures
embedded) with a summary table of every claim, ``summary.csv`` beside it (one row per claim), and for ``all`` an
index page and a ``summary.csv`` over the five papers.

With ``--sensitivity`` the report adds a section on the headline claims under other settings and readings
(:mod:`dclb.reproduce.sensitivity`, which writes it and ``sensitivity.csv``), kept for later invocations at the
same scale; the summary tags the headline claims in any case.

Every report states the verdict rule (:data:`dclb.reproduce.verdict.RULE`) and what each outcome and reason means,
so that a verdict can be read without the code.

Each figure's section is also kept beside its image (``figN.section.json``, with the scale it was drawn at and its
summary rows), so ``dclb reproduce PAPER --figure N`` redraws figure N and rebuilds a report, a summary and a CLI
summary that still hold every other figure drawn earlier at that scale into the same directory.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from .verdict import CONFIDENCE, MIN_SEEDS, REASON_MEANING, REPRODUCED_FRACTION, RULE, Outcome, Reason

if TYPE_CHECKING:
    from .plan import PaperPlan
    from .run import FigureResult, Header, PaperResult

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0} td,th{border:1px solid #ddd;padding:.3em .6em;vertical-align:top;font-size:.9em}
th{background:#f4f4f4;text-align:left} .reproduced{color:#1a7f37;font-weight:bold} .opposite{color:#b42318;font-weight:bold}
.smaller{color:#b54708;font-weight:bold} .indistinguishable{color:#6941c6;font-weight:bold} .unknown{color:#777}
img{max-width:100%} .note{color:#555;font-size:.92em} code{background:#f4f4f4;padding:0 .2em} .header{background:#f8f8f8;padding:.5em}
.concession{font-size:.8em;color:#b54708;border:1px solid #b54708;border-radius:3px;padding:0 .3em;margin-left:.3em}
.headline{font-size:.8em;color:#175cd3;border:1px solid #175cd3;border-radius:3px;padding:0 .3em;margin-left:.3em}
h3{font-size:1.05em;margin-top:1.5em}
td.num{text-align:right;white-space:nowrap}
"""

#: The columns of ``summary.csv`` (one row per claim).
SUMMARY_COLUMNS = (
    "paper",
    "figure",
    "claim",
    "concession",
    "verdict",
    "reason",
    "reason_detail",
    "paper_number",
    "dclb_effect",
    "dclb_low",
    "dclb_high",
    "effect_unit",
    "seeds",
    "points",
    "line",
)

_OUTCOME_CLASS = {
    Outcome.REPRODUCED.value: "reproduced",
    Outcome.SMALLER.value: "smaller",
    Outcome.INDISTINGUISHABLE.value: "indistinguishable",
    Outcome.OPPOSITE.value: "opposite",
}

_OUTCOME_MEANING = {
    Outcome.REPRODUCED: f"significant in the claimed direction, and at least {REPRODUCED_FRACTION:.0%} of the paper's number, or inside dclb's band for the words",
    Outcome.SMALLER: f"significant in the paper's direction but under {REPRODUCED_FRACTION:.0%} of its number",
    Outcome.INDISTINGUISHABLE: f"the {CONFIDENCE:.0%} interval over seeds contains no difference (or straddles the band's edge)",
    Outcome.OPPOSITE: "significantly the other way (or wholly outside the band)",
    Outcome.CANNOT_TELL: f"no data, or fewer than {MIN_SEEDS} seeds (noise unknown)",
    Outcome.NOT_TESTABLE: "a quantity a simulator cannot measure or that cannot differ by construction, or one that needs what the paper does not give",
}


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _mark(verdict: str) -> str:
    return f'<span class="{_OUTCOME_CLASS.get(verdict, "unknown")}">{_esc(verdict)}</span>'


def rule_html() -> str:
    """How to read a verdict: the rule, and the meaning of each outcome and reason."""
    outcomes = "".join(f"<tr><td>{_mark(o.value)}</td><td>{_esc(m)}</td></tr>" for o, m in _OUTCOME_MEANING.items())
    reasons = "".join(f"<tr><td><b>{_esc(r.value)}</b></td><td>{_esc(m)}</td></tr>" for r, m in REASON_MEANING.items())
    return (
        "<h2>How to read a verdict</h2>"
        f"<p>{_esc(RULE)}</p>"
        "<table><tr><th>verdict</th><th>means</th></tr>" + outcomes + "</table>"
        "<table><tr><th>reason</th><th>means</th></tr>" + reasons + "</table>"
        "<p class='note'>A claim marked <span class='concession'>concession</span> is one the paper concedes (a weakness of "
        "its scheme or a limit of its result); one marked <span class='headline'>headline</span> carries the paper's result, and "
        "<code>--sensitivity</code> judges it under the settings the paper does not state and other readings of its scheme. "
        "The rule and its tolerances: <code>python/dclb/reproduce/verdict.py</code>; "
        "docs/reproduce.md.</p>"
    )


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


def header_text(h: "Header", runs: int, failed: int) -> list[str]:
    """The facts of a figure's header, one phrase each (also what the CLI could print)."""
    from ..summary import LOAD_SHORTFALL

    parts = [f"{runs} runs" + (f" ({failed} failed or missing)" if failed else ", all complete")]
    if h.flows is not None:
        lo, hi = h.flows
        what = "measured flows per run" if h.windowed else "flows per run"
        parts.append(f"{what} {lo:,}" + (f"-{hi:,}" if hi != lo else "") + " (the runs' records)")
    if h.seeds:
        parts.append(f"{len(h.seeds)} seed{'s' if len(h.seeds) != 1 else ''} per point ({', '.join(str(s) for s in h.seeds)})")
    loads = [(nominal, ratio, n) for nominal, ratio, n in h.load if nominal is not None]
    starts = {
        "stationary": "a stationary fabric (each poisson source's steady-state flows pre-loaded, then a 20 ms warm-up)",
        "warm-up": "an empty fabric and a long warm-up",
        "empty": "an empty fabric, measured from the first arrival: not at load on a heavy-tailed workload",
    }
    if h.start:
        parts.append("started from " + " and ".join(starts.get(s, s) for s in h.start.split(" and ")))
    where = "over the whole fabric in the measurement window" if h.windowed else "while the flows arrived"
    if loads:
        short = [f"{nominal:g}" for nominal, ratio, _ in loads if ratio < LOAD_SHORTFALL]
        verdict = (
            "the nominal load was reached at every point" if not short
            else f"the nominal load was not reached (under {LOAD_SHORTFALL:.0%} of it) at {', '.join(short)}"
        )
        parts.append(
            f"load reached {where} (carried / nominal, median over the runs): "
            + ", ".join(f"{nominal:g}: {ratio:.0%} ({nominal * ratio:.2f})" for nominal, ratio, n in loads)
            + f"; {verdict}"
        )
    elif h.load:
        ratios = [ratio for _, ratio, _ in h.load]
        parts.append(f"load reached {where}: median {ratios[0]:.0%} of the nominal load")
    if h.lowest is not None and h.load:
        parts.append(f"lowest run {h.lowest:.0%} of its nominal load")
    if h.censored:
        parts.append(f"{h.censored:,} measured flows still running when their runs stopped (a drain after the window; counted as censored)")
    if h.timeseries_seed is not None:
        parts.append(f"time series show seed {h.timeseries_seed}")
    return parts


def figure_section(fr: "FigureResult", pp: "PaperPlan") -> str:
    """One figure's part of the report: title, what was run, notes, the claims with their verdicts and reasons, the
    image, its runs."""
    fig = fr.figure
    parts = [f"<h2 id='{fig.slug}'>Fig. {_esc(fig.id)}: {_esc(fig.title)}</h2>"]
    h = fr.header
    facts = "; ".join(_esc(p) for p in header_text(h, fr.runs, fr.failed))
    paper_scale = f"<br>Paper scale: <code>{_esc(h.command)}</code> ({_esc(h.cost)})" if h.command else ""
    parts.append(f"<p class='header'><b>Run</b>: {facts}.{paper_scale}</p>")
    if fig.note:
        parts.append(f"<p class='note'>{_esc(fig.note)}</p>")
    if fr.load_note:
        parts.append(f"<p class='opposite'>{_esc(fr.load_note)}</p>")
    if fr.judgements:
        rows = []
        for j in fr.judgements:
            tag = " <span class='concession'>concession</span>" if j.claim.concession else ""
            rows.append(f"<tr><td>{_esc(j.claim.text)}{tag}</td><td>{_esc(j.verdict.text)}</td><td>{_mark(j.outcome.value)}</td><td>{_esc(j.reason_text)}</td></tr>")
        parts.append(f"<table><tr><th>the paper says</th><th>dclb</th><th>verdict</th><th>reason</th></tr>{''.join(rows)}</table>")
    if fr.image is not None and fr.image.exists():
        data = base64.b64encode(fr.image.read_bytes()).decode()
        parts.append(f"<p><img alt='Fig. {_esc(fig.id)}' src='data:image/png;base64,{data}'></p>")
    elif fr.error:
        parts.append(f"<p class='opposite'>the figure could not be drawn: {_esc(fr.error)}</p>")
    parts.append(
        f"<p class='note'>Numbers in <code>{_esc(fr.data.name if fr.data else '')}</code> (one row per series, grid point and seed). "
        "Error bars: mean over seeds with a "
        f"{CONFIDENCE:.0%} t interval, clipped to what the metric can be; none with fewer than {MIN_SEEDS} seeds.</p>"
    )
    parts.append(_series_table(pp, fig.id))
    return "\n".join(parts)


@dataclass
class Section:
    """A figure's drawn report section, kept beside its image (``figN.section.json``) so that a later
    ``--figure`` invocation can rebuild the whole report and summary without drawing the other figures again."""

    figure: str
    scale: str
    html: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    drawn: str = ""

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
            data = json.loads(cls.path(where, slug).read_text(encoding="utf-8"))
            sec = cls(**data)
        except (OSError, ValueError, TypeError):
            return None
        ok = isinstance(sec.rows, list) and all(isinstance(r, dict) and "text" in r for r in sec.rows)
        return sec if ok else None


def _rows(fr: "FigureResult", paper_key: str, headline: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    out = []
    for j in fr.judgements:
        row = j.row()
        out.append(
            {
                "paper": paper_key,
                "figure": fr.figure.id,
                **{k: row[k] for k in ("claim", "concession", "verdict", "reason", "reason_detail")},
                "headline": row["claim"] in headline,
                "paper_number": row["paper"],
                **{k: row[k] for k in ("dclb_effect", "dclb_low", "dclb_high", "effect_unit", "seeds", "points", "line")},
                "holds": row["holds"],
                "text": j.text,
            }
        )
    return out


def report_sections(result: "PaperResult", pp: "PaperPlan") -> tuple[list[Section], list[str]]:
    """The report's figures, in the paper's order: those drawn now, and those an earlier invocation drew at the
    same scale into the same directory (``--figure`` draws only some). Also the ids of figures not drawn yet."""
    from .sensitivity import headline_texts

    now = time.strftime("%Y-%m-%d %H:%M:%S")
    fresh = {}
    headlines = headline_texts(result.paper.key)
    for fr in result.figures:
        if fr.earlier:
            continue
        sec = Section(fr.figure.id, result.scale, figure_section(fr, pp), _rows(fr, result.paper.key, frozenset(headlines.get(fr.figure.id, ()))), now)
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


def _fmt_effect(row: dict[str, Any]) -> str:
    e = row.get("dclb_effect")
    if e is None:
        return ""
    unit = row.get("effect_unit") or ""
    sign = "+" if unit == "%" else ""
    text = f"{e:{sign}.1f}{'%' if unit == '%' else ''}" if unit == "%" else f"{e:.3g}"
    if row.get("dclb_low") is not None and row.get("dclb_high") is not None:
        lo, hi = row["dclb_low"], row["dclb_high"]
        text += f" [{lo:+.1f}, {hi:+.1f}]" if unit == "%" else f" [{lo:.3g}, {hi:.3g}]"
    if unit and unit != "%":
        text += f" {unit}"
    return text


def counts_html(rows: Sequence[dict[str, Any]]) -> str:
    """Counts of the rows by verdict and by reason."""
    by_verdict: dict[str, int] = {}
    by_reason: dict[str, int] = {}
    for r in rows:
        by_verdict[r["verdict"]] = by_verdict.get(r["verdict"], 0) + 1
        by_reason[r["reason"]] = by_reason.get(r["reason"], 0) + 1
    v = ", ".join(f"{n} {_mark(k)}" for k, n in sorted(by_verdict.items(), key=lambda kv: -kv[1]))
    r = ", ".join(f"{n} {_esc(k)}" for k, n in sorted(by_reason.items(), key=lambda kv: -kv[1]))
    return f"<p><b>{len(rows)} claims</b>: {v or 'none'}.<br><b>Reasons</b>: {r or 'none'}.</p>"


def summary_table(rows: Sequence[dict[str, Any]], with_paper: bool = False) -> str:
    head = ("<th>paper</th>" if with_paper else "") + "<th>fig.</th><th>claim</th><th>verdict</th><th>reason</th><th>paper</th><th>dclb</th><th>seeds</th><th>points</th>"
    body = []
    for r in rows:
        tag = " <span class='concession'>concession</span>" if r.get("concession") else ""
        tag += " <span class='headline'>headline</span>" if r.get("headline") else ""
        link = f"<a href='#fig{''.join(c if c.isalnum() else '_' for c in str(r['figure']))}'>{_esc(r['figure'])}</a>" if not with_paper else _esc(r["figure"])
        reason = _esc(r["reason"]) + (f": {_esc(r['reason_detail'])}" if r.get("reason_detail") else "")
        body.append(
            "<tr>"
            + (f"<td>{_esc(r['paper'])}</td>" if with_paper else "")
            + f"<td>{link}</td><td>{_esc(r['claim'])}{tag}</td><td>{_mark(r['verdict'])}</td><td>{reason}</td>"
            f"<td class='num'>{_esc(r.get('paper_number') or '')}</td><td class='num'>{_esc(_fmt_effect(r))}</td>"
            f"<td class='num'>{_esc(r.get('seeds', ''))}</td><td class='num'>{_esc(r.get('points', ''))}</td></tr>"
        )
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def write_summary_csv(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(SUMMARY_COLUMNS), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in SUMMARY_COLUMNS})
    tmp.replace(path)
    return path


def build_report(result: "PaperResult", pp: "PaperPlan", sections: Sequence[Section], missing: Sequence[str]) -> str:
    paper = result.paper
    rows = [r for sec in sections for r in sec.rows]
    scale = paper.scales[result.scale]
    drawn_now = {fr.figure.id for fr in result.figures if not fr.earlier}
    earlier = [sec for sec in sections if sec.figure not in drawn_now]
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>dclb reproduce {_esc(paper.key)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_esc(paper.title)}</h1><p class='note'>{_esc(paper.citation)}</p>",
        f"<p><b>Scale</b> {_esc(result.scale)} ({scale.seeds} seed{'s' if scale.seeds != 1 else ''} per point"
        f"{' unless a figure says otherwise' if any(result.scale in sw.seeds for f in pp.figures for sw in f.sweeps) else ''}; "
        f"overrides <code>{_esc(' '.join(scale.set) or 'none')}</code>{'; every grid trimmed to its ends' if scale.trim else ''}). "
        f"This invocation: {result.runs} runs ({result.ran} run now, {result.runs - result.ran} reused from the store, {result.failed} failed), "
        f"{result.wall_s:.0f} s, then {result.report_s:.0f} s to draw and judge the figures. Each figure's header says what its runs were and what the paper scale costs.</p>",
    ]
    if earlier:
        when = ", ".join(f"Fig. {_esc(sec.figure)} ({_esc(sec.drawn)})" for sec in earlier)
        parts.append(f"<p class='note'>Drawn by an earlier invocation into this directory, at the same scale: {when}.</p>")
    if missing:
        parts.append(f"<p class='note'>Not drawn yet at this scale: {', '.join('Fig. ' + _esc(m) for m in missing)}.</p>")
    parts += [
        "<h2>Summary</h2>",
        counts_html(rows),
        "<p class='note'>One row per claim; <code>summary.csv</code> beside this page has the same rows. dclb's effect is that of "
        "the deciding comparison (the single one, the pair that misses by most, or the paper's best case), with its interval.</p>",
        summary_table(rows),
        _sensitivity_part(result),
        rule_html(),
        f"<h2>Setup</h2><p>{_esc(paper.setup)}</p><p><b>Transport.</b> {_esc(paper.transport)}</p>",
        f"<p class='note'>Scenario files: <code>{_esc(paper.scenario_path(''))}</code> (readable TOML; each runs with "
        "<code>dclb run</code> or <code>dclb sweep</code> on its own).</p>",
    ]
    parts += [sec.html for sec in sections]
    parts.append("</body></html>")
    return "\n".join(parts)


def _sensitivity_part(result: "PaperResult") -> str:
    """The sensitivity section: this invocation's (written beside the report with ``sensitivity.csv``), or the one
    an earlier ``--sensitivity`` invocation at the same scale left in the directory, marked as such."""
    from .sensitivity_report import SavedSection, write_outputs

    if getattr(result, "sensitivity", None) is not None:
        return write_outputs(result.sensitivity, result.out).html
    saved = SavedSection.load(result.out)
    if saved is None or saved.scale != result.scale:
        return ""
    return f"<p class='note'>The sensitivity section below was drawn by an earlier <code>--sensitivity</code> invocation ({_esc(saved.drawn)}).</p>" + saved.html


def write_report(result: "PaperResult", pp: "PaperPlan") -> Path:
    """Writes ``report.html`` and ``summary.csv``; adds the figures kept from earlier invocations to
    ``result.figures`` (so that what the CLI prints is what the report holds) and their rows to ``result.rows``."""
    from .run import FigureResult, SavedLine

    sections, missing = report_sections(result, pp)
    page = build_report(result, pp, sections, missing)
    path = result.out / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)
    rows = [r for sec in sections for r in sec.rows]
    write_summary_csv(rows, result.out / "summary.csv")
    result.rows = rows
    now = {fr.figure.id: fr for fr in result.figures}
    figures = []
    for sec in sections:
        if sec.figure in now:
            figures.append(now[sec.figure])
            continue
        fig = result.paper.figure(sec.figure)
        saved = [(r["claim"], SavedLine(r["text"], r.get("holds"))) for r in sec.rows]
        figures.append(FigureResult(fig, None, None, [], 0, 0, earlier=True, saved=saved))
    figures += [fr for fr in result.figures if fr.figure.id not in {sec.figure for sec in sections}]
    result.figures = figures
    return path


def write_index(results: Sequence["PaperResult"], out: Path) -> Path:
    """The index of ``all``: one line per paper with its counts, the reasons per paper, every claim, and
    ``summary.csv`` over the five."""
    rows: list[dict[str, Any]] = [r for res in results for r in getattr(res, "rows", [])]
    lines = []
    verdicts = [o.value for o in Outcome]
    for res in results:
        own = getattr(res, "rows", [])
        counts = [sum(1 for r in own if r["verdict"] == v) for v in verdicts]
        rel = res.report.relative_to(out) if res.report else ""
        lines.append(
            f"<tr><td><a href='{_esc(rel)}'>{_esc(res.paper.key)}</a></td><td>{_esc(res.paper.title)}</td><td>{len(res.figures)}</td>"
            f"<td>{res.runs}</td>" + "".join(f"<td class='num'>{n}</td>" for n in counts) + f"<td>{res.wall_s:.0f} s</td></tr>"
        )
    reasons = [r.value for r in Reason]
    reason_rows = "".join(
        f"<tr><td>{_esc(reason)}</td>" + "".join(f"<td class='num'>{sum(1 for r in getattr(res, 'rows', []) if r['reason'] == reason)}</td>" for res in results) + "</tr>"
        for reason in reasons
    )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>dclb reproduce all</title><style>{_STYLE}</style></head><body>"
        "<h1>dclb reproduce all</h1>"
        + counts_html(rows)
        + "<table><tr><th>paper</th><th>title</th><th>figures</th><th>runs</th>"
        + "".join(f"<th>{_esc(v)}</th>" for v in verdicts)
        + "<th>wall time</th></tr>"
        + "".join(lines)
        + "</table><h2>Reasons per paper</h2><table><tr><th>reason</th>"
        + "".join(f"<th>{_esc(res.paper.key)}</th>" for res in results)
        + "</tr>"
        + reason_rows
        + "</table><h2>Every claim</h2><p class='note'><code>summary.csv</code> beside this page has the same rows.</p>"
        + summary_table(rows, with_paper=True)
        + rule_html()
        + "</body></html>"
    )
    path = out / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    write_summary_csv(rows, out / "summary.csv")
    return path

"""The sensitivity section of a paper's report and ``sensitivity.csv`` (:mod:`dclb.reproduce.sensitivity` plans,
runs and judges; this module writes).

Per headline figure, one table: a row per variant (the shipped setting first; skipped and not-applicable variants
with why), a column per headline claim with its verdict and dclb's effect with its interval, and two columns for the
paper's scheme against the baseline on a short-flow and a long-flow metric under that variant, marked better or worse
for the scheme (significantly, or by the mean when one seed leaves the noise unknown). ``sensitivity.csv`` has the same
content as one row per claim and variant (:data:`CSV_COLUMNS`). The section is kept beside the report
(``sensitivity.section.json``) so that a later invocation without ``--sensitivity`` at the same scale still shows it.
"""

from __future__ import annotations

import csv
import html
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .sensitivity import INVALID, JUDGED, NOT_APPLICABLE, READING, SETTING, SKIPPED, Cell, ClaimSensitivity, SensitivityResult
from .spec import Metric
from .verdict import LOG, Effect, Outcome, Verdict


#: The columns of ``sensitivity.csv``: one row per headline claim and variant (the shipped setting first).
CSV_COLUMNS = (
    "paper",
    "figure",
    "claim",
    "variant",
    "kind",
    "group",
    "status",
    "overrides",
    "verdict",
    "holds",
    "dclb_effect",
    "dclb_low",
    "dclb_high",
    "effect_unit",
    "seeds",
    "scheme",
    "baseline",
    "short_metric",
    "short_effect",
    "short_low",
    "short_high",
    "short_unit",
    "long_metric",
    "long_effect",
    "long_low",
    "long_high",
    "long_unit",
    "claim_reason",
    "note",
    "line",
)


def _effect_numbers(e: Optional[Effect]) -> tuple[Optional[float], Optional[float], Optional[float], str]:
    """(effect, low, high, unit) as the summary gives them: a percent change for a log ratio, else the difference
    or value in the metric's unit."""
    if e is None or e.n == 0:
        return None, None, None, ""
    known = e.known
    if e.scale == LOG:
        pct = e.percent()
        assert pct is not None
        return _r(pct[0]), _r(pct[1]) if known else None, _r(pct[2]) if known else None, "%"
    return _r(e.mean), _r(e.lo) if known else None, _r(e.hi) if known else None, e.unit or e.scale


def _r(x: float) -> Optional[float]:
    return None if x is None or not math.isfinite(x) else round(float(x), 4)


def better(metric: Metric) -> int:
    """+1 when a higher value of ``metric`` is better (a rate in Gbps), -1 when lower is (times, rates of misses,
    shares)."""
    return 1 if metric.key.endswith("_gbps") else -1


def csv_rows(result: SensitivityResult) -> list[dict[str, Any]]:
    rows = []
    key = result.splan.paper.key
    for cs in result.claims:
        h = cs.headline
        for cell in cs.cells:
            v = cell.variant
            eff = _effect_numbers(cell.verdict.effect if cell.verdict else None)
            sh = _effect_numbers(cell.short.effect if cell.short else None)
            lo = _effect_numbers(cell.long.effect if cell.long else None)
            rows.append(
                {
                    "paper": key,
                    "figure": cs.figure,
                    "claim": cs.claim.text,
                    "variant": cell.label,
                    "kind": "" if v is None else v.kind,
                    "group": "" if v is None else v.group,
                    "status": cell.status if not cell.why else f"{cell.status}: {cell.why}" if cell.status != JUDGED else cell.status,
                    "overrides": "" if v is None else v.overrides_text,
                    "verdict": cell.verdict.outcome.value if cell.verdict else "",
                    "holds": cell.verdict.holds if cell.verdict else None,
                    "dclb_effect": eff[0],
                    "dclb_low": eff[1],
                    "dclb_high": eff[2],
                    "effect_unit": eff[3],
                    "seeds": cell.verdict.seeds if cell.verdict else None,
                    "scheme": h.scheme,
                    "baseline": h.baseline,
                    "short_metric": h.short.key,
                    "short_effect": sh[0],
                    "short_low": sh[1],
                    "short_high": sh[2],
                    "short_unit": sh[3],
                    "long_metric": h.long.key,
                    "long_effect": lo[0],
                    "long_low": lo[1],
                    "long_high": lo[2],
                    "long_unit": lo[3],
                    "claim_reason": cs.judgement.reason_text,
                    "note": "" if v is None else v.note,
                    "line": cell.verdict.text if cell.verdict else "",
                }
            )
    return rows


def write_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(CSV_COLUMNS), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in CSV_COLUMNS})
    tmp.replace(path)
    return path


def _esc(x: Any) -> str:
    return html.escape(str(x))


_CLASS = {Outcome.REPRODUCED: "reproduced", Outcome.SMALLER: "smaller", Outcome.INDISTINGUISHABLE: "indistinguishable", Outcome.OPPOSITE: "opposite"}


def _tradeoff_html(v: Optional[Verdict], metric: Metric) -> str:
    """An effect of the scheme against the baseline, and whether it is better or worse for the scheme."""
    if v is None or v.effect is None or v.effect.n == 0:
        return "<span class='unknown'>no data</span>"
    e = v.effect
    good = better(metric)
    if e.known and e.sign != 0:
        word, css = ("better", "reproduced") if e.sign == good else ("worse", "opposite")
    elif e.known:
        word, css = "within noise", "indistinguishable"
    else:
        word, css = ("better" if e.hint == good else "worse" if e.hint else "same") + " by the mean", "unknown"
    return f"{_esc(e.text())} <span class='{css}'>({_esc(word)})</span>"


def _cell_html(cell: Cell) -> str:
    if cell.verdict is None:
        return f"<span class='unknown'>{_esc(cell.status)}</span>"
    o = cell.verdict.outcome
    e = cell.verdict.effect
    effect = f"<br>{_esc(e.text())}" if e is not None and e.n else ""
    return f"<span class='{_CLASS.get(o, 'unknown')}'>{_esc(o.value)}</span>{effect}"


def section_html(result: SensitivityResult) -> str:
    """The report's sensitivity section: per headline figure, its claims with their reasons and a table of the
    variants (rows) against the claims (columns), with the short- and long-flow effects of the scheme."""
    sp = result.splan
    judged = [vp for vp in sp.variants if vp.status == JUDGED]
    counts = {k: sum(1 for vp in sp.variants if vp.status == k) for k in (JUDGED, NOT_APPLICABLE, SKIPPED, INVALID)}
    kinds = {k: sum(1 for vp in judged if vp.variant.kind == k) for k in (SETTING, READING)}
    seeds = sorted({e.seed for e in (sp.shipped.entries if sp.shipped is not None else [])})
    parts = [
        "<h2 id='sensitivity'>Sensitivity: the headline claims under other settings and readings</h2>",
        f"<p>Scale {_esc(sp.scale)}, {len(seeds)} seed{'s' if len(seeds) != 1 else ''} per point. {len(sp.sensitivity.variants)} variants declared: "
        f"{counts[JUDGED]} run ({kinds[SETTING]} settings, {kinds[READING]} readings), {counts[NOT_APPLICABLE]} not applicable, {counts[SKIPPED]} skipped, "
        f"{counts[INVALID]} invalid. This invocation: {result.runs} runs ({result.ran} run now, {result.runs - result.ran} reused from the store, "
        f"{result.failed} failed), {result.wall_s:.0f} s. Only the points and series the headline claims read are run, each variant "
        "changed alone from the shipped setting; a setting applies to every series, a reading to the paper's scheme only. "
        "<code>sensitivity.csv</code> beside this page has one row per claim and variant.</p>",
    ]
    if not sp.headlines:
        parts.append("<p class='note'>No headline figure among the figures drawn.</p>")
    by_fig: dict[str, list[ClaimSensitivity]] = {}
    for cs in result.claims:
        by_fig.setdefault(cs.figure, []).append(cs)
    for hf in sp.headlines:
        h = hf.headline
        rows = by_fig.get(hf.figure.id, [])
        parts.append(f"<h3>Fig. {_esc(hf.figure.id)}: {_esc(hf.figure.title)}</h3>")
        if h.why:
            parts.append(f"<p class='note'>Why these claims: {_esc(h.why)}</p>")
        items = []
        for i, cs in enumerate(rows, 1):
            held, n = cs.holds_under
            items.append(f"<li><b>[{i}]</b> {_esc(cs.claim.text)}: as shipped <b>{_esc(cs.judgement.outcome.value)}</b>; reason: {_esc(cs.judgement.reason_text)}; reproduced under {held} of {n} variants run.</li>")
        parts.append("<ol style='list-style:none;padding-left:0'>" + "".join(items) + "</ol>")
        head = "<tr><th>variant</th><th>kind</th>" + "".join(f"<th>[{i}]</th>" for i in range(1, len(rows) + 1))
        head += f"<th>{_esc(h.short.label)}: {_esc(h.scheme)} vs {_esc(h.baseline)}</th><th>{_esc(h.long.label)}: {_esc(h.scheme)} vs {_esc(h.baseline)}</th></tr>"
        body = []
        if rows:
            for j, first in enumerate(rows[0].cells):
                v = first.variant
                kind = "" if v is None else v.kind
                name = f"<b>{_esc(first.label)}</b>" if v is None else _esc(first.label)
                if v is not None and v.overrides_text and v.overrides_text != v.label:
                    name += f"<br><code>{_esc(v.overrides_text)}</code>"
                if v is not None and v.note:
                    name += f"<br><span class='note'>{_esc(v.note)}</span>"
                if first.status != JUDGED:
                    body.append(f"<tr><td>{name}</td><td>{_esc(kind)}</td><td colspan='{len(rows) + 2}' class='note'>{_esc(first.status)}: {_esc(first.why)}</td></tr>")
                    continue
                cells = "".join(f"<td>{_cell_html(cs.cells[j])}</td>" for cs in rows)
                body.append(f"<tr><td>{name}</td><td>{_esc(kind)}</td>{cells}<td>{_tradeoff_html(first.short, h.short)}</td><td>{_tradeoff_html(first.long, h.long)}</td></tr>")
        parts.append(f"<table>{head}{''.join(body)}</table>")
        from .claims import points_text

        where = points_text([h.at] if isinstance(h.at, Mapping) else list(h.at))
        parts.append(
            f"<p class='note'>Last two columns: {_esc(h.scheme)} against {_esc(h.baseline)}{_esc(where)} (per-seed mean over the points), paired per "
            "seed as the verdicts are; 'better' or 'worse' for the scheme when significant, by the mean when the noise is unknown.</p>"
        )
    return "\n".join(parts)


@dataclass
class SavedSection:
    """The sensitivity section as an invocation drew it, kept beside the report (``sensitivity.section.json``)
    so that a later invocation without ``--sensitivity`` at the same scale keeps it in the report."""

    scale: str
    html: str
    drawn: str = ""

    @staticmethod
    def path(where: Path) -> Path:
        return where / "sensitivity.section.json"

    def save(self, where: Path) -> None:
        p = self.path(where)
        tmp = p.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"scale": self.scale, "html": self.html, "drawn": self.drawn}), encoding="utf-8")
        tmp.replace(p)

    @classmethod
    def load(cls, where: Path) -> Optional["SavedSection"]:
        try:
            data = json.loads(cls.path(where).read_text(encoding="utf-8"))
            return cls(str(data["scale"]), str(data["html"]), str(data.get("drawn", "")))
        except (OSError, ValueError, KeyError, TypeError):
            return None


def write_outputs(result: SensitivityResult, where: Path) -> SavedSection:
    """Writes ``sensitivity.csv`` and the section beside the report; returns the section."""
    where.mkdir(parents=True, exist_ok=True)
    write_csv(csv_rows(result), where / "sensitivity.csv")
    sec = SavedSection(result.splan.scale, section_html(result), time.strftime("%Y-%m-%d %H:%M:%S"))
    sec.save(where)
    return sec

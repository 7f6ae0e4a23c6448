"""One self-contained HTML page about a result store: the grid, summary tables and the default figures.

The page has no external resources (no scripts, fonts or style sheets from elsewhere): figures are PNG
images embedded as base64 ``data:`` URIs and the style sheet is inline, so the file can be mailed or opened
offline. Sections:

1. what the store holds (runs completed and failed, dclb version);
2. the grid: each scenario field that varies with its values, the seeds, and (folded) the fields that are
   the same in every run;
3. a summary table with one row per grid point (the mean over seeds of the headline metrics with its 95 %
   confidence interval, clipped to the metric's range, from 3 seeds on; the seed count of each point), the
   failed runs with their errors, and (folded) one row per run;
4. figures: each headline metric against the varying numeric field (``traffic.load`` when it varies) with
   one line per scheme (or per value of the first non-numeric varying field); FCT CDFs per scheme, one
   panel per value of the numeric field; the mean slowdown per flow-size bin, panelled the same way; and,
   when the runs recorded sampler series (``[run.sampler]``), the mean switch-port queue length over time.

List fields appear by their element columns (``topology.links.0.rate_gbps``, see :mod:`dclb.store`), never
as one JSON blob, in the grid, the tables and the figure titles.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
import warnings
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from . import __version__
from .analysis import MIN_SEEDS_FOR_CI, aggregate, field_values, is_numeric, label_of, physical_range, scenario_columns, varying_fields
from .errors import UserError
from .paths import output_file
from .headline import COMPARISON

MAX_CDF_PANELS = 6

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0 1em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 1em 2em; }
figure { margin: 1em 0; } figcaption { font-size: .9em; color: #555; }
img { max-width: 100%; height: auto; }
.muted { color: #666; } .error { color: #a00; }
details summary { cursor: pointer; margin: .5em 0; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e3 else f"{value:,.0f}"
    if isinstance(value, (list, dict)):
        return str(value)
    return str(value)


def _fmt_interval(a: Any, bounds: tuple[float, float]) -> str:
    """A point's mean with its interval: ``m ± h`` when the interval lies within ``bounds``, ``m [lo, hi]``
    clipped when it does not, the mean alone below ``MIN_SEEDS_FOR_CI`` seeds."""
    mean, half, lo, hi = (float(a[k]) for k in ("mean", "ci", "lo", "hi"))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return _fmt(mean)
    if mean - half >= bounds[0] and mean + half <= bounds[1]:
        return f"{_fmt(mean)} ± {_fmt(half)}"
    return f"{_fmt(mean)} [{_fmt(lo)}, {_fmt(hi)}]"


def _table(frame: pd.DataFrame, text_columns: Sequence[str] = ()) -> str:
    head = "".join(f'<th class="{"text" if c in text_columns else ""}">{_esc(c)}</th>' for c in frame.columns)
    rows = []
    for _, row in frame.iterrows():
        cells = "".join(f'<td class="{"text" if c in text_columns else ""}">{_esc(_fmt(row[c]))}</td>' for c in frame.columns)
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _img(png: bytes, alt: str, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<figure><img src="data:image/png;base64,{data}" alt="{_esc(alt)}"><figcaption>{_esc(caption)}</figcaption></figure>'


def choose_axes(runs: pd.DataFrame) -> tuple[str | None, str | None, str | None]:
    """(x, hue, facet) for the default figures: x the varying numeric field (traffic.load preferred), hue
    lb.scheme if it varies (else the first other varying field), facet one more varying field if any."""
    varying = varying_fields(runs)
    numeric = [f for f in varying if is_numeric(runs[f])]
    x = "traffic.load" if "traffic.load" in numeric else (numeric[0] if numeric else None)
    rest = [f for f in varying if f != x]
    hue = "lb.scheme" if "lb.scheme" in rest else (next((f for f in rest if not is_numeric(runs[f])), rest[0] if rest else None))
    rest = [f for f in rest if f != hue]
    facet = rest[0] if rest else None
    return x, hue, facet


def build_report(store: Any, title: str | None = None) -> str:
    """The report page of ``store`` as HTML text."""
    from . import plots

    everything = store.runs()
    if everything.empty:
        raise UserError(f"{store.path}: the store has no runs to report on")
    # Damaged runs (a table missing or truncated) are left out of everything below and listed on their own.
    damaged = everything[everything["status"] == "damaged"].reset_index(drop=True)
    all_runs = everything[everything["status"] != "damaged"].reset_index(drop=True)
    if all_runs.empty:
        raise UserError(f"{store.path}: every run of the store is damaged; `dclb store check {store.path}` says how")
    runs = all_runs[all_runs["status"] == "completed"].reset_index(drop=True)
    failed = all_runs[all_runs["status"] == "failed"].reset_index(drop=True)
    varying = varying_fields(all_runs)
    metrics = [m for m in COMPARISON if m in runs.columns]
    # A list field's whole-list column (JSON text) is left out where its element columns say the same.
    elements = {".".join(c.split(".")[:i]) for c in all_runs.columns for i, part in enumerate(c.split(".")) if part.isdigit()}
    title = title or f"dclb results: {store.path.resolve().name}"
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="muted">Store <code>{_esc(store.path.resolve())}</code>: {len(runs)} completed run(s), {len(failed)} failed'
        + (f", {len(damaged)} damaged (left out, listed below)" if len(damaged) else "")
        + f". Generated {_esc(_dt.datetime.now().isoformat(timespec='seconds'))} by dclb {_esc(__version__)}.</p>",
    ]
    if len(damaged):
        out.append(f'<h2 class="error">Damaged runs ({len(damaged)}), left out of this page</h2>')
        out.append(
            f'<p>Their files are missing or not as written. <code>dclb store check {_esc(store.path)}</code> lists what is wrong; '
            f"<code>dclb store repair {_esc(store.path)}</code> sets them aside, and the next sweep runs them again.</p>"
        )
        out.append(_table(damaged[["run_id", "error"]].rename(columns={"error": "problem"}), text_columns=["run_id", "problem"]))

    # The grid
    out.append("<h2>Scenario grid</h2>")
    seeds = sorted(int(s) for s in all_runs["seed"].dropna().unique())
    grid_rows = [{"field": f, "values": ", ".join(_fmt(v) for v in vals)} for f, vals in field_values(all_runs, varying).items()]
    grid_rows.append({"field": "seed", "values": ", ".join(map(str, seeds))})
    out.append(_table(pd.DataFrame(grid_rows), text_columns=["field", "values"]))
    fixed_source = runs if not runs.empty else all_runs
    fixed = [(c, fixed_source[c].dropna().iloc[0]) for c in scenario_columns(fixed_source) if c not in varying and c not in elements and fixed_source[c].notna().any()]
    if fixed:
        out.append("<details><summary>Fields with the same value in every run</summary>")
        out.append(_table(pd.DataFrame(fixed, columns=["field", "value"]), text_columns=["field", "value"]))
        out.append("</details>")

    # Summary tables
    out.append("<h2>Summary</h2>")
    if not runs.empty and metrics:
        points = []
        keys = [f for f in varying if f in runs.columns]
        groups = runs.groupby(keys, dropna=False, sort=True) if keys else [((), runs)]
        for key, group in groups:
            key = key if isinstance(key, tuple) else (key,)
            row: dict[str, Any] = dict(zip(keys, key))
            row["seeds"] = len(group)
            for m in metrics:
                a = aggregate(group, [], m).iloc[0]
                row[m] = _fmt_interval(a, physical_range(m))
            points.append(row)
        out.append(
            '<p class="muted">One row per grid point: the mean over its seeds and, from '
            f"{MIN_SEEDS_FOR_CI} seeds on, ± the half-width of the 95% confidence interval (t distribution), or "
            "[low, high] where that interval reaches past what the metric can be (a slowdown below 1, a time "
            f"below 0). With fewer than {MIN_SEEDS_FOR_CI} seeds the mean stands alone: from 2 seeds the interval "
            "is too wide to say anything.</p>"
        )
        out.append(_table(pd.DataFrame(points), text_columns=keys))
    if not failed.empty:
        out.append(f"<h3>Failed runs ({len(failed)})</h3>")
        cols = ["run_id", *[f for f in varying if f in failed.columns], "seed", "error"]
        out.append(_table(failed[cols], text_columns=["run_id", "error", *varying]))
    if not runs.empty:
        out.append("<details><summary>Every completed run</summary>")
        out.append(_table(runs[["run_id", *varying, "seed", *metrics]], text_columns=["run_id", *varying]))
        out.append("</details>")

    # Figures
    out.append("<h2>Figures</h2>")
    if runs.empty:
        out.append("<p>No completed run, so no figures.</p>")
    else:
        x, hue, facet = choose_axes(runs)
        if x is None and hue is not None:
            x, hue = hue, None  # only categorical fields vary: one point per value
        seeds_caption = _seeds_caption(runs, varying)
        if x is not None:
            out.append('<div class="figures">')
            for m in metrics:
                if not is_numeric(runs[m]):
                    continue
                out.append(_figure(lambda: plots.plot_line(store, x, m, hue=hue, facet=facet), f"{m} vs {x}", f"{label_of(m)} against {x}" + (f", per {hue}" if hue else "") + (f", one panel per {facet}" if facet else "") + f"; {seeds_caption}."))
            out.append("</div>")
        cdf_facet = x if x is not None and is_numeric(runs[x]) and len(field_values(runs, [x])[x]) <= MAX_CDF_PANELS else facet
        per = (f", per {hue}" if hue else "") + (f", one panel per {cdf_facet}" if cdf_facet else "")
        out.append('<div class="figures">')
        out.append(_figure(lambda: plots.plot_cdf(store, "fct_us", hue=hue, facet=cdf_facet), "FCT CDF", "CDF of the flow completion time of completed TCP flows" + per + "; seeds pooled."))
        out.append(_figure(lambda: plots.plot_bins(store, "slowdown", hue=hue, facet=cdf_facet), "slowdown per flow-size bin", "Mean slowdown (FCT / ideal FCT) of completed TCP flows per flow-size bin" + per + f"; {seeds_caption}."))
        if _has_samples(store, runs):
            out.append(_figure(lambda: plots.plot_timeseries(store, "queue_bytes", hue=hue, facet=cdf_facet), "queue length over time", "Queue length over time, mean over the sampled switch ports" + per + "; mean over seeds."))
        else:
            out.append('<p class="muted">No time series: the runs recorded no sampler series (add <code>[run.sampler]</code> to the scenario).</p>')
        out.append("</div>")
    out.append("</body></html>")
    return "\n".join(out)


def _seeds_caption(runs: pd.DataFrame, varying: Sequence[str]) -> str:
    """What a figure's points are: the mean over how many seeds, and whether they carry a confidence interval
    (only from ``MIN_SEEDS_FOR_CI`` seeds on)."""
    keys = [f for f in varying if f in runs.columns]
    counts = runs.groupby(keys, dropna=False).size() if keys else pd.Series([len(runs)])
    lo, hi = int(counts.min()), int(counts.max())
    seeds = f"{lo}" if lo == hi else f"{lo} to {hi}"
    if hi < MIN_SEEDS_FOR_CI:
        return f"mean over {seeds} seed{'s' if hi != 1 else ''} per point, no confidence interval (fewer than {MIN_SEEDS_FOR_CI} seeds)"
    if lo < MIN_SEEDS_FOR_CI:
        return f"mean over {seeds} seeds per point, with a 95% confidence interval where there are at least {MIN_SEEDS_FOR_CI}"
    return f"mean over {seeds} seeds per point with a 95% confidence interval"


def _figure(draw: Any, alt: str, caption: str) -> str:
    """A figure drawn by ``draw()``, or a line saying why it could not be (the rest of the page is kept)."""
    from . import plots

    try:
        with warnings.catch_warnings():
            # A metric that is n/a in some runs leaves them out of its figure, which its points show.
            warnings.simplefilter("ignore", plots.RunsLeftOut)
            fig = draw()
    except UserError as error:
        return f'<figure><p class="muted">{_esc(alt)}: not drawn: {_esc(error)}</p></figure>'
    return _img(plots.png_bytes(fig), alt, caption)


def _has_samples(store: Any, runs: pd.DataFrame) -> bool:
    """Whether any completed run recorded switch-port samples (the sampler is optional)."""
    from .errors import StoreError

    try:
        kinds = store.samples(list(runs["run_id"]), columns=["kind"])
    except StoreError:
        return False
    return "kind" in kinds.columns and bool((kinds["kind"] == "port").any())


def write_report(store: Any, out: str | Path | None = None, title: str | None = None) -> Path:
    """Writes the report page of ``store`` to ``out`` (default ``DIR/report.html``); the file name must end in
    ``.html`` or ``.htm``, since the page is HTML (``r.pdf`` would hold HTML under a PDF's name)."""
    path = Path(out) if out is not None else store.path / "report.html"
    if path.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--out {path}: the report is an HTML page; give a file name ending in .html")
    output_file(path, "--out")  # an output that cannot be written fails before the work
    path.parent.mkdir(parents=True, exist_ok=True)
    text = build_report(store, title)
    temp = path.with_name(f".{path.name}.part")
    temp.write_text(text, encoding="utf-8")
    temp.replace(path)
    return path

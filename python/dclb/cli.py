"""The ``dclb`` command line.

Every command reports user mistakes as one line on stderr (``error: <field>: <what is wrong>``) and exits
with status 2. An interrupt (Ctrl-C, SIGTERM, SIGHUP; :mod:`dclb.interrupts`) prints one line saying what was
kept (``interrupted: 5 of 12 runs are complete in res; run the same command again to do the rest``) and exits
with 130: ``dclb run`` stores nothing of an unfinished run (an interrupt while it stores a finished one waits for
the folder and catalog row, then says the run is stored), a sweep keeps every finished run and its catalog
row. Tracebacks appear only for internal errors, and only with ``DCLB_DEBUG=1``.

Nothing a user gives is ignored: options that a command would not use in a combination are declared so
(:class:`_Option`: ``not_with``, ``only_when``) and refused, and an empty path or text is refused
(:class:`_NonEmptyPath`, :class:`_NonEmptyText`).

Output. Text a user wrote (scenario names and descriptions, paths, field values) is printed as written: the
consoles interpret neither rich markup nor ``:emoji:`` codes, and the few styled words of dclb's own (bold
scheme names, the red ``error:``) ask for markup explicitly around escaped text. ``--json`` prints strict
JSON (RFC 8259): a missing number (NaN, an infinite bound) is ``null``, lists and objects are JSON values.
Tables fit the terminal: a column name or value is never wrapped or cut (users type them back into
``--columns``, ``--where`` and ``--set``); instead ``dclb results`` and the end-of-sweep table show the fields
that tell the runs apart and as many headline metrics as fit, and name the columns left out; a table whose
chosen columns cannot fit is printed one run per block instead. When stdout is not a terminal the width is
``COLUMNS`` if set, else unlimited (a pipe or a file gets every column).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import interrupts
from .errors import ScenarioError, UserError, one_line
from .headline import COMPARISON, run_summary_keys
from .interrupts import Interrupted
from .jsonvalues import json_text

# No markup and no emoji on either console: user text (a scenario named "[x] :fire:") must print as written.
console = Console(emoji=False, markup=False)
err = Console(stderr=True, emoji=False, markup=False)


def _progress_bar(total_flows: int, enabled: bool):
    """A rich progress bar over flows ended, with simulated time and event rate; returns (ctx, callback)."""
    progress = Progress(
        TextColumn("[bold]simulating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("flows · {task.fields[sim]} simulated · {task.fields[rate]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not enabled,
    )
    task = progress.add_task("run", total=max(total_flows, 1), sim="0 ms", rate="")
    t0 = time.perf_counter()

    def update(now_us: float, events: int, ended: int, total: int) -> None:
        dt = max(time.perf_counter() - t0, 1e-9)
        progress.update(task, completed=ended, total=max(total, 1), sim=f"{now_us / 1e3:.2f} ms", rate=f"{events / dt / 1e6:.1f} M events/s")

    return progress, update


def _summary_table(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, value in rows:
        table.add_row(label, value)
    return table


# --------------------------------------------------------------------------------------------------------
# What a command does not use is an error: options that cannot go together are declared with the option


def _flag_of(ctx: click.Context, name: str) -> str:
    """The command-line spelling of parameter ``name`` (``--no-store``)."""
    for param in ctx.command.params:
        if param.name == name:
            return param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
    return name


class _Option(click.Option):
    """A click option that declares when it would be ignored, so that giving it then is an error instead:

    * ``not_with``: options (parameter names) that make this one meaningless; giving both is refused;
    * ``only_when``: ``{parameter: values}``: this option is used only while that parameter (given or by its
      default) has one of those values.

    The error is a :class:`~dclb.errors.UserError`: one line, exit status 2."""

    def __init__(self, *args: Any, not_with: tuple[str, ...] = (), only_when: dict[str, tuple[Any, ...]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.not_with = not_with
        self.only_when = only_when or {}

    def handle_parse_result(self, ctx: click.Context, opts: Any, args: list[str]) -> Any:
        if self.name in opts:
            for other in self.not_with:
                if other in opts:
                    raise UserError(f"{self.opts[0]} and {_flag_of(ctx, other)} cannot be given together: one of them would be ignored")
            for other, allowed in self.only_when.items():
                param = next(p for p in ctx.command.params if p.name == other)
                value = opts.get(other, param.default)
                if value not in allowed:
                    raise UserError(f"{self.opts[0]}: not used with {_flag_of(ctx, other)} {value}, only with {_flag_of(ctx, other)} {' or '.join(map(str, allowed))}")
        return super().handle_parse_result(ctx, opts, args)


class _NonEmptyPath(click.Path):
    """A path option or argument that refuses the empty text (which would otherwise mean the current
    directory, or no file at all). Whether the path is a file or a directory, and can be read or written,
    is checked where the command uses it, with :mod:`dclb.paths` (one line naming the option, where click
    would print its usage), and not for a default the command does not use (``--out`` with ``--no-store``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(path_type=Path, **kwargs)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            name = param.opts[0] if isinstance(param, click.Option) else (param.human_readable_name if param else "path")
            raise UserError(f"{name}: empty path; give a file or directory name")
        return super().convert(value, param, ctx)


class _NonEmptyText(click.ParamType):
    """Text an option needs (a condition, a query, a field name): the empty text would be ignored, so it is
    refused."""

    name = "text"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            name = param.opts[0] if param is not None else "option"
            raise UserError(f"{name}: empty; give {param.metavar or 'a value'}" if param is not None else f"{name}: empty")
        return value


_TEXT = _NonEmptyText()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dclb")
def cli() -> None:
    """dclb: packet-level simulation of load balancing in leaf-spine datacenter fabrics."""


@cli.command("run")
@click.argument("scenario_file", type=_NonEmptyPath())
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE", help="Override any scenario field, e.g. --set lb.scheme=rps --set traffic.load=0.7 (repeatable).")
@click.option("--seed", type=int, default=None, help="Override the scenario seed.")
@click.option("--out", type=_NonEmptyPath(), default=Path("dclb-results"), show_default=True, help="Results directory (run folders + catalog).")
@click.option("--no-store", is_flag=True, cls=_Option, not_with=("out",), help="Do not write results; just print the summary.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.option("--dry-run", is_flag=True, help="Validate and show what would run, without simulating.")
@click.option("--dump-config", type=_NonEmptyPath(), default=None, help="Write the resolved engine config (JSON) to this file.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--strict", is_flag=True, help="A source that started no flow (its random arrivals all fell outside its window) is an error, not a warning.")
def run_cmd(scenario_file: Path, overrides: tuple[str, ...], seed: int | None, out: Path, no_store: bool, as_json: bool, dry_run: bool, dump_config: Path | None, quiet: bool, strict: bool) -> None:
    """Run one scenario and print its summary."""
    stored: list[Any] = []  # the result, once the run is stored (folder and catalog row, as one step)
    try:
        _run(scenario_file, overrides, seed, out, no_store, as_json, dry_run, dump_config, quiet, stored.append, strict)
    except KeyboardInterrupt as e:
        if no_store or dry_run:
            note = None
        elif stored:
            note = f"the run had finished and is stored: {stored[0].path} (catalog: {stored[0].path.parent.parent / 'catalog.duckdb'})"
        else:
            note = "nothing was stored"
        raise Interrupted(getattr(e, "signum", signal.SIGINT), note) from None


def _run(scenario_file: Path, overrides: tuple[str, ...], seed: int | None, out: Path, no_store: bool, as_json: bool, dry_run: bool, dump_config: Path | None, quiet: bool, on_stored: Any, strict: bool) -> None:
    from .paths import output_dir, output_file
    from .runner import run
    from .scenario import describe_load, engine_config, load_scenario

    if dump_config is not None:
        output_file(dump_config, "--dump-config")
    sc = load_scenario(scenario_file, list(overrides), seed)
    if not no_store:
        output_dir(out, "--out")  # before the work, not after it (a dry run checks it too)
    if dump_config is not None:
        dump_config.write_text(json.dumps(engine_config(sc), indent=1))
    header = f"{sc.name}: {sc.topology.leaves} leaves x {sc.topology.spines} spines x {sc.topology.hosts_per_leaf} hosts, lb={sc.lb.scheme}, seed={sc.seed}"
    if not as_json:
        err.print(header, soft_wrap=True, highlight=False)
        for line in describe_load(sc):
            err.print("  " + line, soft_wrap=True, highlight=False)
    if dry_run:
        _print_dry_run(sc, None if no_store else out, as_json)
        return
    bar, update = _progress_bar(0, enabled=not quiet and not as_json)
    with bar:
        result = run(sc, out=None if no_store else out, progress=update, on_stored=on_stored, strict=strict)
    if as_json:
        # The summary keeps the engine's lists and objects (source_mean_bytes, scheme_counters) as JSON text,
        # as the catalog does; here they are JSON values again.
        values = {key: result.stats[key] if isinstance(result.stats.get(key), (list, dict)) else value for key, value in result.summary.items()}
        click.echo(_json_text({"run_id": result.run_id, "path": str(result.path) if result.path else None, **values}))
        return
    from .summary import load_shortfall_note, summary_rows

    # Rows about what the run did not have (long-lived flows, a window) are left out; run.json has them all.
    console.print(_summary_table(f"run {result.run_id}", summary_rows(result.summary, run_summary_keys(result.summary))))
    if (note := load_shortfall_note(result.summary)) is not None:
        err.print(note, soft_wrap=True, highlight=False)
    if result.path is not None:
        from .store import Store

        console.print(f"results: {result.path}  (catalog: {Store(out).catalog_path})", soft_wrap=True)


def _print_dry_run(sc: "Any", out: Path | None, as_json: bool) -> None:
    """What `dclb run --dry-run` prints once the scenario has passed every check: that it is valid, its run id
    (and whether the store already has it) and the sizes of the run (:mod:`dclb.preview`)."""
    from .preview import preview
    from .runner import run_id_for
    from .store import Store

    facts = preview(sc)
    run_id = run_id_for(sc)
    stored = out is not None and Store(out).verify(run_id).ok
    if as_json:
        click.echo(_json_text({"valid": True, "run_id": run_id, "stored": stored, **facts.as_dict()}))
        return
    where = "" if out is None else f" (already complete in {out})" if stored else f" (not yet in {out})"
    text = f"valid: run id {run_id}{where}; nothing was simulated (--dry-run)"
    console.print(text, highlight=False, soft_wrap=True, markup=False)
    for line in facts.lines():
        console.print("  " + line, highlight=False, soft_wrap=True, markup=False)


@cli.command("schemes")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def schemes_cmd(as_json: bool) -> None:
    """List the load-balancing schemes and their parameters."""
    from . import _core

    schemes = _core.schemes()
    for s in schemes:
        for p in s["params"]:
            if p.get("whole") and isinstance(p["default"], float) and p["default"].is_integer():
                p["default"] = int(p["default"])  # a count: 2, not 2.0
    if as_json:
        click.echo(_json_text(schemes, indent=1))
        return
    for s in schemes:
        console.print(f"[bold]{escape(s['name'])}[/bold]  ({s['placement']}, per {s['granularity']}): {escape(s['summary'])}", markup=True)
        if not s["params"]:
            console.print("    no parameters")
        for p in s["params"]:
            unit = f" {p['unit']}" if p["unit"] else ""
            choices = f" (one of {', '.join(p['choices'])})" if p["choices"] else ""
            scaled = f" [dim](at a base RTT of {p['rtt_us']:g} us; scaled to the fabric's, see lb.timing)[/dim]" if p.get("rtt_us") else ""
            default = p["default"]
            if isinstance(default, (bool, str)):
                default = json.dumps(default)  # as written in TOML: true, "switch"
            elif isinstance(default, float):
                default = str(int(default)) if default.is_integer() and abs(default) < 1e15 else repr(default)
            console.print(f"    lb.{p['name']} = {escape(str(default))}{unit}{escape(choices)}{scaled}: {escape(p['doc'])}  [dim]{escape('[' + p['source'] + ']')}[/dim]", markup=True)
        for r in s.get("relations", []):
            # Checked on the values the scheme runs with (presets, lb.timing applied): a broken one is an error.
            console.print(f"    must hold: {escape(r['relation'])}  [dim]({escape(r['why'])})[/dim]", markup=True)


@cli.command("workloads")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def workloads_cmd(as_json: bool) -> None:
    """List the shipped flow-size workloads with their means and sources."""
    from . import workloads as wl

    rows = []
    for name in wl.builtin_paths():
        w = wl.load(name)
        rows.append({"name": name, "mean_bytes": w.mean_bytes, "points": len(w.points), "description": w.description, "source": w.source})
    if as_json:
        click.echo(_json_text(rows, indent=1))
        return
    # Names are typed back into scenarios: never wrapped or cut; the description wraps instead. A terminal too
    # narrow for the name, mean and points columns beside 20 characters of description gets one block each.
    out = _wide_console()
    cells = [(r["name"], f"{r['mean_bytes'] / 1e6:.3f} MB", str(r["points"]), r["description"]) for r in rows]
    if max(len(c[0]) for c in cells) + 9 + 6 + 20 + 3 * _COLUMN_GAP <= out.width:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        table.add_column("name", no_wrap=True)
        table.add_column("mean", no_wrap=True, justify="right")
        table.add_column("points", no_wrap=True, justify="right")
        table.add_column("description", overflow="fold", min_width=20)
        for c in cells:
            table.add_row(*c)
        out.print(table)
    else:
        for name, mean, points, description in cells:
            out.print(f"{name}  (mean {mean}, {points} points)")
            out.print(Padding(description, (0, 0, 0, 4)))
    out.print("Use a name, a path to your own CDF file, or a mixture such as {websearch = 0.5, datamining = 0.5} (weights by flow count).")


@cli.command("bench")
@click.option("--scenario", "scenario", type=click.Choice(["s1", "p1"]), default="s1", show_default=True, help="S1 (4x4x8, 10G) or P1 (10x10x20, 40G).")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE", help="Override a field of the benchmark scenario.")
@click.option("--rss", "processes", is_flag=True, help="Also run the scenario with `dclb run` in processes of their own, with --no-store and into a temporary store, and report each one's peak RSS.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def bench_cmd(scenario: str, overrides: tuple[str, ...], processes: bool, as_json: bool) -> None:
    """Run a benchmark scenario (S1 by default, or P1) and report events/s, wall time and peak memory."""
    from .bench import run_bench

    bar, update = _progress_bar(0, enabled=not as_json)
    with bar:
        report = run_bench(list(overrides), scenario, progress=update, processes=processes)
    if as_json:
        click.echo(_json_text(report))
        return
    rows = [
        ("scenario", report["scenario"]),
        ("flows", f"{report['flows']:,} ({report['flows_completed']:,} completed)"),
        ("events", f"{report['events']:,}"),
        ("wall time", f"{report['wall_s']:.2f} s"),
        ("events per second", f"{report['events_per_s'] / 1e6:.2f} M"),
        ("simulated time", f"{report['sim_time_us'] / 1e3:.1f} ms"),
        ("peak RSS of this process", f"{report['peak_rss_mb']:.0f} MB (before the run: {report['rss_before_mb']:.0f} MB; the engine only: no summary, no store)"),
        ("engine memory (estimate)", f"{report['engine_mb']:.1f} MB"),
        ("peak flows / packets in flight", f"{report['peak_flows_active']:,} / {report['peak_packets_in_flight']:,}"),
        ("memory per flow", f"{report['bytes_per_flow_engine']:.0f} B engine estimate, {report['bytes_per_flow_rss']:.0f} B of RSS growth (every flow's state is allocated at start)"),
    ]
    if processes:
        rows.append(("peak RSS of `dclb run`", f"{report['run_no_store_peak_rss_mb']:.0f} MB with --no-store, {report['run_store_peak_rss_mb']:.0f} MB with a store (each in a process of its own)"))
    console.print(_summary_table("dclb bench", rows))


# --------------------------------------------------------------------------------------------------------
# Sweeps, results, plots, report


def _wide_console() -> Console:
    """The stdout console for tables: the terminal's width; when stdout is not a terminal, ``COLUMNS`` if it is
    set, else wide enough for any table (a pipe or a file gets every column)."""
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console
    return Console(width=10_000, emoji=False, markup=False)


def _json_text(value: Any, indent: int | None = None) -> str:
    """Strict JSON text (no NaN or Infinity, which most JSON readers reject); what has no JSON form is
    printed as its text."""
    return json_text(value, strict=False, indent=indent)


def _json_records(frame: "Any") -> list[dict[str, Any]]:
    """The rows of a frame as JSON objects. The catalog keeps lists and objects (a scenario's list fields, the
    engine's per-source figures) as JSON text; a text column whose every value is a JSON list or object is
    given back as those values."""
    decoded = set()
    for index, column in enumerate(frame.columns):
        texts = [v for v in frame.iloc[:, index] if isinstance(v, str)]
        if texts and len(texts) == int(frame.iloc[:, index].notna().sum()) and all(t[:1] in "[{" for t in texts):
            try:
                [json.loads(t) for t in texts]
            except ValueError:
                continue
            decoded.add(index)
    rows = []
    for row in frame.itertuples(index=False, name=None):
        rows.append({str(c): json.loads(v) if i in decoded and isinstance(v, str) else v for i, (c, v) in enumerate(zip(frame.columns, row))})
    return rows


def _cell(value: Any) -> str:
    import math as _math

    if value is None or (isinstance(value, float) and _math.isnan(value)) or str(value) in ("<NA>", "NaT"):
        return "–"
    if isinstance(value, float):
        if abs(value) >= 1e3:
            return f"{value:,.0f}"
        return f"{value:.1f}" if value.is_integer() else f"{value:.4g}"
    return str(value)


#: Characters a SIMPLE_HEAD table without edges puts between two columns (padding, rule, padding).
_COLUMN_GAP = 3


def _render_frame(frame: "Any", fmt: str, title: str | None = None, required: "list[str] | None" = None, optional: "list[str] | None" = None) -> list[str]:
    """Prints ``frame`` as a table, CSV or JSON; returns the columns a table left out.

    A table shows the ``required`` columns (default: all) and then, in the priority order of ``optional``, each
    optional column that still fits the console's width, in the frame's order. No name or value is ever
    wrapped or cut: if the required columns alone are too wide, every column is printed, one row per block of
    ``column value`` lines."""
    if fmt == "csv":
        click.echo(frame.to_csv(index=False), nl=False)
        return []
    if fmt == "json":
        click.echo(_json_text(_json_records(frame), indent=1))
        return []
    from rich.cells import cell_len

    out = _wide_console()
    names = [str(c) for c in frame.columns]
    cells = [[_cell(v) for v in frame.iloc[:, i]] for i in range(len(names))]
    widths = [max([cell_len(names[i]), *map(cell_len, cells[i])]) for i in range(len(names))]
    wanted = list(range(len(names))) if required is None else [i for i, n in enumerate(names) if n in required]
    used = sum(widths[i] for i in wanted) + _COLUMN_GAP * max(len(wanted) - 1, 0)
    if used > out.width:
        _render_blocks(out, names, cells, title)
        return []
    left_out = []
    for name in optional or []:
        i = names.index(name)
        if i in wanted:
            continue
        if used + _COLUMN_GAP + widths[i] <= out.width:
            wanted.append(i)
            used += _COLUMN_GAP + widths[i]
        else:
            left_out.append(name)
    shown = sorted(wanted)
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for i in shown:
        numeric = frame.dtypes.iloc[i].kind in "iuf"
        table.add_column(names[i], no_wrap=True, justify="right" if numeric else "left")
    for r in range(len(frame)):
        table.add_row(*(cells[i][r] for i in shown))
    out.print(table)
    return left_out


def _render_blocks(out: Console, names: list[str], cells: list[list[str]], title: str | None) -> None:
    """One block per row: each column's name and value on a line (long values wrap; names never do)."""
    if title:
        out.print(title)
    for r in range(len(cells[0]) if cells else 0):
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for i, name in enumerate(names):
            grid.add_row(name, cells[i][r])
        out.print(grid)
        out.print()


def _left_out_note(left_out: list[str], how: str) -> None:
    if left_out:
        _wide_console().print(f"Not shown, to fit {_wide_console().width} columns: {', '.join(left_out)}. {how}")


def _status_priority(statuses: "Any") -> tuple[list[str], list[str]]:
    """(columns before the metrics, columns after): the status column matters when some run did not complete."""
    return (["status"], []) if any(s != "completed" for s in statuses) else ([], ["status"])


@cli.command("sweep")
@click.argument("scenario_file", type=_NonEmptyPath())
@click.option("--grid", "grids", multiple=True, metavar="FIELD=VALUES", help="A grid dimension: comma list and/or START:STOP:STEP ranges, e.g. --grid lb.scheme=ecmp,rps --grid traffic.load=0.2:0.8:0.2 (repeatable; replaces the [sweep] table's entry for that field).")
@click.option("--seeds", type=int, default=None, help="Seeds per grid point: seed, seed+1, ... (default: the [sweep] table's `seeds`, else 1).")
@click.option("--seed", type=int, default=None, help="Base seed (default: the scenario's seed).")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE", help="Override a scenario field for every point (repeatable).")
@click.option("--out", type=_NonEmptyPath(), default=Path("dclb-results"), show_default=True, help="Result store (run folders + catalog).")
@click.option("--jobs", "-j", type=int, default=None, help="Parallel runs (default: one per core).")
@click.option("--dask", type=_TEXT, metavar="ADDRESS|local", default=None, help="Run on a Dask cluster: a scheduler address (tcp://host:8786) or 'local' for a LocalCluster of --jobs workers.")
@click.option("--dry-run", is_flag=True, help="List the points and which are already done; run nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--strict", is_flag=True, help="A run in which a source started no flow is a failed point, not a completed one with a note.")
def sweep_cmd(scenario_file: Path, grids: tuple[str, ...], seeds: int | None, seed: int | None, overrides: tuple[str, ...], out: Path, jobs: int | None, dask: str | None, dry_run: bool, quiet: bool, strict: bool) -> None:
    """Run a scenario over a grid of field values and seeds, in parallel, into a result store.

    Points already complete in the store are not run again, so re-running an interrupted or partly failed
    sweep finishes it. Exits with 1 if any point failed."""
    from .paths import output_dir
    from .sweeps import execute, parse_grid_option, plan_sweep

    output_dir(out, "--out")
    grid: dict[str, Any] = {}
    for text in grids:
        key, values = parse_grid_option(text)
        if key in grid:
            raise ScenarioError(f"--grid {key}: given twice; give every value of a field in one --grid (e.g. --grid {key}=A,B,C)")
        grid[key] = values
    _check_jobs_with_dask(jobs, dask)
    plan = plan_sweep(scenario_file, grid=grid, seeds=seeds, overrides=list(overrides), seed=seed, grid_label="--grid")
    dims = "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in plan.grid.items()) or "no grid"
    err.print(f"sweep {plan.name}: {dims}; seeds {', '.join(map(str, plan.seeds))} -> {len(plan.points)} points, store {out}", highlight=False, soft_wrap=True)
    if dry_run:
        import pandas as pd

        from .store import Store

        store = Store(out)

        def state(p: Any) -> str:
            if p.error:
                return "invalid: " + p.error
            if store.verify(p.run_id).ok:
                return "complete"
            return "damaged: to run again" if store.is_complete(p.run_id) else "to run"

        states = {p.run_id: state(p) for p in plan.points}
        rows = [{"run_id": p.run_id, **p.values, "seed": p.seed, "state": states[p.run_id]} for p in plan.points]
        _render_frame(pd.DataFrame(rows), "table")
        _print_sweep_dry_run(plan, {run_id for run_id, text in states.items() if text == "complete"})
        return

    def started(total: int, todo: int, where: str) -> None:
        done = total - todo
        err.print(f"{done} already complete; running {todo} on {where}" if todo else f"all {total} points are already complete", highlight=False)

    def note(text: str) -> None:
        err.print(text, highlight=False, soft_wrap=True, markup=False)

    try:
        frame = execute(plan, out=out, jobs=jobs, dask=dask, progress=not quiet, on_start=started, notify=note, strict=strict)
    except Interrupted as e:
        raise Interrupted(e.signum, f"{e.note}; run the same command again to do the rest" if e.note else None) from None
    info = frame.attrs["sweep"]
    metrics = [m for m in COMPARISON if m in frame.columns]
    view = frame[["run_id", *plan.fields, "seed", "status", *metrics]].copy()
    view["status"] = [f"{s} (earlier)" if r else s for s, r in zip(frame["status"], frame["reused"])]
    first, last = _status_priority(frame["status"])
    left_out = _render_frame(view, "table", title=f"sweep {plan.name}", required=[*plan.fields, "seed"], optional=["run_id", *first, *metrics, *last])
    _left_out_note(left_out, f"`dclb results {out} --columns ...` shows any column.")
    for row in frame[frame["status"] == "failed"].itertuples():
        err.print(f"failed {row.run_id}: {row.error}", highlight=False, soft_wrap=True, markup=False)
    completed = int((frame["status"] == "completed").sum())
    console.print(
        f"{len(frame)} points: {completed} completed ({int(frame['reused'].sum())} from earlier runs), {info['failed']} failed; "
        f"wall {info['wall_s']:.1f} s for {info['ran']} run(s), engine {info['sim_s']:.1f} s, in workers {info['worker_s']:.1f} s. Store: {out}",
        highlight=False,
    )
    if info["failed"]:
        sys.exit(1)


def _check_jobs_with_dask(jobs: int | None, dask: str | None) -> None:
    """``--jobs`` sizes the local pool or a ``--dask local`` cluster; a running cluster's workers decide for
    themselves, so ``--jobs`` with a scheduler address would be ignored."""
    if jobs is not None and dask not in (None, "local"):
        raise UserError(f"--jobs and --dask {dask} cannot be given together: a running Dask cluster's workers decide how many runs go at once (--jobs sizes --dask local)")


def _print_sweep_dry_run(plan: "Any", store_done: set[str]) -> None:
    """The totals of `dclb sweep --dry-run`: how many points are valid and the sizes of those still to run."""
    from .preview import _count, _time, preview

    valid = [p for p in plan.points if p.error is None]
    todo = [preview(p.scenario) for p in valid if p.run_id not in store_done]
    invalid = len(plan.points) - len(valid)
    text = f"valid: {len(valid)} of {len(plan.points)} points" + (f" ({invalid} invalid, listed above)" if invalid else "")
    if todo:
        flows = sum(f.flows for f in todo)
        events = sum(f.events for f in todo)
        longest = max(f.sim_time_us for f in todo)
        text += (
            f"; {len(todo)} to run: {'' if all(f.flows_exact for f in todo) else 'about '}{flows:,.0f} flows, "
            f"about {_count(events)} events in all (rough estimate), up to {_time(longest)} simulated per point"
        )
    else:
        text += "; none to run"
    console.print(text + "; nothing was simulated (--dry-run)", highlight=False, soft_wrap=True, markup=False)


@cli.command("results")
@click.argument("store_dir", type=_NonEmptyPath())
@click.option("--columns", type=_TEXT, default=None, metavar="A,B,...", help="Columns to show after run_id (catalog column names; default: varying fields, seed, status, headline metrics).")
@click.option("--where", type=_TEXT, default=None, metavar="CONDITION", help="SQL condition on the catalog, e.g. \"traffic.load >= 0.4\".")
@click.option("--sql", "query", type=_TEXT, default=None, metavar="QUERY", cls=_Option, not_with=("where", "columns"), help="Run a query (tables: runs, flows, ports, switches, samples) and print its result.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def results_cmd(store_dir: Path, columns: str | None, where: str | None, query: str | None, fmt: str) -> None:
    """Summarise a result store: one row per run, or the result of a SQL query."""
    from .analysis import load_runs, require_columns, varying_fields
    from .store import open_store

    store = open_store(store_dir)
    if query is not None:
        _render_frame(store.sql(query), fmt)
        return
    runs = load_runs(store, where, completed=False)
    required = optional = None
    if columns is not None:
        chosen = [c.strip() for c in columns.split(",") if c.strip() and c.strip() != "run_id"]
        if not chosen:
            raise UserError(f"--columns {columns!r}: no column named; give catalog column names separated by commas, e.g. --columns traffic.load,short_afct_us")
        require_columns(runs, chosen, "column")
    elif fmt != "table":
        # CSV and JSON are for programs: every column of the catalog.
        chosen = [c for c in runs.columns if c != "run_id"]
    else:
        # By default: the fields that tell the runs apart, then as many headline metrics as the width allows.
        varying = varying_fields(runs)
        metrics = [m for m in COMPARISON if m in runs.columns]
        failed = bool(runs["status"].isin(["failed", "damaged"]).any())
        chosen = [*varying, "seed", "status", *metrics, *(["error"] if failed else [])]
        first, last = _status_priority(runs["status"])
        required, optional = [*varying, "seed"], ["run_id", *first, *metrics, *(["error"] if failed else []), *last]
        runs = runs.sort_values([*varying, "seed", "run_id"], kind="stable", key=lambda c: c.astype(str) if c.dtype == object else c)
    left_out = _render_frame(runs[["run_id", *chosen]], fmt, required=required, optional=optional)
    if fmt == "table":
        if "error" in left_out:
            for row in runs[runs["status"].isin(["failed", "damaged"])].itertuples():
                _wide_console().print(f"{row.status} {row.run_id}: {row.error}")
            left_out.remove("error")
        _left_out_note(left_out, "--columns A,B,... picks the columns; --format csv shows them all.")
        counts = runs["status"].value_counts().to_dict()
        console.print(f"{len(runs)} run{'' if len(runs) == 1 else 's'}" + "".join(f"{': ' if i == 0 else ', '}{n} {s}" for i, (s, n) in enumerate(sorted(counts.items()))), highlight=False)
    _note_catalog_drift(store)
    if (runs["status"] == "damaged").any():
        n = int((runs["status"] == "damaged").sum())
        err.print(
            f"note: {n} run{'s are' if n != 1 else ' is'} damaged (files missing or not as written): `dclb store check {store.path}` says more, `dclb store repair {store.path}` sets them aside",
            highlight=False, soft_wrap=True, markup=False,
        )


def _note_catalog_drift(store: Any) -> None:
    """One line on stderr when the catalog and the run folders disagree (the rows not backed are not shown)."""
    unbacked, unlisted = store.catalog_drift()
    parts = []
    if unbacked:
        parts.append(f"{len(unbacked)} run{'s' if len(unbacked) != 1 else ''} in the catalog whose folder is gone or incomplete (not shown)")
    if unlisted:
        parts.append(f"{len(unlisted)} complete run folder{'s' if len(unlisted) != 1 else ''} not in the catalog")
    if parts:
        err.print(f"note: {' and '.join(parts)}; `dclb store repair {store.path}` reconciles them", highlight=False, soft_wrap=True, markup=False)


@cli.group("store")
def store_group() -> None:
    """Check a result store, or repair it: run folders, catalog, claims and leftovers."""


@store_group.command("check")
@click.argument("store_dir", type=_NonEmptyPath())
@click.option("--deep", is_flag=True, help="Also compare every file with the SHA-256 recorded when it was written (reads everything).")
def store_check_cmd(store_dir: Path, deep: bool) -> None:
    """Say what is wrong with a store, one line per problem, and exit with 1 if anything is.

    Checks every run folder (files as recorded, Parquet readable, row counts, run.json), the catalog against
    the folders, claims of processes that are gone, and leftovers of interrupted writes."""
    from .store import open_store
    from .storecheck import check

    problems = check(open_store(store_dir), deep=deep, echo=lambda line: console.print(line, highlight=False, soft_wrap=True, markup=False))
    if problems:
        sys.exit(1)


@store_group.command("repair")
@click.argument("store_dir", type=_NonEmptyPath())
@click.option("--deep", is_flag=True, help="Verify with SHA-256 sums as `check --deep` does (needed to fix what only `check --deep` finds).")
def store_repair_cmd(store_dir: Path, deep: bool) -> None:
    """Fix what `dclb store check` finds and say what was done, one line per problem.

    Damaged or unfinished run folders are set aside in DIR/set-aside/ (the next sweep runs those points
    again), the catalog is rebuilt from the folders, and stale claims and leftovers of interrupted writes
    are deleted."""
    from .store import open_store
    from .storecheck import repair

    failures = repair(open_store(store_dir), deep=deep, echo=lambda line: console.print(line, highlight=False, soft_wrap=True, markup=False))
    if failures:
        sys.exit(1)


@cli.command("plot")
@click.argument("store_dir", type=_NonEmptyPath())
@click.option("--kind", type=click.Choice(["line", "cdf", "bins", "timeseries"]), default="line", show_default=True, help="line: metric vs field; cdf: per-flow CDF; bins: per size bin; timeseries: sampler series.")
@click.option("--x", "x", type=_TEXT, default=None, metavar="FIELD", cls=_Option, only_when={"kind": ("line",)}, help="x axis of the line kind, a scenario field (e.g. traffic.load).")
@click.option("--y", "y", type=_TEXT, default=None, metavar="NAME", help="line: a summary metric (short_afct_us); cdf/bins: a flows column (fct_us, slowdown); timeseries: queue_bytes, throughput_gbps or bytes.")
@click.option("--hue", type=_TEXT, default=None, metavar="FIELD", help="One line per value of this field (e.g. lb.scheme).")
@click.option("--facet", type=_TEXT, default=None, metavar="FIELD", help="One panel per value of this field.")
@click.option("--normalize-to", "normalize_to", type=_TEXT, default=None, metavar="FIELD=VALUE", cls=_Option, only_when={"kind": ("line", "bins")}, help="Divide by the run with FIELD=VALUE and otherwise the same fields and seed (line, bins).")
@click.option("--where", type=_TEXT, default=None, metavar="CONDITION", help="SQL condition on the catalog selecting the runs.")
@click.option("--stat", default=None, cls=_Option, only_when={"kind": ("bins", "timeseries")}, help="bins: mean or p99; timeseries: mean, max or sum over ports/flows.")
@click.option("--out", type=_NonEmptyPath(), default=None, help="Output file (.png, .svg or .pdf; default DIR/figures/<kind>-<y>[-vs-<x>].png).")
def plot_cmd(store_dir: Path, kind: str, x: str | None, y: str | None, hue: str | None, facet: str | None, normalize_to: str | None, where: str | None, stat: str | None, out: Path | None) -> None:
    """Draw a figure from a result store."""
    from .plots import make_figure, save
    from .store import open_store

    store = open_store(store_dir)
    if out is not None and out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UserError(f"--out {out}: the file name must end in .png, .svg or .pdf")
    if out is not None:
        from .paths import output_file

        output_file(out, "--out")  # before the figure is drawn
    fig = make_figure(store, kind=kind, x=x, y=y, hue=hue, facet=facet, normalize_to=normalize_to, where=where, stat=stat)
    if out is None:
        default_y = {"line": y, "cdf": "fct_us", "bins": "slowdown", "timeseries": "queue_bytes"}[kind]
        stem = f"{kind}-{y or default_y}" + (f"-vs-{x}" if kind == "line" else "") + ("-normalized" if normalize_to else "")
        out = store.path / "figures" / (stem.replace("/", "_") + ".png")
    path = save(fig, out)
    console.print(f"wrote {path}", highlight=False)


@cli.command("report")
@click.argument("store_dir", type=_NonEmptyPath())
@click.option("--out", type=_NonEmptyPath(), default=None, help="Output HTML file (default DIR/report.html).")
@click.option("--title", type=_TEXT, default=None, help="Page title.")
def report_cmd(store_dir: Path, out: Path | None, title: str | None) -> None:
    """Write one self-contained HTML page: the grid, summary tables and figures."""
    from .report import write_report
    from .store import open_store

    path = write_report(open_store(store_dir), out, title)
    console.print(f"wrote {path}", highlight=False)


@cli.command("reproduce")
@click.argument("paper", metavar="PAPER")
@click.option("--figure", "figures", multiple=True, metavar="N", help="Only this figure (repeatable); see --list.")
@click.option("--scale", type=click.Choice(["quick", "paper", "ci"]), default="quick", show_default=True, help="paper: the paper's flow counts and seeds; quick: every setting, fewer flows (minutes); ci: the least that draws every figure.")
@click.option("--out", type=_NonEmptyPath(), default=None, help="Output directory (default reproduce-SCALE): store/, one folder per paper with figures, data and report.html.")
@click.option("--jobs", "-j", type=int, default=None, help="Parallel runs (default: one per core).")
@click.option("--dask", type=_TEXT, metavar="ADDRESS|local", default=None, help="Run on a Dask cluster: a scheduler address (tcp://host:8786) or 'local'.")
@click.option("--list", "list_only", is_flag=True, cls=_Option, not_with=("jobs", "dask", "out", "quiet"), help="List the paper's figures, their runs at --scale and their scenario files; run nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@click.option("--sensitivity", is_flag=True, help="Also judge the headline claims under the settings the paper does not state and other readings of its scheme (their runs go into the same store); with --list, list the variants and their runs.")
def reproduce_cmd(paper: str, figures: tuple[str, ...], scale: str, out: Path | None, jobs: int | None, dask: str | None, list_only: bool, quiet: bool, sensitivity: bool) -> None:
    """Re-run a paper's evaluation (lbt, tam, tr, dar, mdtlb or all): every figure's runs, the figures as the
    paper draws them, and an HTML report of its claims beside dclb's results.

    Runs already in the store are not run again: an interrupted reproduction resumes where it stopped."""
    from . import reproduce as rp
    from .reproduce.plan import plan_paper

    _check_jobs_with_dask(jobs, dask)
    if not list_only:
        from .paths import output_dir

        output_dir(out if out is not None else Path(f"reproduce-{scale}"), "--out")

    if list_only:
        keys = rp.available() if paper == "all" else [rp.get_paper(paper).key]
        for key in keys:
            p = rp.get_paper(key)
            pp = plan_paper(p, scale, figures)
            console.print(f"[bold]{p.key}[/bold]: {escape(p.title)} — {len(pp.plan.points)} runs at scale {scale}", highlight=False, soft_wrap=True, markup=True)
            for f in pp.figures:
                files = ", ".join(dict.fromkeys(sw.scenario for sw in f.sweeps))
                console.print(f"  Fig. {f.id:<5} {f.title} ({len(pp.runs_of(f.id))} runs; {len(f.claims)} claims; {files})", highlight=False, soft_wrap=True, markup=False)
            console.print(f"  scenario files in {p.scenario_path('')}", highlight=False, soft_wrap=True, markup=False)
            if sensitivity:
                from .reproduce.sensitivity import describe, of_paper, plan_sensitivity

                sens = of_paper(key)
                lines = describe(plan_sensitivity(p, sens, scale, figures), {pt.run_id for pt in pp.plan.points}, events=True) if sens else ["no sensitivity declared"]
                for line in lines:
                    console.print(f"  {line}", highlight=False, soft_wrap=True, markup=False)
        return
    try:
        results = rp.reproduce(paper, scale, figures, out, jobs, dask, progress=not quiet, log=lambda t: err.print(t, highlight=False), sensitivity=sensitivity)
    except KeyboardInterrupt as e:
        where = f"{out or f'reproduce-{scale}'}/store"
        note = getattr(e, "note", None) or f"finished runs are stored in {where}"
        raise Interrupted(getattr(e, "signum", signal.SIGINT), f"{note}; run the same command again to do the rest") from None
    failed = False
    for r in results:
        from .reproduce.run import outcome_counts

        counts = outcome_counts(v for f in r.figures for _, v in f.verdicts)
        console.print(
            f"{r.paper.key}: {len(r.figures)} figures, {r.runs} runs ({r.ran} run now, {r.failed} failed) in {r.wall_s:.0f} s, figures drawn and judged in {r.report_s:.0f} s; "
            f"claims: {counts}. Report: {r.report}",
            highlight=False, soft_wrap=True,
        )
        for f in r.figures:
            for _, v in f.verdicts:
                console.print(f"  Fig. {f.figure.id}: {v.text}", highlight=False, soft_wrap=True, markup=False)
            if f.load_note:
                console.print(f"  Fig. {f.figure.id}: {f.load_note}", highlight=False, soft_wrap=True, markup=False)
            if f.error:
                err.print(f"  Fig. {f.figure.id} could not be drawn: {f.error}", highlight=False, soft_wrap=True, markup=False)
                failed = True
        failed |= r.failed > 0
        if r.sensitivity is not None:
            s = r.sensitivity
            console.print(f"  sensitivity: {s.runs} runs ({s.ran} run now, {s.failed} failed) in {s.wall_s:.0f} s; table in {r.out / 'sensitivity.csv'}", highlight=False, soft_wrap=True, markup=False)
            for c in s.claims:
                held, n = c.holds_under
                console.print(f"  Fig. {c.figure} (headline): {c.claim.text}: as shipped {c.judgement.outcome.value} ({c.judgement.reason_text}); reproduced under {held} of {n} variants", highlight=False, soft_wrap=True, markup=False)
            failed |= s.failed > 0
    if failed:
        sys.exit(1)


def _interrupted(error: BaseException | None) -> None:
    """The one line an interrupt gets, then exit status 130 (for SIGTERM and SIGHUP too)."""
    for signum in interrupts.SIGNALS:  # leaving now: a further Ctrl-C must not cut the exit short
        signal.signal(signum, signal.SIG_IGN)
    if isinstance(error, click.exceptions.Abort):  # click turns a KeyboardInterrupt into Abort
        error = error.__cause__ or error.__context__
    note = getattr(error, "note", None)
    err.print(f"interrupted: {note}" if note else "interrupted", highlight=False, soft_wrap=True, markup=False)
    sys.exit(130)


def _warning_line(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    err.print(f"warning: {message}", highlight=False, soft_wrap=True, markup=False)


#: pyarrow's allocator for the command's processes (and the sweep workers they start), unless the user chose
#: one: the C library's. pyarrow's default, mimalloc, reserves about 8 MB the first time it is used (storing a
#: quick-start run's tables), more than those tables take; the files written are the same (issue #30).
ARROW_POOL = ("ARROW_DEFAULT_MEMORY_POOL", "system")


def main() -> None:
    """Entry point: runs the CLI and turns user errors into one-line messages."""
    import warnings

    previous = {signum: signal.getsignal(signum) for signum in interrupts.SIGNALS}
    show_warning = warnings.showwarning
    arrow_pool = os.environ.get(ARROW_POOL[0])
    os.environ.setdefault(*ARROW_POOL)
    interrupts.install()
    warnings.showwarning = _warning_line
    try:
        _main()
    finally:
        if arrow_pool is None:  # an in-process caller's environment is given back as it was, too
            os.environ.pop(ARROW_POOL[0], None)
        # An in-process caller (a test, a notebook) gets its handlers back: an ignored SIGINT left behind would be
        # inherited by every process it starts later, which could then no longer be interrupted.
        for signum, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be put back
                signal.signal(signum, handler)
        warnings.showwarning = show_warning


def _main() -> None:
    try:
        cli.main(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        _interrupted(e)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except ScenarioError as e:
        err.print(f"[red]error:[/red] {escape(one_line(e))}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
    except ValueError as e:  # every other UserError (a store, an option), and ValueErrors that say what is wrong
        if interrupts.happened():  # a catalog operation cut short by the interrupt
            _interrupted(None)
        err.print(f"[red]error:[/red] {escape(one_line(e))}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
    except OSError as e:
        if interrupts.happened():
            _interrupted(None)
        err.print(f"[red]error:[/red] {escape(str(e.filename or ''))}: {escape(str(e.strerror))}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
    except Exception as e:  # a bug in dclb, not a user mistake
        if interrupts.happened():  # e.g. DuckDB's "Query interrupted": the interrupt, not a bug
            _interrupted(None)
        if os.environ.get("DCLB_DEBUG"):
            raise
        err.print(f"[red]internal error:[/red] {type(e).__name__}: {escape(str(e))} (rerun with DCLB_DEBUG=1 for a traceback, and please report it)", highlight=False, markup=True, soft_wrap=True)
        sys.exit(3)
    except BaseException as e:  # pyo3 raises an engine panic as PanicException, a BaseException
        if type(e).__name__ != "PanicException" or os.environ.get("DCLB_DEBUG"):
            raise
        err.print(f"[red]internal error:[/red] the engine failed: {escape(one_line(e))} (rerun with DCLB_DEBUG=1 for a traceback, and please report it)", highlight=False, markup=True, soft_wrap=True)
        sys.exit(3)


if __name__ == "__main__":
    main()

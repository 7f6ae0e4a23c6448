"""The ``dclb`` command line.

Every command reports user mistakes as one line on stderr (``error: <field>: <what is wrong>``) and exits
with status 2; an interrupted run (Ctrl-C) writes nothing and exits with 130. Tracebacks appear only for
internal errors, and only with ``DCLB_DEBUG=1``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .errors import ScenarioError

console = Console()
err = Console(stderr=True)


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


#: What `dclb run` prints, in order (the full summary is in run.json and the catalog).
HEADLINE_KEYS = [
    "flows_total", "flows_completed", "flows_cancelled", "flows_unfinished",
    "short_afct_us", "short_p99_fct_us", "long_afct_us", "long_goodput_gbps",
    "fct_0_100k_avg_us", "fct_0_100k_p99_us", "fct_100k_1m_avg_us", "fct_100k_1m_p99_us", "fct_1m_inf_avg_us", "fct_1m_inf_p99_us",
    "mean_slowdown", "deadline_miss_rate",
    "drops", "ecn_marks", "retransmissions", "spurious_retransmissions", "timeouts", "out_of_order",
    "events", "events_per_s", "sim_time_us", "wall_s", "fct_policy",
]


def _summary_table(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, value in rows:
        table.add_row(label, value)
    return table


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dclb")
def cli() -> None:
    """dclb: packet-level simulation of load balancing in leaf-spine datacenter fabrics."""


@cli.command("run")
@click.argument("scenario_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE", help="Override any scenario field, e.g. --set lb.scheme=rps --set traffic.load=0.7 (repeatable).")
@click.option("--seed", type=int, default=None, help="Override the scenario seed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("dclb-results"), show_default=True, help="Results directory (run folders + catalog).")
@click.option("--no-store", is_flag=True, help="Do not write results; just print the summary.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.option("--dry-run", is_flag=True, help="Validate and show what would run, without simulating.")
@click.option("--dump-config", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write the resolved engine config (JSON) to this file.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def run_cmd(scenario_file: Path, overrides: tuple[str, ...], seed: int | None, out: Path, no_store: bool, as_json: bool, dry_run: bool, dump_config: Path | None, quiet: bool) -> None:
    """Run one scenario and print its summary."""
    from .runner import run
    from .scenario import describe_load, engine_config, load_scenario
    from .summary import summary_rows

    sc = load_scenario(scenario_file, list(overrides), seed)
    if dump_config is not None:
        dump_config.write_text(json.dumps(engine_config(sc), indent=1))
    header = f"{sc.name}: {sc.topology.leaves} leaves x {sc.topology.spines} spines x {sc.topology.hosts_per_leaf} hosts, lb={sc.lb.scheme}, seed={sc.seed}"
    if not as_json:
        err.print(header, soft_wrap=True, highlight=False)
        for line in describe_load(sc):
            err.print("  " + line, soft_wrap=True, highlight=False)
    if dry_run:
        return
    bar, update = _progress_bar(0, enabled=not quiet and not as_json)
    with bar:
        result = run(sc, out=None if no_store else out, progress=update)
    if as_json:
        click.echo(json.dumps({"run_id": result.run_id, "path": str(result.path) if result.path else None, **result.summary}, default=float))
        return
    console.print(_summary_table(f"run {result.run_id}", summary_rows(result.summary, HEADLINE_KEYS)))
    if result.path is not None:
        console.print(f"results: {result.path}  (catalog: {Path(out_dir_of(result.path)) / 'catalog.duckdb'})")


def out_dir_of(run_path: Path) -> Path:
    return run_path.parent.parent


@cli.command("schemes")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def schemes_cmd(as_json: bool) -> None:
    """List the load-balancing schemes and their parameters."""
    from . import _core

    schemes = _core.schemes()
    if as_json:
        click.echo(json.dumps(schemes, indent=1))
        return
    for s in schemes:
        console.print(f"[bold]{s['name']}[/bold]  ({s['placement']}, per {s['granularity']}): {s['summary']}")
        if not s["params"]:
            console.print("    no parameters")
        for p in s["params"]:
            unit = f" {p['unit']}" if p["unit"] else ""
            choices = f" (one of {', '.join(p['choices'])})" if p["choices"] else ""
            console.print(f"    lb.{p['name']} = {p['default']!r}{unit}{choices}: {p['doc']}  [dim][{p['source']}][/dim]")


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
        click.echo(json.dumps(rows, indent=1))
        return
    table = Table("name", "mean", "points", "description")
    for r in rows:
        table.add_row(r["name"], f"{r['mean_bytes'] / 1e6:.3f} MB", str(r["points"]), r["description"])
    console.print(table)
    console.print("Use a name, a path to your own CDF file, or a mixture such as {websearch = 0.5, datamining = 0.5} (weights by flow count).")


@cli.command("bench")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE", help="Override a field of the benchmark scenario.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def bench_cmd(overrides: tuple[str, ...], as_json: bool) -> None:
    """Run benchmark scenario S1 and report events/s, wall time and peak memory."""
    from .bench import run_bench

    report = run_bench(list(overrides))
    if as_json:
        click.echo(json.dumps(report))
        return
    rows = [
        ("scenario", report["scenario"]),
        ("flows", f"{report['flows']:,} ({report['flows_completed']:,} completed)"),
        ("events", f"{report['events']:,}"),
        ("wall time", f"{report['wall_s']:.2f} s"),
        ("events per second", f"{report['events_per_s'] / 1e6:.2f} M"),
        ("simulated time", f"{report['sim_time_us'] / 1e3:.1f} ms"),
        ("peak RSS of this process", f"{report['peak_rss_mb']:.0f} MB (before the run: {report['rss_before_mb']:.0f} MB)"),
        ("engine memory (estimate)", f"{report['engine_mb']:.1f} MB"),
        ("peak flows / packets in flight", f"{report['peak_flows_active']:,} / {report['peak_packets_in_flight']:,}"),
        ("memory per flow", f"{report['bytes_per_flow_engine']:.0f} B engine estimate, {report['bytes_per_flow_rss']:.0f} B of RSS growth (every flow's state is allocated at start)"),
    ]
    console.print(_summary_table("dclb bench", rows))


def main() -> None:
    """Entry point: runs the CLI and turns user errors into one-line messages."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        err.print("interrupted; nothing was written")
        sys.exit(130)
    except KeyboardInterrupt:
        err.print("interrupted; nothing was written")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except ScenarioError as e:
        err.print(f"[red]error:[/red] {e}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
    except ValueError as e:  # StoreError and engine errors are ValueErrors with a one-line message
        err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except OSError as e:
        err.print(f"[red]error:[/red] {e.filename or ''}: {e.strerror}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except Exception as e:  # a bug in dclb, not a user mistake
        if os.environ.get("DCLB_DEBUG"):
            raise
        err.print(f"[red]internal error:[/red] {type(e).__name__}: {e} (rerun with DCLB_DEBUG=1 for a traceback, and please report it)", highlight=False, soft_wrap=True)
        sys.exit(3)


if __name__ == "__main__":
    main()

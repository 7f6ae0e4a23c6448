"""Resolution: a validated scenario's files read once, its host sets expanded, the engine config built and
checked by the engine's one check, and engine errors named as the user wrote the field.

A validated scenario is resolved once (:func:`resolve`): host sets expanded (a long-lived source without
``receivers`` pairs each sender with the host at its position on the next leaf), workloads and flow lists
read, the engine config built. The check, :func:`describe_load` and :func:`engine_config` share that
resolution, so a run reads each file once; scenarios are immutable so that it cannot go stale. Everything
that relates one value to another -- whether links stay connected, a scheme's parameters, whether a load can
be carried, whether a source can make a flow at all, whether the run fits the engine's clock, has work for
every source and stays within the event limit -- is decided by the engine's one check (``Config::check``),
asked through ``_core.check_config`` with the machine's memory limit and the event limit
(:func:`dclb.preview.engine_event_limit`). The engine's errors (``dclb._core.ConfigError``) carry the field as a path of keys and indices, which :meth:`Resolution.user_field` renames to what the user wrote:
a single-source scenario's ``traffic.sources[0].load`` is ``traffic.load``, a listed flow its CSV file and
line, a workload component its mixture key.
"""

from __future__ import annotations

import csv
import io
import json
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from .. import _core
from .. import workloads as wl
from ..errors import ScenarioError
from ..hosts import host_set_size, parse_hosts
from ..memory import check_before_expanding, memory_limit
from ..textfiles import read_text
from .schema import COMPLETE, ListedFlow, Scenario, Source, Topology, validation_message

@dataclass(frozen=True)
class ResolvedSource:
    """One traffic source with its host sets expanded and its files read, and where each engine item of it
    came from (so that an engine message can name what the user wrote)."""

    field: str  # the user's name for the source: "traffic", or "traffic.sources[i]" with several
    source: Source
    senders: list[int]
    receivers: list[int]
    workloads: list[tuple[str, float, wl.Workload]]  # (user field, weight, workload), in engine order
    listed: list[dict[str, Any]]  # the explicit flows: inline ones, then the CSV's
    csv_path: Optional[Path]
    csv_lines: array  # file line of each CSV flow

    def engine(self) -> dict[str, Any]:
        s = self.source
        return {
            "pattern": s.pattern,
            "senders": self.senders,
            "receivers": self.receivers,
            "workload": [{"weight": w, "points": [list(p) for p in c.points]} for _, w, c in self.workloads],
            "size_bytes": s.size_bytes,
            "load": s.load,
            "load_basis": s.load_basis,
            "flows": s.flows,
            "start_us": s.start_us,
            "duration_us": s.duration_us,
            "spread_us": s.spread_us,
            "rounds": s.rounds,
            "period_us": s.period_us,
            "transport": s.transport,
            "udp_rate_gbps": s.udp_rate_gbps,
            "best_effort": s.best_effort,
            "deadline": s.deadline.engine(),
            "priority": s.priority.engine(),
            "inter_leaf_only": s.inter_leaf_only,
            "list": self.listed,
        }

    def item_origin(self, kind: str, index: int) -> str:
        """Where engine item ``workload[index]`` or ``list[index]`` came from."""
        if kind == "workload":
            return self.workloads[index][0]
        inline = len(self.source.flow_list)
        if index < inline:
            return f"{self.field}.flow_list[{index}]"
        return f"{self.csv_path}:{self.csv_lines[index - inline]}"


def _dotted_path(parts: Sequence[str | int], start: str = "") -> str:
    """``("links", 0, "leaf")`` after ``start`` as a field name: ``start.links[0].leaf``."""
    out = start
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f"{'.' if out else ''}{part}"
    return out


@dataclass(frozen=True)
class Resolution:
    """What a scenario resolves to: its sources read once, and the engine config built from them.

    (Not to be confused with :meth:`Scenario.resolved`, the plain data that identifies a run.)"""

    sources: list[ResolvedSource]
    config: dict[str, Any]

    def user_field(self, path: Sequence[str | int]) -> str:
        """The user's name for a field the engine names by ``path`` (keys and list indices, in the engine's
        spelling: ``("traffic", "sources", 0, "load")``, a scheme parameter ``("lb", "d")``): a single-source
        scenario's ``traffic.sources[0].load`` is ``traffic.load``, a listed flow is its CSV file and line (or
        ``flow_list[i]``), a workload component its mixture key."""
        if len(path) < 3 or tuple(path[:2]) != ("traffic", "sources") or not isinstance(path[2], int) or path[2] >= len(self.sources):
            return _dotted_path(path)
        source, rest = self.sources[path[2]], tuple(path[3:])
        if len(rest) >= 2 and rest[0] in ("workload", "list") and isinstance(rest[1], int):
            return _dotted_path(rest[2:], source.item_origin(rest[0], rest[1]))
        if rest[:1] == ("list",):  # the engine's name for the explicit flows
            rest = ("flow_list", *rest[1:])
        return _dotted_path(rest, source.field)

    def user_error(self, error: Any) -> ScenarioError:
        """An engine error (``dclb._core.ConfigError``: a field path and a message) as the user's one line."""
        if not error.path:
            return ScenarioError(error.message)
        return ScenarioError(f"{self.user_field(error.path)}: {error.message}")


def resolve(sc: Scenario) -> Resolution:
    """Resolves ``sc`` once (host sets, workloads, flow lists) and checks it with the engine's one check;
    raises ScenarioError naming the user's field. Later calls return the same resolution."""
    if sc._resolution is None:
        _check_memory_before_expanding(sc)
        loaded: dict[str, wl.Workload] = {}
        sources = [_resolve_source(sc, i, s, loaded) for i, s in enumerate(sc.sources())]
        resolution = Resolution(sources, _engine_config(sc, sources))
        from ..preview import engine_event_limit

        try:
            _core.check_config(json.dumps(resolution.config), memory_limit(), engine_event_limit())
        except _core.ConfigError as e:
            raise resolution.user_error(e) from None
        sc._resolution = resolution
    return sc._resolution


def _check_memory_before_expanding(sc: Scenario) -> None:
    """The fabric and the host sets within the memory limit, before the sets are expanded (dclb.memory)."""
    t = sc.topology
    sets = []
    for i, s in enumerate(sc.sources()):
        field = "traffic" if not sc.traffic.sources else f"traffic.sources[{i}]"
        sets += [(f"{field}.{name}", host_set_size(spec, t.leaves, t.hosts_per_leaf)) for name, spec in (("senders", s.senders), ("receivers", s.receivers))]
    check_before_expanding(_engine_config(sc, []), sets)


def _resolve_source(sc: Scenario, i: int, s: Source, loaded: dict[str, wl.Workload]) -> ResolvedSource:
    """Source ``i``; ``loaded`` holds the workloads read so far (sources often share one)."""
    t = sc.topology
    field = "traffic" if not sc.traffic.sources else f"traffic.sources[{i}]"
    workloads = []
    if s.workload is not None and s.size_bytes is None:
        workloads = _workload_components(s.workload, sc._base_dir, f"{field}.workload", loaded)
    listed = [f.model_dump() for f in s.flow_list]
    csv_path, csv_lines = None, array("L")
    if s.flows_csv:
        csv_path, rows, csv_lines = _read_flow_csv(s.flows_csv, sc._base_dir, f"{field}.flows_csv")
        listed += rows
    senders = parse_hosts(s.senders, t.leaves, t.hosts_per_leaf, f"{field}.senders")
    receivers = parse_hosts(s.receivers, t.leaves, t.hosts_per_leaf, f"{field}.receivers")
    if s.pattern == "long_lived":
        receivers = _long_lived_receivers(s, senders, receivers, t, field)
    return ResolvedSource(
        field=field,
        source=s,
        senders=senders,
        receivers=receivers,
        workloads=workloads,
        listed=listed,
        csv_path=csv_path,
        csv_lines=csv_lines,
    )


def _long_lived_receivers(s: Source, senders: list[int], receivers: list[int], t: Topology, field: str) -> list[int]:
    """The receivers of a long-lived source, in the engine's pairing: sender ``i`` (senders in increasing host
    order) sends to receiver ``i mod n``.

    Without ``receivers``, each sender is paired with the host at the same position on the next leaf (host
    ``h`` with ``(h + hosts_per_leaf) mod hosts``), so every flow crosses the fabric; the list returned then
    holds one receiver per sender, in sender order. A pair of a host with itself makes no flow, so any such
    pair is an error rather than a flow silently left out."""
    if "receivers" not in s.model_fields_set:
        if t.leaves < 2:
            raise ScenarioError(
                f"{field}.receivers: long-lived senders default to the host at the same position on the next leaf, "
                "and this fabric has one leaf; give receivers that differ from the senders"
            )
        hosts = t.leaves * t.hosts_per_leaf
        return [(h + t.hosts_per_leaf) % hosts for h in senders]
    for i, host in enumerate(senders):
        if receivers[i % len(receivers)] == host:
            raise ScenarioError(
                f"{field}.receivers: long-lived sender {i} (host {host}) is paired with itself (sender i sends to "
                f"receiver i mod {len(receivers)}, both in increasing host order); give receivers that differ from the "
                "senders at the same positions, or leave receivers out to pair each sender with a host on the next leaf"
            )
    return receivers


def _workload_components(spec: str | dict[str, float], base_dir: Path, field: str, loaded: dict[str, wl.Workload]) -> list[tuple[str, float, wl.Workload]]:
    """A workload name or file, or a mixture of them by weight: (user field, weight, workload) each."""

    def load(name: str, where: str) -> wl.Workload:
        if name not in loaded:
            loaded[name] = wl.load(name, base_dir, where)
        return loaded[name]

    if isinstance(spec, str):
        return [(field, 1.0, load(spec, field))]
    return [(f"{field}.{name}", float(weight), load(name, f"{field}.{name}")) for name, weight in spec.items()]


def _csv_number(name: str, text: Optional[str]) -> int | float:
    """A CSV cell as a number: an int when it is written as one, else a float; ValueError naming the column."""
    if text is None or not text.strip():
        raise ValueError(f"{name}: missing value")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name}: not a number: {text.strip()!r}") from None


#: The columns of a flow-list CSV: the required ones, then the optional one.
CSV_REQUIRED = ("start_us", "src", "dst", "size_bytes")
CSV_OPTIONAL = ("deadline_us",)


def _read_flow_csv(spec: str, base_dir: Path, field: str) -> tuple[Path, list[dict[str, Any]], array]:
    """The flows of a CSV list (header ``start_us,src,dst,size_bytes[,deadline_us]``) and their file lines.

    Every column must be one of those (a column dclb would not read is an error, not dropped) and every row
    must have as many cells as the header; a blank line is skipped."""
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    text = read_text(path, "flow list", field)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next((row for row in reader if any(cell.strip() for cell in row)), None)
    allowed = (*CSV_REQUIRED, *CSV_OPTIONAL)
    wanted = f"a header with columns {', '.join(CSV_REQUIRED)} ({', '.join(CSV_OPTIONAL)} optional)"
    if header is None:
        raise ScenarioError(f"{field}: {path} is empty; a flow list needs {wanted} and at least one row")
    names = [cell.strip() for cell in header]
    unknown = [name for name in names if name not in allowed]
    if unknown:
        raise ScenarioError(f"{path}:{reader.line_num}: unknown column {', '.join(map(repr, unknown))}; a flow list has {wanted}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ScenarioError(f"{path}:{reader.line_num}: column {', '.join(repeated)} appears twice in the header")
    missing = [name for name in CSV_REQUIRED if name not in names]
    if missing:
        raise ScenarioError(f"{field}: {path} needs {wanted}; missing: {', '.join(missing)}")
    rows, lines = [], array("L")
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(names):
            raise ScenarioError(
                f"{path}:{reader.line_num}: bad flow row (it has {len(row)} cell{'s' if len(row) != 1 else ''}, the header {len(names)}: {', '.join(names)})"
            )
        # Each cell is read as a number (an int when it is one), then checked by ListedFlow like an inline
        # flow: "1000.7" bytes or "inf" are refused, never truncated. An empty optional cell means none.
        cells = dict(zip(names, row))
        if not (cells.get("deadline_us") or "").strip():
            cells.pop("deadline_us", None)
        try:
            flow = ListedFlow(**{name: _csv_number(name, text) for name, text in cells.items()})
        except ValueError as e:
            detail = validation_message(e, model=ListedFlow) if isinstance(e, ValidationError) else str(e)
            raise ScenarioError(f"{path}:{reader.line_num}: bad flow row ({detail})") from None
        rows.append(flow.model_dump())
        lines.append(reader.line_num)
    if not rows:
        raise ScenarioError(f"{field}: {path} has a header but no flows; a flow list needs at least one row")
    return path, rows, lines


def _engine_config(sc: Scenario, sources: list[ResolvedSource]) -> dict[str, Any]:
    return {
        "seed": sc.seed,
        "topology": sc.topology.model_dump(context=COMPLETE),
        "transport": sc.transport.model_dump(),
        "lb": {"scheme": sc.lb.scheme, "params": sc.lb.params(), "timing": sc.lb.timing},
        "sources": [s.engine() for s in sources],
        "run": {
            "horizon_us": sc.run.horizon_us,
            "sampler": sc.run.sampler.model_dump() if sc.run.sampler else None,
            # The measurement window, only when given (the engine's config without one is as before it existed).
            **{name: getattr(sc.run, name) for name in ("warmup_us", "cooldown_us", "start_candidates", "drain_us") if getattr(sc.run, name) is not None},
            **({"start": sc.run.start} if sc.run.start != "empty" else {}),
        },
    }


def engine_config(sc: Scenario) -> dict[str, Any]:
    """The resolved config the Rust engine takes (see ``crates/dclb-core/src/config.rs``)."""
    return resolve(sc).config


def describe_load(sc: Scenario) -> list[str]:
    """One line per source: pattern, workload mean and the load on both bases, as the engine computes them."""
    resolution = resolve(sc)
    facts = _core.describe_sources(json.dumps(resolution.config))
    lines = []
    scheme = next((s for s in _core.schemes() if s["name"] == sc.lb.scheme), None)
    scaled = [p["name"] for p in scheme["params"] if p["rtt_us"] and p["name"] not in sc.lb.params()] if scheme else []
    if scaled:
        rtt = _core.base_rtt_us(json.dumps(resolution.config))
        how = f"scaled to this fabric's base RTT of {rtt:.1f} us" if sc.lb.timing == "fabric" else "as published (lb.timing = published)"
        lines.append(f"timing defaults ({', '.join('lb.' + n for n in scaled)}) {how}")
    for i, (src, fact) in enumerate(zip(resolution.sources, facts)):
        s = src.source
        text = f"source {i}: {s.pattern}, {len(src.senders)} senders, {s.transport}"
        if s.pattern == "long_lived":
            paired = "receivers" in s.model_fields_set
            text += f", sender i to receiver i mod {len(src.receivers)}" if paired else ", each to the host at its position on the next leaf"
        if src.workloads:
            label = s.workload if isinstance(s.workload, str) else " + ".join(f"{w:g}x{n}" for n, w in s.workload.items())
            text += f", workload {label} (mean {fact['mean_bytes'] / 1e6:.3f} MB)"
        elif s.size_bytes:
            text += f", {s.size_bytes:,} B per flow"
        if s.pattern == "poisson":
            offered = fact["offered_bps"]
            text += (
                f", load {s.load:g} of {s.load_basis} = {offered / 1e9:.1f} Gbps "
                f"(access load {offered / fact['access_capacity_bps']:.2f}, fabric load {offered / fact['fabric_capacity_bps']:.2f})"
            )
            if s.flows is not None and s.duration_us is not None:
                # Both bounds are kept (a cap on a window: the reproductions' smallest scale uses it); say so.
                text += f"; arrivals stop after {s.flows:,} flows or {s.duration_us:g} us, whichever comes first"
        lines.append(text)
    return lines

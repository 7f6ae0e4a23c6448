"""Scenarios: the TOML a user writes, validated, resolved once, and turned into the engine's config.

A scenario has five tables (every field has a documented default; see ``docs/scenario.md``):

* ``[topology]`` — leaves, spines, hosts per leaf, parallel links, rates, delays, buffers, ECN threshold, and
  ``[[topology.links]]`` overrides (a slower, longer or failed leaf-spine link);
* ``[transport]`` — TCP/DCTCP constants shared by all flows;
* ``[lb]`` — ``scheme`` plus that scheme's parameters (``dclb schemes`` lists them);
* ``[traffic]`` — one source, or defaults for several ``[[traffic.sources]]`` (each source inherits any field
  it does not set from the ``[traffic]`` table);
* ``[run]`` — horizon, short/long threshold, optional sampler.

Validation has two owners. Here, pydantic checks syntax and types (unknown fields, wrong types, a value out
of its own range) and the files a scenario names are read (CDFs, flow-list CSVs, with file and line in their
messages). Everything that relates one value to another -- whether links stay connected, a scheme's
parameters, whether a load can be carried, whether a source can make a flow at all -- is decided by the
engine's one check (``Config::check``), asked through ``_core.check_config``. Both raise
:class:`~dclb.errors.ScenarioError` with one line that names the field as the user wrote it.

A validated scenario is resolved once (:func:`resolve`): host sets expanded, workloads and flow lists read,
the engine config built. The check, :func:`describe_load` and :func:`engine_config` share that resolution,
so a run reads each file once; scenarios are immutable so that it cannot go stale. Overrides
(``--set a.b=value``) are applied to the raw TOML first, so they are validated exactly like the file.
"""

from __future__ import annotations

import copy
import csv
import json
import re
import tomllib
from array import array
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Optional, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from . import _core
from . import workloads as wl
from .errors import ScenarioError
from .hosts import host_set_size, parse_hosts
from .memory import check_before_expanding, memory_limit

# The engine's documented defaults, read once: the schema below takes its defaults from them rather than
# repeating them.
_ENGINE = json.loads(_core.default_config())
_PARTS = json.loads(_core.default_parts())
_TOPOLOGY, _TRANSPORT, _RUN = _ENGINE["topology"], _ENGINE["transport"], _ENGINE["run"]
_SOURCE, _SAMPLER = _PARTS["source"], _PARTS["sampler"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkOverride(_Strict):
    """A change to one leaf-spine link (or all parallel links of a pair when ``link`` is omitted)."""

    leaf: int = Field(ge=0)
    spine: int = Field(ge=0)
    link: Optional[int] = Field(None, ge=0)
    rate_gbps: Optional[float] = Field(None, gt=0)
    delay_us: Optional[float] = Field(None, ge=0)
    failed: bool = False
    blackhole: bool = False
    loss_rate: float = Field(0.0, ge=0, le=1)
    direction: Literal["both", "up", "down"] = "both"


class Topology(_Strict):
    leaves: int = Field(_TOPOLOGY["leaves"], ge=1)
    spines: int = Field(_TOPOLOGY["spines"], ge=1)
    hosts_per_leaf: int = Field(_TOPOLOGY["hosts_per_leaf"], ge=1)
    links_per_pair: int = Field(_TOPOLOGY["links_per_pair"], ge=1)
    host_rate_gbps: float = Field(_TOPOLOGY["host_rate_gbps"], gt=0)
    fabric_rate_gbps: float = Field(_TOPOLOGY["fabric_rate_gbps"], gt=0)
    host_delay_us: float = Field(_TOPOLOGY["host_delay_us"], ge=0)
    fabric_delay_us: float = Field(_TOPOLOGY["fabric_delay_us"], ge=0)
    queue_unit: Literal["bytes", "packets"] = _TOPOLOGY["queue_unit"]
    buffer_bytes: Optional[int] = Field(_TOPOLOGY["buffer_bytes"], ge=1)
    buffer_packets: Optional[int] = Field(_TOPOLOGY["buffer_packets"], ge=1)
    ecn_k_bytes: Optional[int] = Field(_TOPOLOGY["ecn_k_bytes"], ge=0)
    ecn_k_packets: Optional[float] = Field(_TOPOLOGY["ecn_k_packets"], ge=0)
    ecn_k_by_role: dict[Literal["host_up", "leaf_up", "leaf_down", "spine_down"], float] = {}
    links: list[LinkOverride] = []

    @property
    def hosts(self) -> int:
        return self.leaves * self.hosts_per_leaf


class Transport(_Strict):
    """TCP/DCTCP constants. Defaults: baselines.md §10-11 (IW 10, dupACK 3, minRTO 5 ms, g = 1/16, alpha0 = 1)."""

    mss_bytes: int = Field(_TRANSPORT["mss_bytes"], ge=1, le=65000)
    header_bytes: int = Field(_TRANSPORT["header_bytes"], ge=0)
    ack_bytes: int = Field(_TRANSPORT["ack_bytes"], ge=1)
    init_cwnd_packets: int = Field(_TRANSPORT["init_cwnd_packets"], ge=1)
    init_ssthresh_bytes: Optional[int] = Field(_TRANSPORT["init_ssthresh_bytes"], ge=1)
    dupack_threshold: int = Field(_TRANSPORT["dupack_threshold"], ge=1)
    min_rto_us: float = Field(_TRANSPORT["min_rto_us"], gt=0)
    init_rto_us: float = Field(_TRANSPORT["init_rto_us"], gt=0)
    max_rto_us: float = Field(_TRANSPORT["max_rto_us"], gt=0)
    rto_granularity_us: float = Field(_TRANSPORT["rto_granularity_us"], ge=0)
    dctcp_g: float = Field(_TRANSPORT["dctcp_g"], gt=0, le=1)
    dctcp_alpha_init: float = Field(_TRANSPORT["dctcp_alpha_init"], ge=0, le=1)
    nic_queue_packets: int = Field(_TRANSPORT["nic_queue_packets"], ge=1)
    host_queue_limit_bytes: Optional[int] = Field(_TRANSPORT["host_queue_limit_bytes"], ge=0)
    host_ack_priority: bool = _TRANSPORT["host_ack_priority"]
    handshake: bool = _TRANSPORT["handshake"]
    reseq_timeout_us: float = Field(_TRANSPORT["reseq_timeout_us"], ge=0)
    sack: bool = _TRANSPORT["sack"]
    dsack_undo: bool = _TRANSPORT["dsack_undo"]
    cwnd_validation: bool = _TRANSPORT["cwnd_validation"]


#: The fields each deadline kind needs.
_DEADLINE_FIELDS = {"none": (), "fixed": ("us",), "uniform": ("lo_us", "hi_us"), "slack": ("factor",)}


class Deadline(_Strict):
    """How deadlines are drawn: none; fixed (``us``); uniform in [``lo_us``, ``hi_us``]; slack (``factor`` x ideal FCT)."""

    kind: Literal["none", "fixed", "uniform", "slack"] = _SOURCE["deadline"]["kind"]
    us: Optional[float] = Field(None, gt=0)
    lo_us: Optional[float] = Field(None, gt=0)
    hi_us: Optional[float] = Field(None, gt=0)
    factor: Optional[float] = Field(None, gt=0)

    @model_validator(mode="after")
    def _complete(self) -> "Deadline":
        for name in _DEADLINE_FIELDS[self.kind]:
            if getattr(self, name) is None:
                raise ValueError(f"{name}: required for deadline kind '{self.kind}'")
        return self

    def engine(self) -> dict[str, Any]:
        return {"kind": self.kind, **{name: getattr(self, name) for name in _DEADLINE_FIELDS[self.kind]}}


class ListedFlow(_Strict):
    start_us: float = Field(ge=0)
    src: int = Field(ge=0)
    dst: int = Field(ge=0)
    size_bytes: int = Field(ge=1)
    deadline_us: Optional[float] = Field(None, gt=0)


WorkloadSpec = Union[str, dict[str, float]]
HostSet = Union[str, int, list[Union[int, str]]]


class Source(_Strict):
    """One traffic source. Patterns: poisson (at a load), group (N flows between two sets), incast (N-to-1),
    long_lived (one unbounded flow per sender), list (explicit flows, inline or from ``flows_csv``).

    What each pattern needs (a load, a flow count, a workload...) is the engine's check."""

    pattern: Literal["poisson", "group", "incast", "long_lived", "list"] = _SOURCE["pattern"]
    workload: Optional[WorkloadSpec] = None
    size_bytes: Optional[int] = Field(None, ge=1)
    load: Optional[float] = None
    load_basis: Literal["access", "fabric"] = _SOURCE["load_basis"]
    flows: Optional[int] = Field(None, ge=1)
    senders: HostSet = "all"
    receivers: HostSet = "all"
    start_us: float = Field(_SOURCE["start_us"], ge=0)
    duration_us: Optional[float] = Field(None, gt=0)
    spread_us: float = Field(_SOURCE["spread_us"], ge=0)
    rounds: int = Field(_SOURCE["rounds"], ge=1)
    period_us: float = Field(_SOURCE["period_us"], ge=0)
    transport: Literal["dctcp", "newreno", "udp"] = _SOURCE["transport"]
    udp_rate_gbps: float = Field(_SOURCE["udp_rate_gbps"], gt=0)
    best_effort: bool = _SOURCE["best_effort"]
    deadline: Deadline = Deadline()
    inter_leaf_only: bool = _SOURCE["inter_leaf_only"]
    flows_csv: Optional[str] = None
    flow_list: list[ListedFlow] = []

    @field_validator("load")
    @classmethod
    def _load_range(cls, v: Optional[float]) -> Optional[float]:
        if v is not None and not 0.0 < v <= 1.0:
            raise ValueError(f"must be in (0, 1] of its load_basis capacity, got {v}")
        return v


class Traffic(Source):
    """A source (used when ``sources`` is empty), and the defaults every entry of ``sources`` inherits."""

    sources: list[dict[str, Any]] = []


class Sampler(_Strict):
    interval_us: float = Field(_SAMPLER["interval_us"], gt=0)
    ports: Optional[list[int]] = None
    flows: list[int] = []


class Run(_Strict):
    horizon_us: Optional[float] = Field(_RUN["horizon_us"], gt=0)
    short_threshold_bytes: int = Field(100_000, ge=1)
    sampler: Optional[Sampler] = None


class Lb(BaseModel):
    """``scheme`` plus the scheme's own parameters (checked against the engine's registry)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    scheme: str = _ENGINE["lb"]["scheme"]
    #: ``fabric``: timing defaults (flowlet timeouts, delay thresholds) scaled to this fabric's base RTT;
    #: ``published``: as their sources give them, whatever the fabric.
    timing: Literal["fabric", "published"] = _ENGINE["lb"]["timing"]

    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Sweep(_Strict):
    """The optional ``[sweep]`` table: a grid of overrides and a seed count (see :mod:`dclb.sweeps`).

    ``grid`` maps a dotted scenario field to its values: a TOML array (taken literally) or a text such as
    ``"ecmp,rps"`` or ``"0.2:0.8:0.2"`` (read like ``dclb sweep --grid``). ``seeds`` runs every grid point
    with the seeds ``seed, seed + 1, ..., seed + seeds - 1``. The table is not part of a run's identity: the
    resolved scenario (and so the run id) of a grid point leaves it out.
    """

    grid: dict[str, Union[list[Any], str, int, float, bool]] = {}
    seeds: int = Field(1, ge=1, le=100_000)

    @field_validator("grid")
    @classmethod
    def _known_fields(cls, grid: dict[str, Any]) -> dict[str, Any]:
        for key, values in grid.items():
            problem = field_path_problem(key)
            if problem:
                raise ValueError(f"{key}: {problem}")
            if isinstance(values, list) and not values:
                raise ValueError(f"{key}: needs at least one value")
        return grid


class Scenario(_Strict):
    name: str = "scenario"
    description: str = ""
    seed: int = Field(1, ge=0, lt=2**63)
    topology: Topology = Topology()
    transport: Transport = Transport()
    lb: Lb = Lb()
    traffic: Traffic
    run: Run = Run()
    sweep: Optional[Sweep] = None

    # Where relative paths (CDF files, flow lists) resolve; not part of the scenario's identity.
    _base_dir: Path = Path(".")
    # What the scenario resolves to, once checked (see `resolve`).
    _resolution: Optional["Resolution"] = None

    def sources(self) -> list[Source]:
        """The traffic sources, each with the ``[traffic]`` defaults filled in."""
        if not self.traffic.sources:
            return [Source.model_validate(self.traffic.model_dump(exclude={"sources"}))]
        defaults = self.traffic.model_dump(exclude={"sources"}, exclude_unset=True)
        out = []
        for i, raw in enumerate(self.traffic.sources):
            try:
                out.append(Source.model_validate({**defaults, **raw}))
            except ValidationError as e:
                raise ScenarioError(_format_validation(e, prefix=f"traffic.sources[{i}]")) from None
        return out

    def resolved(self) -> dict[str, Any]:
        """The scenario as plain data with every default filled in (what the store records and hashes).

        The ``[sweep]`` table is left out: a grid point is the same run whichever grid it came from."""
        return self.model_dump(mode="json", exclude={"sweep"})


# --------------------------------------------------------------------------------------------------------
# Errors


def _dotted(loc: tuple[Any, ...], prefix: str) -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "int", "list[union[int,str]]", "dict[str,float]", "function-after[_load_range(), nullable[float]]"):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        for candidate in (ann, *getattr(ann, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                current = candidate
                break
            for inner in getattr(candidate, "__args__", ()):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    current = inner
    return sorted(getattr(current, "model_fields", {}))


def _format_validation(err: ValidationError, prefix: str = "", model: type[BaseModel] | None = None) -> str:
    first = err.errors()[0]
    loc = tuple(first.get("loc", ()))
    path = _dotted(loc, prefix)
    msg = first.get("msg", "invalid value")
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
        # Model-level validators put the field name first ("load: ..."): join it to the path.
        head, sep, rest = msg.partition(": ")
        if sep and " " not in head and head.replace("_", "").replace("[", "").replace("]", "").replace(".", "").isalnum():
            return f"{path + '.' if path else ''}{head}: {rest}"
    if first.get("type") == "extra_forbidden":
        allowed = _allowed_fields(model or Scenario, loc) if model is not None or not prefix else _allowed_fields(Source, loc)
        hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
        return f"{path}: unknown field{hint}"
    if first.get("type") == "missing":
        return f"{path}: required field is missing"
    given = first.get("input")
    shown = f" (got {given!r})" if given is not None and not isinstance(given, dict) and f"got {given!r}" not in msg else ""
    return f"{path}: {msg[0].lower() + msg[1:]}{shown}"


# --------------------------------------------------------------------------------------------------------
# Field paths (for sweep grids)


def _annotation_parts(ann: Any) -> list[Any]:
    """The alternatives of a field annotation (``Optional[X]`` and unions are split)."""
    if get_origin(ann) in (Union, UnionType):
        out: list[Any] = []
        for arg in get_args(ann):
            if arg is not type(None):
                out.extend(_annotation_parts(arg))
        return out
    return [ann]


def field_path_problem(dotted: str) -> str | None:
    """Why ``dotted`` (e.g. ``"traffic.load"``) is not a scenario field one can override, or None if it is.

    The path is checked against the scenario schema only: ``lb.<name>`` is accepted for any name (scheme
    parameters are checked per run, against the scheme), so are keys below free-form tables such as
    ``traffic.sources.0``. ``seed`` and ``sweep`` are refused: seeds have their own option, and a grid
    cannot vary itself.
    """
    parts = dotted.split(".")
    if not dotted or any(not p for p in parts):
        return "not a field name (expected dotted names such as traffic.load)"
    if parts[0] == "sweep":
        return "the [sweep] table cannot be part of a grid"
    if parts == ["seed"]:
        return "seeds are chosen with `seeds` (--seeds N), not in the grid"
    current: list[Any] = [Scenario]
    for i, part in enumerate(parts):
        here = ".".join(parts[:i]) or "the scenario"
        models = [c for c in current if isinstance(c, type) and issubclass(c, BaseModel)]
        lists = [c for c in current if get_origin(c) is list]
        free = any(c is Any or get_origin(c) is dict or c is dict for c in current)
        if part.isdigit() and lists:
            current = [p for c in lists for p in _annotation_parts(get_args(c)[0])]
            continue
        if models:
            model = models[0]
            if part in model.model_fields:
                current = _annotation_parts(model.model_fields[part].annotation)
                continue
            if model.model_config.get("extra") == "allow":
                return None
            if not free:
                return f"unknown field '{part}' in {here}; allowed: {', '.join(sorted(model.model_fields))}"
        if free:
            return None
        return f"{here} is not a table, so it has no field '{part}'"
    return None


# --------------------------------------------------------------------------------------------------------
# Loading and overrides


def parse_override(text: str) -> tuple[list[str | int], Any]:
    """``a.b.c=value`` -> (path, value). The value is read as TOML when it parses, else as a string."""
    if "=" not in text:
        raise ScenarioError(f"--set {text!r}: expected FIELD=VALUE, e.g. --set lb.scheme=rps")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key:
        raise ScenarioError(f"--set {text!r}: empty field name")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return field_path(key), value


def set_field(data: dict[str, Any], path: list[str | int], value: Any, label: str) -> None:
    """Sets ``data[path[0]][path[1]]... = value`` in place, creating tables on the way; ``label`` names the
    option in error messages (e.g. ``--set a.b=1``)."""
    node: Any = data
    for i, part in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(node, list):
            if not isinstance(part, int) or part >= len(node):
                raise ScenarioError(f"{label}: no list element {part} at {'.'.join(map(str, path[:i + 1]))}")
            node = node[part]
        elif isinstance(node, dict):
            if part not in node or node[part] is None:
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
        else:
            raise ScenarioError(f"{label}: {'.'.join(map(str, path[:i]))} is not a table")
    last = path[-1]
    if isinstance(node, list):
        if not isinstance(last, int) or last >= len(node):
            raise ScenarioError(f"{label}: no list element {last}")
        node[last] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise ScenarioError(f"{label}: {'.'.join(map(str, path[:-1]))} is not a table")


def field_path(dotted: str) -> list[str | int]:
    """``"traffic.sources.0.load"`` -> ``["traffic", "sources", 0, "load"]``."""
    return [int(p) if p.isdigit() else p for p in dotted.split(".")]


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    data = copy.deepcopy(raw)
    for text in overrides:
        path, value = parse_override(text)
        set_field(data, path, value, f"--set {text}")
    return data


def from_dict(raw: dict[str, Any], base_dir: Path = Path("."), name: str = "scenario") -> Scenario:
    data = dict(raw)
    data.setdefault("name", name)
    if "traffic" not in data:
        raise ScenarioError("traffic: the scenario has no [traffic] table (every run needs at least one traffic source)")
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(_format_validation(e, model=Scenario)) from None
    sc._base_dir = base_dir
    resolve(sc)
    return sc


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    """The raw TOML of a scenario file; a missing, unreadable or malformed file is a one-line ScenarioError."""
    p = Path(path)
    if not p.is_file():
        raise ScenarioError(f"{path}: no such scenario file")
    try:
        return tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from None


def load_scenario(path: str | Path, overrides: list[str] | None = None, seed: int | None = None) -> Scenario:
    """Reads, overrides and validates a scenario file."""
    p = Path(path)
    raw = read_scenario_file(p)
    raw = apply_overrides(raw, overrides or [])
    if seed is not None:
        raw["seed"] = seed
    return from_dict(raw, base_dir=p.parent.resolve(), name=p.stem)


# --------------------------------------------------------------------------------------------------------
# Resolution: files read once, the engine's check, and the engine config


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


# An engine field path inside a source, and an item (a workload component, a listed flow) inside that.
_ENGINE_SOURCE = re.compile(r"traffic\.sources\[(\d+)\](.*)")
_ENGINE_ITEM = re.compile(r"\.(workload|list)\[(\d+)\](.*)")
#: Source fields the engine names differently.
_ENGINE_NAMES = {".list": ".flow_list"}


@dataclass(frozen=True)
class Resolution:
    """What a scenario resolves to: its sources read once, and the engine config built from them.

    (Not to be confused with :meth:`Scenario.resolved`, the plain data that identifies a run.)"""

    sources: list[ResolvedSource]
    config: dict[str, Any]

    def user_field(self, path: str) -> str:
        """The user's name for an engine field path: ``traffic.sources[0].load`` is ``traffic.load`` in a
        single-source scenario, a listed flow is its CSV line, a workload component its mixture key."""
        m = _ENGINE_SOURCE.fullmatch(path)
        if m is None:
            return path
        source, rest = self.sources[int(m[1])], m[2]
        item = _ENGINE_ITEM.fullmatch(rest)
        if item is not None:
            return source.item_origin(item[1], int(item[2])) + item[3]
        return source.field + _ENGINE_NAMES.get(rest, rest)

    def user_message(self, message: str) -> str:
        """An engine message (``field: what; allowed``) with the field named as the user wrote it."""
        field, sep, rest = message.partition(": ")
        return f"{self.user_field(field)}{sep}{rest}" if sep else message


def resolve(sc: Scenario) -> Resolution:
    """Resolves ``sc`` once (host sets, workloads, flow lists) and checks it with the engine's one check;
    raises ScenarioError naming the user's field. Later calls return the same resolution."""
    if sc._resolution is None:
        _check_memory_before_expanding(sc)
        loaded: dict[str, wl.Workload] = {}
        sources = [_resolve_source(sc, i, s, loaded) for i, s in enumerate(sc.sources())]
        resolution = Resolution(sources, _engine_config(sc, sources))
        try:
            _core.check_config(json.dumps(resolution.config), memory_limit())
        except ValueError as e:
            raise ScenarioError(resolution.user_message(str(e))) from None
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
    return ResolvedSource(
        field=field,
        source=s,
        senders=parse_hosts(s.senders, t.leaves, t.hosts_per_leaf, f"{field}.senders"),
        receivers=parse_hosts(s.receivers, t.leaves, t.hosts_per_leaf, f"{field}.receivers"),
        workloads=workloads,
        listed=listed,
        csv_path=csv_path,
        csv_lines=csv_lines,
    )


def _workload_components(spec: str | dict[str, float], base_dir: Path, field: str, loaded: dict[str, wl.Workload]) -> list[tuple[str, float, wl.Workload]]:
    """A workload name or file, or a mixture of them by weight: (user field, weight, workload) each."""

    def load(name: str, where: str) -> wl.Workload:
        if name not in loaded:
            loaded[name] = wl.load(name, base_dir, where)
        return loaded[name]

    if isinstance(spec, str):
        return [(field, 1.0, load(spec, field))]
    return [(f"{field}.{name}", float(weight), load(name, f"{field}.{name}")) for name, weight in spec.items()]


def _read_flow_csv(spec: str, base_dir: Path, field: str) -> tuple[Path, list[dict[str, Any]], array]:
    """The flows of a CSV list (header ``start_us,src,dst,size_bytes[,deadline_us]``) and their file lines."""
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise ScenarioError(f"{field}: no such file {path}")
    rows, lines = [], array("L")
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        need = {"start_us", "src", "dst", "size_bytes"}
        if not reader.fieldnames or not need.issubset(reader.fieldnames):
            raise ScenarioError(f"{field}: {path} needs a header with columns start_us, src, dst, size_bytes (deadline_us optional)")
        for row in reader:
            try:
                flow = ListedFlow(
                    start_us=float(row["start_us"]),
                    src=int(row["src"]),
                    dst=int(row["dst"]),
                    size_bytes=int(float(row["size_bytes"])),
                    deadline_us=float(row["deadline_us"]) if row.get("deadline_us") not in (None, "") else None,
                )
            except (ValueError, ValidationError) as e:
                raise ScenarioError(f"{path}:{reader.line_num}: bad flow row ({str(e).splitlines()[0]})") from None
            rows.append(flow.model_dump())
            lines.append(reader.line_num)
    return path, rows, lines


def _engine_config(sc: Scenario, sources: list[ResolvedSource]) -> dict[str, Any]:
    return {
        "seed": sc.seed,
        "topology": sc.topology.model_dump(),
        "transport": sc.transport.model_dump(),
        "lb": {"scheme": sc.lb.scheme, "params": sc.lb.params(), "timing": sc.lb.timing},
        "sources": [s.engine() for s in sources],
        "run": {
            "horizon_us": sc.run.horizon_us,
            "sampler": sc.run.sampler.model_dump() if sc.run.sampler else None,
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
        lines.append(text)
    return lines

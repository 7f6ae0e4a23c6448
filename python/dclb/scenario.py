"""Scenarios: the TOML a user writes, validated, and turned into the engine's config.

A scenario has five tables (every field has a documented default; see ``docs/scenario.md``):

* ``[topology]`` — leaves, spines, hosts per leaf, parallel links, rates, delays, buffers, ECN threshold, and
  ``[[topology.links]]`` overrides (a slower, longer or failed leaf-spine link);
* ``[transport]`` — TCP/DCTCP constants shared by all flows;
* ``[lb]`` — ``scheme`` plus that scheme's parameters (``dclb schemes`` lists them);
* ``[traffic]`` — one source, or defaults for several ``[[traffic.sources]]`` (each source inherits any field
  it does not set from the ``[traffic]`` table);
* ``[run]`` — horizon, short/long threshold, optional sampler.

Validation happens here, before the engine sees anything: unknown fields, wrong types, out-of-range values,
unreadable or malformed CDF files and infeasible loads raise :class:`~dclb.errors.ScenarioError` with a
one-line message that names the field. Overrides (``--set a.b=value``) are applied to the raw TOML first, so
they are validated exactly like the file.
"""

from __future__ import annotations

import copy
import csv
import json
import tomllib
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Optional, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import ScenarioError
from .hosts import parse_hosts
from . import workloads as wl


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LinkOverride(_Strict):
    """A change to one leaf-spine link (or all parallel links of a pair when ``link`` is omitted)."""

    leaf: int = Field(ge=0)
    spine: int = Field(ge=0)
    link: Optional[int] = Field(None, ge=0)
    rate_gbps: Optional[float] = Field(None, gt=0)
    delay_us: Optional[float] = Field(None, ge=0)
    failed: bool = False
    direction: Literal["both", "up", "down"] = "both"


class Topology(_Strict):
    leaves: int = Field(4, ge=1)
    spines: int = Field(4, ge=1)
    hosts_per_leaf: int = Field(8, ge=1)
    links_per_pair: int = Field(1, ge=1)
    host_rate_gbps: float = Field(10.0, gt=0)
    fabric_rate_gbps: float = Field(10.0, gt=0)
    host_delay_us: float = Field(1.0, ge=0)
    fabric_delay_us: float = Field(1.0, ge=0)
    buffer_packets: int = Field(256, ge=1)
    buffer_bytes: Optional[int] = Field(None, ge=1)
    ecn_k_packets: Optional[float] = Field(None, ge=0)
    ecn_k_by_role: dict[Literal["host_up", "leaf_up", "leaf_down", "spine_down"], float] = {}
    links: list[LinkOverride] = []

    @model_validator(mode="after")
    def _links_in_range(self) -> "Topology":
        for i, link in enumerate(self.links):
            if link.leaf >= self.leaves:
                raise ValueError(f"links[{i}].leaf: {link.leaf} is out of range (0..{self.leaves - 1})")
            if link.spine >= self.spines:
                raise ValueError(f"links[{i}].spine: {link.spine} is out of range (0..{self.spines - 1})")
            if link.link is not None and link.link >= self.links_per_pair:
                raise ValueError(f"links[{i}].link: {link.link} is out of range (0..{self.links_per_pair - 1})")
        return self

    @property
    def hosts(self) -> int:
        return self.leaves * self.hosts_per_leaf


class Transport(_Strict):
    """TCP/DCTCP constants. Defaults: baselines.md §10-11 (IW 10, dupACK 3, minRTO 5 ms, g = 1/16, alpha0 = 1)."""

    mss_bytes: int = Field(1460, ge=1, le=65000)
    header_bytes: int = Field(40, ge=0)
    ack_bytes: int = Field(40, ge=1)
    init_cwnd_packets: int = Field(10, ge=1)
    init_ssthresh_bytes: Optional[int] = Field(None, ge=1)
    dupack_threshold: int = Field(3, ge=1)
    min_rto_us: float = Field(5000.0, gt=0)
    init_rto_us: float = Field(5000.0, gt=0)
    max_rto_us: float = Field(1_000_000.0, gt=0)
    rto_granularity_us: float = Field(0.0, ge=0)
    dctcp_g: float = Field(1.0 / 16.0, gt=0, le=1)
    dctcp_alpha_init: float = Field(1.0, ge=0, le=1)
    nic_queue_packets: int = Field(10_000, ge=1)
    reseq_timeout_us: float = Field(0.0, ge=0)
    sack: bool = False
    dsack_undo: bool = False

    @model_validator(mode="after")
    def _undo_needs_sack(self) -> "Transport":
        if self.dsack_undo and not self.sack:
            raise ValueError("dsack_undo: needs transport.sack = true (D-SACKs come with SACK)")
        return self


class Deadline(_Strict):
    """How deadlines are drawn: none; fixed (``us``); uniform in [``lo_us``, ``hi_us``]; slack (``factor`` x ideal FCT)."""

    kind: Literal["none", "fixed", "uniform", "slack"] = "none"
    us: Optional[float] = Field(None, gt=0)
    lo_us: Optional[float] = Field(None, gt=0)
    hi_us: Optional[float] = Field(None, gt=0)
    factor: Optional[float] = Field(None, gt=0)

    @model_validator(mode="after")
    def _complete(self) -> "Deadline":
        need = {"none": [], "fixed": ["us"], "uniform": ["lo_us", "hi_us"], "slack": ["factor"]}[self.kind]
        for name in need:
            if getattr(self, name) is None:
                raise ValueError(f"{name}: required for deadline kind '{self.kind}'")
        if self.kind == "uniform" and self.hi_us < self.lo_us:
            raise ValueError("hi_us: must be at least lo_us")
        return self

    def engine(self) -> dict[str, Any]:
        if self.kind == "none":
            return {"kind": "none"}
        if self.kind == "fixed":
            return {"kind": "fixed", "us": self.us}
        if self.kind == "uniform":
            return {"kind": "uniform", "lo_us": self.lo_us, "hi_us": self.hi_us}
        return {"kind": "slack", "factor": self.factor}


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
    long_lived (one unbounded flow per sender), list (explicit flows, inline or from ``flows_csv``)."""

    pattern: Literal["poisson", "group", "incast", "long_lived", "list"] = "poisson"
    workload: Optional[WorkloadSpec] = None
    size_bytes: Optional[int] = Field(None, ge=1)
    load: Optional[float] = None
    load_basis: Literal["access", "fabric"] = "fabric"
    flows: Optional[int] = Field(None, ge=1)
    senders: HostSet = "all"
    receivers: HostSet = "all"
    start_us: float = Field(0.0, ge=0)
    duration_us: Optional[float] = Field(None, gt=0)
    spread_us: float = Field(0.0, ge=0)
    rounds: int = Field(1, ge=1)
    period_us: float = Field(0.0, ge=0)
    transport: Literal["dctcp", "newreno", "udp"] = "dctcp"
    udp_rate_gbps: float = Field(1.0, gt=0)
    best_effort: bool = False
    deadline: Deadline = Deadline()
    inter_leaf_only: bool = True
    flows_csv: Optional[str] = None
    flow_list: list[ListedFlow] = []

    @field_validator("load")
    @classmethod
    def _load_range(cls, v: Optional[float]) -> Optional[float]:
        if v is not None and not 0.0 < v <= 1.0:
            raise ValueError(f"must be in (0, 1] of its load_basis capacity, got {v}")
        return v

    @model_validator(mode="after")
    def _pattern_needs(self) -> "Source":
        if self.pattern == "poisson":
            if self.load is None:
                raise ValueError("load: a poisson source needs a load in (0, 1]")
            if self.flows is None and self.duration_us is None:
                raise ValueError("flows: a poisson source needs `flows` (a count) or `duration_us`")
        if self.pattern == "group" and self.flows is None:
            raise ValueError("flows: a group source needs a flow count")
        if self.pattern in ("poisson", "group", "incast") and self.workload is None and self.size_bytes is None:
            raise ValueError(f"workload: a {self.pattern} source needs a workload (or size_bytes)")
        if self.pattern == "list" and not self.flow_list and self.flows_csv is None:
            raise ValueError("flow_list: a list source needs `flow_list` entries or `flows_csv`")
        return self


class Traffic(Source):
    """A source (used when ``sources`` is empty), and the defaults every entry of ``sources`` inherits."""

    sources: list[dict[str, Any]] = []

    @model_validator(mode="after")
    def _pattern_needs(self) -> "Traffic":  # type: ignore[override]
        if not self.sources:
            Source._pattern_needs(self)
        return self


class Sampler(_Strict):
    interval_us: float = Field(100.0, gt=0)
    ports: Optional[list[int]] = None
    flows: list[int] = []


class Run(_Strict):
    horizon_us: Optional[float] = Field(None, gt=0)
    short_threshold_bytes: int = Field(100_000, ge=1)
    sampler: Optional[Sampler] = None


class Lb(BaseModel):
    """``scheme`` plus the scheme's own parameters (checked against the engine's registry)."""

    model_config = ConfigDict(extra="allow")
    scheme: str = "ecmp"

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
    _check_semantics(sc)
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
# Semantics that need several fields at once


def _available_schemes() -> list[str]:
    from . import _core

    return [s["name"] for s in _core.schemes()]


def _capacities(sc: Scenario, senders: list[int]) -> tuple[float, float]:
    """(access, fabric) capacity in bit/s of a sender set: host links, and the working uplinks of their leaves."""
    t = sc.topology
    access = len(senders) * t.host_rate_gbps * 1e9
    rates: dict[tuple[int, int, int], float] = {}
    for leaf in {h // t.hosts_per_leaf for h in senders}:
        for spine in range(t.spines):
            for k in range(t.links_per_pair):
                rates[(leaf, spine, k)] = t.fabric_rate_gbps * 1e9
    for o in t.links:
        if o.direction == "down":
            continue
        for k in ([o.link] if o.link is not None else range(t.links_per_pair)):
            key = (o.leaf, o.spine, k)
            if key in rates:
                rates[key] = 0.0 if o.failed else (o.rate_gbps * 1e9 if o.rate_gbps else rates[key])
    return access, sum(rates.values())


def _check_semantics(sc: Scenario) -> None:
    names = _available_schemes()
    if sc.lb.scheme not in names:
        raise ScenarioError(f"lb.scheme: unknown scheme '{sc.lb.scheme}'; available: {', '.join(names)}")
    sources = sc.sources()
    t = sc.topology
    total_fabric_load = 0.0
    for i, s in enumerate(sources):
        field = "traffic" if not sc.traffic.sources else f"traffic.sources[{i}]"
        senders = parse_hosts(s.senders, t.leaves, t.hosts_per_leaf, f"{field}.senders")
        receivers = parse_hosts(s.receivers, t.leaves, t.hosts_per_leaf, f"{field}.receivers")
        if s.workload is not None:
            _workload_components(s.workload, sc._base_dir, f"{field}.workload")
        if s.pattern == "list" and s.flows_csv:
            _read_flow_csv(s.flows_csv, sc._base_dir, f"{field}.flows_csv", t.hosts)
        for j, f in enumerate(s.flow_list):
            if f.src >= t.hosts or f.dst >= t.hosts:
                raise ScenarioError(f"{field}.flow_list[{j}]: host out of range (hosts are 0..{t.hosts - 1})")
        if s.pattern == "poisson" and s.load is not None:
            access, fabric = _capacities(sc, senders)
            offered = s.load * (access if s.load_basis == "access" else fabric)
            if fabric <= 0:
                raise ScenarioError(f"{field}.senders: the senders' leaves have no working uplink")
            crosses = s.inter_leaf_only or any(r // t.hosts_per_leaf != h // t.hosts_per_leaf for h in senders for r in receivers)
            fabric_load = offered / fabric if crosses else 0.0
            total_fabric_load += fabric_load
            if fabric_load > 1.0 + 1e-9:
                raise ScenarioError(
                    f"{field}.load: {s.load:g} of the {s.load_basis} capacity offers {offered / 1e9:.1f} Gbps, more than the "
                    f"{fabric / 1e9:.1f} Gbps the senders' leaf uplinks can carry (fabric load {fabric_load:.2f}); "
                    f"the load must be in (0, 1] and the fabric must be able to carry it"
                )
    if total_fabric_load > 1.0 + 1e-9:
        raise ScenarioError(f"traffic: the sources together offer a fabric load of {total_fabric_load:.2f}, more than the fabric can carry (1.0)")
    needs_horizon = any(s.pattern == "long_lived" for s in sources)
    if needs_horizon and sc.run.horizon_us is None:
        raise ScenarioError("run.horizon_us: long-lived flows never end, so the run needs a horizon")


def _workload_components(spec: Any, base_dir: Path, field: str) -> list[tuple[float, wl.Workload]]:
    if isinstance(spec, str):
        return [(1.0, wl.load(spec, base_dir, field))]
    if not spec:
        raise ScenarioError(f"{field}: a mixture needs at least one workload")
    out = []
    for name, weight in spec.items():
        if not isinstance(weight, (int, float)) or weight <= 0:
            raise ScenarioError(f"{field}.{name}: mixture weights must be positive numbers, got {weight!r}")
        out.append((float(weight), wl.load(name, base_dir, f"{field}.{name}")))
    return out


def _read_flow_csv(spec: str, base_dir: Path, field: str, hosts: int) -> list[dict[str, Any]]:
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise ScenarioError(f"{field}: no such file {path}")
    rows = []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        need = {"start_us", "src", "dst", "size_bytes"}
        if not reader.fieldnames or not need.issubset(reader.fieldnames):
            raise ScenarioError(f"{field}: {path} needs a header with columns start_us, src, dst, size_bytes (deadline_us optional)")
        for n, row in enumerate(reader, start=2):
            try:
                flow = ListedFlow(
                    start_us=float(row["start_us"]),
                    src=int(row["src"]),
                    dst=int(row["dst"]),
                    size_bytes=int(float(row["size_bytes"])),
                    deadline_us=float(row["deadline_us"]) if row.get("deadline_us") not in (None, "") else None,
                )
            except (ValueError, ValidationError) as e:
                raise ScenarioError(f"{path}:{n}: bad flow row ({str(e).splitlines()[0]})") from None
            if flow.src >= hosts or flow.dst >= hosts or flow.src == flow.dst:
                raise ScenarioError(f"{path}:{n}: src and dst must be different hosts in 0..{hosts - 1}")
            rows.append(flow.model_dump())
    return rows


# --------------------------------------------------------------------------------------------------------
# The engine's config


def engine_config(sc: Scenario) -> dict[str, Any]:
    """The resolved config the Rust engine takes (see ``crates/dclb-core/src/config.rs``)."""
    t = sc.topology
    topo = t.model_dump()
    topo["links"] = [l.model_dump() for l in t.links]
    engine_sources = []
    for i, s in enumerate(sc.sources()):
        field = "traffic" if not sc.traffic.sources else f"traffic.sources[{i}]"
        workload = []
        if s.workload is not None and s.size_bytes is None:
            workload = [{"weight": w, "points": [list(p) for p in comp.points]} for w, comp in _workload_components(s.workload, sc._base_dir, f"{field}.workload")]
        listed = [f.model_dump() for f in s.flow_list]
        if s.flows_csv:
            listed += _read_flow_csv(s.flows_csv, sc._base_dir, f"{field}.flows_csv", t.hosts)
        engine_sources.append(
            {
                "pattern": s.pattern,
                "senders": parse_hosts(s.senders, t.leaves, t.hosts_per_leaf, f"{field}.senders"),
                "receivers": parse_hosts(s.receivers, t.leaves, t.hosts_per_leaf, f"{field}.receivers"),
                "workload": workload,
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
                "list": listed,
            }
        )
    return {
        "seed": sc.seed,
        "topology": topo,
        "transport": sc.transport.model_dump(),
        "lb": {"scheme": sc.lb.scheme, "params": sc.lb.params()},
        "sources": engine_sources,
        "run": {
            "horizon_us": sc.run.horizon_us,
            "sampler": sc.run.sampler.model_dump() if sc.run.sampler else None,
        },
    }


def describe_load(sc: Scenario) -> list[str]:
    """One line per source: pattern, workload mean and the load on both bases."""
    t = sc.topology
    lines = []
    for i, s in enumerate(sc.sources()):
        field = "traffic" if not sc.traffic.sources else f"traffic.sources[{i}]"
        senders = parse_hosts(s.senders, t.leaves, t.hosts_per_leaf, f"{field}.senders")
        text = f"source {i}: {s.pattern}, {len(senders)} senders, {s.transport}"
        if s.workload is not None and s.size_bytes is None:
            comps = _workload_components(s.workload, sc._base_dir, f"{field}.workload")
            mean = sum(w * c.mean_bytes for w, c in comps) / sum(w for w, _ in comps)
            label = s.workload if isinstance(s.workload, str) else " + ".join(f"{w:g}x{n}" for n, w in s.workload.items())
            text += f", workload {label} (mean {mean / 1e6:.3f} MB)"
        elif s.size_bytes:
            text += f", {s.size_bytes:,} B per flow"
        if s.pattern == "poisson" and s.load is not None:
            access, fabric = _capacities(sc, senders)
            offered = s.load * (access if s.load_basis == "access" else fabric)
            text += f", load {s.load:g} of {s.load_basis} = {offered / 1e9:.1f} Gbps (access load {offered / access:.2f}, fabric load {offered / fabric:.2f})"
        lines.append(text)
    return lines


def dumps_engine_config(sc: Scenario) -> str:
    return json.dumps(engine_config(sc))

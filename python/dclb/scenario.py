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
messages). Types are strict where pydantic would convert: text or a boolean is never a number, a number never
a boolean, a fraction never a whole number (:data:`Int`, :data:`Float`, ``StrictBool``), and a number must be
finite and fit how the engine holds it (u32 counts and indices, u64 bytes, a 64-bit picosecond clock, whole
bits per second), so no value the engine cannot parse ever reaches it. Conflicts in what the user wrote
(``size_bytes`` with a ``workload``, a flow list on a pattern that would ignore it) are refused here too, and,
as the one relation checked here, an RTO cap below the minimum or initial RTO. Everything else that relates
one value to another -- whether links stay connected, a scheme's parameters, whether a load can be carried,
whether a source can make a flow at all -- is decided by the engine's one check (``Config::check``), asked
through ``_core.check_config``. Both raise :class:`~dclb.errors.ScenarioError` with one line that names the
field as the user wrote it.

A validated scenario is resolved once (:func:`resolve`): host sets expanded (a long-lived source without
``receivers`` pairs each sender with the host at its position on the next leaf), workloads and flow lists
read, the engine config built. The check, :func:`describe_load` and :func:`engine_config` share that resolution,
so a run reads each file once; scenarios are immutable so that it cannot go stale. Overrides
(``--set a.b=value``) are applied to the raw TOML first, so they are validated exactly like the file.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import re
import tomllib
from array import array
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Optional, Sequence, Union, get_args, get_origin

from pydantic import (
    BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, ValidationError, field_validator, model_validator,
)

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


#: The engine's integer widths (``crates/dclb-core/src/config.rs``): counts and indices are u32, byte counts u64.
U32 = 2**32 - 1
U64 = 2**64 - 1
#: Times: the engine's clock counts picoseconds in a u64, so a time above this many microseconds (213 days)
#: cannot be held. Rates: whole bits per second in a u64, so a rate must be at least 1 bit per second (a lower
#: one rounds to 0 and nothing could be sent) and at most 2^64 - 1 bits per second.
MAX_US = U64 / 1e6
MIN_GBPS, MAX_GBPS = 1e-9, U64 / 1e9


def _shown(value: Any) -> str:
    """A value as the user wrote it in TOML (``true``, not ``True``)."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def _number_text(value: float) -> str:
    """``1000000.0`` as ``1,000,000``; other numbers as Python writes them."""
    return f"{int(value):,}" if float(value).is_integer() else repr(value)


def _whole_number(value: Any) -> Any:
    """Before pydantic's int: text and booleans are refused (``leaves = "4"``, ``flows = true``), never coerced;
    an integral float (``flows = 1e4``, what TOML and ``--set`` give for a number written with an exponent) is
    taken as its exact integer, a fractional or non-finite one is refused."""
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {str(value).lower()}")
    if isinstance(value, str):
        raise ValueError(f"expected a whole number, got the text {value!r} (write numbers without quotes)")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"expected a finite whole number, got {value}")
        if not value.is_integer():
            raise ValueError(f"expected a whole number, got {value}")
        return int(value)
    return value


def _real_number(value: Any) -> Any:
    """Before pydantic's float: text and booleans are refused (``load = true`` is not 1.0); ints are numbers.
    Non-finite values are refused by ``allow_inf_nan=False`` on every model."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {str(value).lower()}")
    if isinstance(value, str):
        raise ValueError(f"expected a number, got the text {value!r} (write numbers without quotes)")
    return value


#: A whole number as the user must write it (see :func:`_whole_number`); bounds come with each field.
Int = Annotated[int, BeforeValidator(_whole_number)]
#: A finite real number; an int is accepted (``load = 1``, ``host_rate_gbps = 10``).
Float = Annotated[float, BeforeValidator(_real_number)]


class _Strict(BaseModel):
    """Base of every table: unknown fields are errors, values are never coerced from another type (text or a
    boolean for a number, a number for a boolean), and numbers are finite (JSON, the engine's input, has no
    inf or nan)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class LinkOverride(_Strict):
    """A change to one leaf-spine link (or all parallel links of a pair when ``link`` is omitted)."""

    leaf: Int = Field(ge=0, le=U32)
    spine: Int = Field(ge=0, le=U32)
    link: Optional[Int] = Field(None, ge=0, le=U32)
    rate_gbps: Optional[Float] = Field(None, ge=MIN_GBPS, le=MAX_GBPS)
    delay_us: Optional[Float] = Field(None, ge=0, le=MAX_US)
    failed: StrictBool = False
    blackhole: StrictBool = False
    loss_rate: Float = Field(0.0, ge=0, le=1)
    direction: Literal["both", "up", "down"] = "both"


class Topology(_Strict):
    leaves: Int = Field(_TOPOLOGY["leaves"], ge=1, le=U32)
    spines: Int = Field(_TOPOLOGY["spines"], ge=1, le=U32)
    hosts_per_leaf: Int = Field(_TOPOLOGY["hosts_per_leaf"], ge=1, le=U32)
    links_per_pair: Int = Field(_TOPOLOGY["links_per_pair"], ge=1, le=U32)
    host_rate_gbps: Float = Field(_TOPOLOGY["host_rate_gbps"], ge=MIN_GBPS, le=MAX_GBPS)
    fabric_rate_gbps: Float = Field(_TOPOLOGY["fabric_rate_gbps"], ge=MIN_GBPS, le=MAX_GBPS)
    host_delay_us: Float = Field(_TOPOLOGY["host_delay_us"], ge=0, le=MAX_US)
    fabric_delay_us: Float = Field(_TOPOLOGY["fabric_delay_us"], ge=0, le=MAX_US)
    queue_unit: Literal["bytes", "packets"] = _TOPOLOGY["queue_unit"]
    buffer_bytes: Optional[Int] = Field(_TOPOLOGY["buffer_bytes"], ge=1, le=U64)
    buffer_packets: Optional[Int] = Field(_TOPOLOGY["buffer_packets"], ge=1, le=U32)
    ecn_k_bytes: Optional[Int] = Field(_TOPOLOGY["ecn_k_bytes"], ge=0, le=U64)
    ecn_k_packets: Optional[Float] = Field(_TOPOLOGY["ecn_k_packets"], ge=0)
    ecn_k_by_role: dict[Literal["host_up", "leaf_up", "leaf_down", "spine_down"], Float] = {}
    links: list[LinkOverride] = []

    @property
    def hosts(self) -> int:
        return self.leaves * self.hosts_per_leaf


class Transport(_Strict):
    """TCP/DCTCP constants. Defaults: the DCTCP paper, the TCP RFCs and the Hermes authors' ns-3 settings (IW 10,
    dupACK 3, minRTO 5 ms, g = 1/16, alpha0 = 1; docs/references.md)."""

    mss_bytes: Int = Field(_TRANSPORT["mss_bytes"], ge=1, le=65000)
    header_bytes: Int = Field(_TRANSPORT["header_bytes"], ge=0, le=U32)
    ack_bytes: Int = Field(_TRANSPORT["ack_bytes"], ge=1, le=U32)
    init_cwnd_packets: Int = Field(_TRANSPORT["init_cwnd_packets"], ge=1, le=U32)
    init_ssthresh_bytes: Optional[Int] = Field(_TRANSPORT["init_ssthresh_bytes"], ge=1, le=U64)
    dupack_threshold: Int = Field(_TRANSPORT["dupack_threshold"], ge=1, le=U32)
    min_rto_us: Float = Field(_TRANSPORT["min_rto_us"], gt=0, le=MAX_US)
    init_rto_us: Float = Field(_TRANSPORT["init_rto_us"], gt=0, le=MAX_US)
    max_rto_us: Float = Field(_TRANSPORT["max_rto_us"], gt=0, le=MAX_US)
    rto_granularity_us: Float = Field(_TRANSPORT["rto_granularity_us"], ge=0, le=MAX_US)
    dctcp_g: Float = Field(_TRANSPORT["dctcp_g"], gt=0, le=1)
    dctcp_alpha_init: Float = Field(_TRANSPORT["dctcp_alpha_init"], ge=0, le=1)
    nic_queue_packets: Int = Field(_TRANSPORT["nic_queue_packets"], ge=1, le=U32)
    host_queue_limit_bytes: Optional[Int] = Field(_TRANSPORT["host_queue_limit_bytes"], ge=0, le=U64)
    host_ack_priority: StrictBool = _TRANSPORT["host_ack_priority"]
    handshake: StrictBool = _TRANSPORT["handshake"]
    reseq_timeout_us: Float = Field(_TRANSPORT["reseq_timeout_us"], ge=0, le=MAX_US)
    sack: StrictBool = _TRANSPORT["sack"]
    dsack_undo: StrictBool = _TRANSPORT["dsack_undo"]
    cwnd_validation: StrictBool = _TRANSPORT["cwnd_validation"]

    @model_validator(mode="after")
    def _rto_order(self) -> "Transport":
        # The engine caps the RTO with max_rto after raising it to min_rto, so a cap below either would win
        # silently (and an initial RTO above the cap would shrink on its first back-off).
        cap = _number_text(self.max_rto_us)
        if self.max_rto_us < self.min_rto_us:
            raise ValueError(f"max_rto_us: {cap} is below min_rto_us ({_number_text(self.min_rto_us)}); the cap must be at least the minimum")
        if self.max_rto_us < self.init_rto_us:
            raise ValueError(f"max_rto_us: {cap} is below init_rto_us ({_number_text(self.init_rto_us)}); the cap must be at least the initial RTO")
        return self


#: The fields each deadline kind needs.
_DEADLINE_FIELDS = {"none": (), "fixed": ("us",), "uniform": ("lo_us", "hi_us"), "slack": ("factor",)}


class Deadline(_Strict):
    """How deadlines are drawn: none; fixed (``us``); uniform in [``lo_us``, ``hi_us``]; slack (``factor`` x ideal FCT)."""

    kind: Literal["none", "fixed", "uniform", "slack"] = _SOURCE["deadline"]["kind"]
    us: Optional[Float] = Field(None, gt=0, le=MAX_US)
    lo_us: Optional[Float] = Field(None, gt=0, le=MAX_US)
    hi_us: Optional[Float] = Field(None, gt=0, le=MAX_US)
    factor: Optional[Float] = Field(None, gt=0)

    @model_validator(mode="after")
    def _complete(self) -> "Deadline":
        for name in _DEADLINE_FIELDS[self.kind]:
            if getattr(self, name) is None:
                raise ValueError(f"{name}: required for deadline kind '{self.kind}'")
        return self

    def engine(self) -> dict[str, Any]:
        return {"kind": self.kind, **{name: getattr(self, name) for name in _DEADLINE_FIELDS[self.kind]}}


class ListedFlow(_Strict):
    start_us: Float = Field(ge=0, le=MAX_US)
    src: Int = Field(ge=0, le=U32)
    dst: Int = Field(ge=0, le=U32)
    size_bytes: Int = Field(ge=1, le=U64)
    deadline_us: Optional[Float] = Field(None, gt=0, le=MAX_US)


def _workload_spec(value: Any) -> Any:
    """A workload is a name or CDF file, or a mixture ``{name = weight, ...}`` with positive, finite weights."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if not value:
            raise ValueError("the mixture is empty; give at least one {name = weight}")
        for name, weight in value.items():
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight <= 0:
                raise ValueError(f"{name}.weight: must be a positive number (a mixture weight), got {_shown(weight)}")
        return value
    raise ValueError(
        f"expected a workload name or CDF file, or a mixture such as {{websearch = 0.5, datamining = 0.5}}; got {_shown(value)}"
    )


def _host_set(value: Any) -> Any:
    """A host set is a string, a host number, or a list of those (see :mod:`dclb.hosts`); nothing else is
    read as one (``true`` is not host 1, ``1.5`` is not a host)."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ValueError(f"expected 'all', 'leaf:A-B', 'A-B', a host number or a list of them; got {_shown(item)}")
    return value


WorkloadSpec = Annotated[Union[str, dict[str, float]], BeforeValidator(_workload_spec)]
HostSet = Annotated[Union[str, int, list[Union[int, str]]], BeforeValidator(_host_set)]
#: A port or flow id of the engine (u32).
EngineId = Annotated[Int, Field(ge=0, le=U32)]


class Source(_Strict):
    """One traffic source. Patterns: poisson (at a load), group (N flows between two sets), incast (N-to-1),
    long_lived (one unbounded flow per sender), list (explicit flows, inline or from ``flows_csv``).

    What each pattern needs (a load, a flow count, a workload...) is the engine's check."""

    pattern: Literal["poisson", "group", "incast", "long_lived", "list"] = _SOURCE["pattern"]
    workload: Optional[WorkloadSpec] = None
    size_bytes: Optional[Int] = Field(None, ge=1, le=U64)
    load: Optional[Float] = None
    load_basis: Literal["access", "fabric"] = _SOURCE["load_basis"]
    flows: Optional[Int] = Field(None, ge=1, le=U64)
    senders: HostSet = "all"
    receivers: HostSet = "all"
    start_us: Float = Field(_SOURCE["start_us"], ge=0, le=MAX_US)
    duration_us: Optional[Float] = Field(None, gt=0, le=MAX_US)
    spread_us: Float = Field(_SOURCE["spread_us"], ge=0, le=MAX_US)
    rounds: Int = Field(_SOURCE["rounds"], ge=1, le=U32)
    period_us: Float = Field(_SOURCE["period_us"], ge=0, le=MAX_US)
    transport: Literal["dctcp", "newreno", "udp"] = _SOURCE["transport"]
    udp_rate_gbps: Float = Field(_SOURCE["udp_rate_gbps"], ge=MIN_GBPS, le=MAX_GBPS)
    best_effort: StrictBool = _SOURCE["best_effort"]
    deadline: Deadline = Deadline()
    inter_leaf_only: StrictBool = _SOURCE["inter_leaf_only"]
    flows_csv: Optional[str] = None
    flow_list: list[ListedFlow] = []

    @field_validator("load")
    @classmethod
    def _load_range(cls, v: Optional[float]) -> Optional[float]:
        if v is not None and not 0.0 < v <= 1.0:
            raise ValueError(f"must be in (0, 1] of its load_basis capacity, got {v}")
        return v

    @model_validator(mode="after")
    def _one_size_model(self) -> "Source":
        # The engine takes size_bytes over the workload; given both, the workload would be ignored unsaid.
        if self.size_bytes is not None and self.workload is not None:
            raise ValueError(
                "size_bytes: give either size_bytes (one size for every flow) or workload (sizes drawn from a CDF), not both"
            )
        # Only a list source reads explicit flows; any other pattern would ignore them.
        for name in ("flows_csv", "flow_list"):
            if getattr(self, name) and self.pattern != "list":
                raise ValueError(
                    f'{name}: only a list source reads explicit flows (pattern = "list"), and this source\'s pattern is {self.pattern}'
                )
        return self


class Traffic(Source):
    """A source (used when ``sources`` is empty), and the defaults every entry of ``sources`` inherits."""

    sources: list[dict[str, Any]] = []


class Sampler(_Strict):
    interval_us: Float = Field(_SAMPLER["interval_us"], gt=0, le=MAX_US)
    ports: Optional[list[EngineId]] = None
    flows: list[EngineId] = []


class Run(_Strict):
    horizon_us: Optional[Float] = Field(_RUN["horizon_us"], gt=0, le=MAX_US)
    short_threshold_bytes: Int = Field(100_000, ge=1, le=U64)
    sampler: Optional[Sampler] = None


class Lb(BaseModel):
    """``scheme`` plus the scheme's own parameters (checked against the engine's registry)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    scheme: str = _ENGINE["lb"]["scheme"]
    #: ``fabric``: timing defaults (flowlet timeouts, delay thresholds) scaled to this fabric's base RTT;
    #: ``published``: as their sources give them, whatever the fabric.
    timing: Literal["fabric", "published"] = _ENGINE["lb"]["timing"]

    @model_validator(mode="after")
    def _finite_params(self) -> "Lb":
        # The engine checks each parameter's type and range, but reads the config as JSON, which has no inf
        # or nan: refuse them here, naming the parameter.
        def bad(value: Any) -> bool:
            if isinstance(value, float):
                return not math.isfinite(value)
            if isinstance(value, (list, tuple)):
                return any(bad(v) for v in value)
            if isinstance(value, dict):
                return any(bad(v) for v in value.values())
            return False

        for name, value in self.params().items():
            if bad(value):
                raise ValueError(f"{name}: must be a finite number, got {value!r}")
        return self

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
    seeds: Int = Field(1, ge=1, le=100_000)

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
    seed: Int = Field(1, ge=0, lt=2**63)
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
            # exclude_unset keeps track of what the user gave (a long-lived source pairs by default only
            # when `receivers` is not given); the values are the same, both tables share their defaults.
            return [Source.model_validate(self.traffic.model_dump(exclude={"sources"}, exclude_unset=True))]
        defaults = self.traffic.model_dump(exclude={"sources"}, exclude_unset=True)
        out = []
        for i, raw in enumerate(self.traffic.sources):
            inherited = dict(defaults)
            # A source that sets its size model replaces the inherited one rather than conflicting with it.
            for own, other in (("size_bytes", "workload"), ("workload", "size_bytes")):
                if own in raw:
                    inherited.pop(other, None)
            try:
                out.append(Source.model_validate({**inherited, **raw}))
            except ValidationError as e:
                raise ScenarioError(_format_validation(e, prefix=f"traffic.sources[{i}]")) from None
        return out

    def resolved(self) -> dict[str, Any]:
        """The scenario as plain data with every default filled in (what the store records and hashes).

        The ``[sweep]`` table is left out: a grid point is the same run whichever grid it came from."""
        return self.model_dump(mode="json", exclude={"sweep"})


# --------------------------------------------------------------------------------------------------------
# Errors


#: The upper limits that come from how the engine holds a value, and how to say so.
_ENGINE_LIMITS = {
    U32: f"{U32:,} (the engine holds it in 32 bits)",
    U64: f"{U64:,} (the engine holds it in 64 bits)",
    MAX_US: f"{MAX_US:,.0f} us (the engine's clock counts picoseconds in 64 bits)",
    MAX_GBPS: f"{MAX_GBPS:,.0f} Gbps (the engine counts bits per second in 64 bits)",
}

_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict"}


def _dotted(loc: tuple[Any, ...], prefix: str) -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _TYPE_TAGS or "[" in part or "(" in part:
            continue  # pydantic's tag of a union member or validator (e.g. "function-before[...]"), not a field
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
        if sep and " " not in head and re.sub(r"[_\[\].\-/]", "", head).isalnum():
            return f"{path + '.' if path else ''}{head}: {rest}"
    if first.get("type") == "extra_forbidden":
        allowed = _allowed_fields(model or Scenario, loc) if model is not None or not prefix else _allowed_fields(Source, loc)
        hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
        return f"{path}: unknown field{hint}"
    if first.get("type") == "missing":
        return f"{path}: required field is missing"
    if first.get("type") == "value_error":  # our own validators name the value they refuse
        return f"{path}: {msg}"
    given = first.get("input")
    if isinstance(given, (int, float)) and not isinstance(given, bool) and abs(given) >= 1e9:
        given_text = f"{given:.3g}"
    else:
        given_text = repr(given)
    ctx = first.get("ctx") or {}
    if first.get("type") == "less_than_equal" and ctx.get("le") in _ENGINE_LIMITS:
        return f"{path}: must be at most {_ENGINE_LIMITS[ctx['le']]}, got {given_text}"
    if first.get("type") == "greater_than_equal" and ctx.get("ge") == MIN_GBPS:
        return f"{path}: must be at least 1e-09 Gbps (1 bit per second, the engine's unit), got {given_text}"
    shown = f" (got {given_text})" if given is not None and not isinstance(given, dict) and f"got {given!r}" not in msg else ""
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
        try:
            _core.check_config(json.dumps(resolution.config), memory_limit())
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
            # Each cell is read as a number (an int when it is one), then checked by ListedFlow like an inline
            # flow: "1000.7" bytes or "inf" are refused, never truncated.
            cells = {name: row.get(name) for name in ("start_us", "src", "dst", "size_bytes", "deadline_us")}
            if cells["deadline_us"] in (None, ""):
                del cells["deadline_us"]
            try:
                flow = ListedFlow(**{name: _csv_number(name, text) for name, text in cells.items()})
            except ValueError as e:
                detail = _format_validation(e, model=ListedFlow) if isinstance(e, ValidationError) else str(e)
                raise ScenarioError(f"{path}:{reader.line_num}: bad flow row ({detail})") from None
            rows.append(flow.model_dump())
            lines.append(reader.line_num)
    if not rows:
        raise ScenarioError(f"{field}: {path} has a header but no flows; a flow list needs at least one row")
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

"""The scenario schema: what a scenario may contain, with its types, ranges and defaults, and how a
violation is said in one line.

Pydantic checks syntax and types: unknown fields, wrong types, a value out of its own range. Types are
strict where pydantic would convert: text or a boolean is never a number, a number never a boolean, a
fraction never a whole number (:data:`Int`, :data:`Float`, ``StrictBool``), and a number must be finite
and fit how the engine holds it (u32 counts and indices, u64 bytes, a 64-bit picosecond clock, whole bits
per second), so no value the engine cannot parse ever reaches it. What the user wrote that would
be ignored is refused here too: ``size_bytes`` with a ``workload``, a source field its pattern does not read
(:data:`~dclb.scenario.schema.PATTERN_FIELDS`), a deadline field of another kind, a link property two
overrides both set or that a failure or blackhole makes moot; and, as the one relation checked here, an RTO cap
below the minimum or initial RTO. Defaults are the
engine's own (``_core.default_config``), read once rather than repeated.

:func:`validation_message` turns pydantic's first error into the user's line (``topology.spinez: unknown
field; allowed: ...``); :func:`field_path_problem` says whether a dotted name is a field one can override
(for sweep grids).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Optional, Union, get_args, get_origin

from pydantic import (
    BaseModel, BeforeValidator, ConfigDict, Field, SerializationInfo, StrictBool, ValidationError, field_validator,
    model_serializer, model_validator,
)

from .. import _core
from ..errors import ScenarioError

if TYPE_CHECKING:
    from .resolution import Resolution

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


#: Serialisation context for every field, explicit (the engine's config), rather than the resolved scenario.
COMPLETE = {"complete": True}


class _AddedLater(_Strict):
    """A table that gained fields after runs were stored. A field named in ``ADDED_LATER`` is left out of the
    resolved scenario (what the store hashes into a run id) while it holds the value that means "as before",
    so a scenario that does not use it keeps the run id, and the stored runs, it had before the field existed.
    Reading the scenario back fills the default in again."""

    #: Field name -> the value (as dumped to JSON) that leaves runs as they were before the field.
    ADDED_LATER: ClassVar[dict[str, Any]] = {}

    @model_serializer(mode="wrap")
    def _without_fields_left_as_before(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data = handler(self)
        if (info.context or {}).get("complete"):
            return data  # the engine's config: every field, explicit
        for name, before in self.ADDED_LATER.items():
            if name in data and data[name] == before:
                del data[name]
        return data


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

    @model_validator(mode="after")
    def _consistent(self) -> "LinkOverride":
        # A failed link is out of routing and carries nothing; a blackhole loses every packet. A way of losing
        # packets given with either would be ignored, so it is refused. (A failed link keeps its rate and
        # delay: a sweep over `failed` on a slow link is a natural experiment, and they are properties of the
        # link rather than of its state.)
        if self.failed:
            for name in ("blackhole", "loss_rate"):
                if name in self.changes():
                    raise ValueError(f"{name}: a failed link carries nothing, so its {name} would never be used; give one or the other")
        if self.blackhole and "loss_rate" in self.changes():
            raise ValueError("loss_rate: a blackhole loses every packet, so a loss_rate would never be used; give one or the other")
        return self

    def changes(self) -> set[str]:
        """The properties this override sets (a false switch and a zero loss rate set nothing)."""
        out = {name for name in ("rate_gbps", "delay_us") if getattr(self, name) is not None}
        out |= {name for name in ("failed", "blackhole") if getattr(self, name)}
        if self.loss_rate > 0:
            out.add("loss_rate")
        return out

    def overlaps(self, other: "LinkOverride") -> bool:
        """Whether the two overrides change a port in common (same leaf and spine, a common parallel link and
        direction)."""
        return (
            (self.leaf, self.spine) == (other.leaf, other.spine)
            and (self.link is None or other.link is None or self.link == other.link)
            and (self.direction == "both" or other.direction == "both" or self.direction == other.direction)
        )

    def describe(self) -> str:
        link = "" if self.link is None else f" link {self.link}"
        way = "" if self.direction == "both" else f" ({self.direction})"
        return f"leaf {self.leaf}-spine {self.spine}{link}{way}"


class Topology(_AddedLater):
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
    #: Strict-priority FIFOs per port (1: one FIFO, no priorities); levels 0 (the top) to priority_queues - 1.
    priority_queues: Int = Field(_TOPOLOGY["priority_queues"], ge=1, le=8)

    ADDED_LATER = {"priority_queues": 1}

    @model_validator(mode="after")
    def _links_apply_once(self) -> "Topology":
        # The engine applies overrides in order, each setting what it gives: a property two overrides of one
        # link both set keeps the later value, and anything set on a failed link is never used. Either way one
        # of the values would be ignored, so it is refused.
        for j, later in enumerate(self.links):
            for i, earlier in enumerate(self.links[:j]):
                if not earlier.overlaps(later):
                    continue
                both = earlier.changes() & later.changes()
                if both:
                    name = sorted(both)[0]
                    raise ValueError(
                        f"links[{j}].{name}: link {later.describe()} already has its {name} set by topology.links[{i}]; "
                        "the later override would silently replace it: give each link's changes once"
                    )
                union = earlier.changes() | later.changes()
                if "failed" in union and union & {"blackhole", "loss_rate"}:
                    other = sorted(union & {"blackhole", "loss_rate"})[0]
                    where = j if other in later.changes() else i
                    raise ValueError(f"links[{where}].{other}: link {later.describe()} is failed (topology.links[{i if where == j else j}]), so its {other} would never be used; remove it")
                if {"blackhole", "loss_rate"} <= union:
                    where = j if "loss_rate" in later.changes() else i
                    raise ValueError(f"links[{where}].loss_rate: link {later.describe()} is a blackhole, which loses every packet, so its loss_rate would never be used; remove it")
        return self

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
        # A field of another kind would be ignored: refused instead.
        for name in sorted(n for n in self.model_fields_set - {"kind", *_DEADLINE_FIELDS[self.kind]} if getattr(self, n) is not None):
            uses = ", ".join(_DEADLINE_FIELDS[self.kind]) or "no other field"
            raise ValueError(f"{name}: not used by deadline kind '{self.kind}' (it uses {uses}); remove it")
        return self

    def engine(self) -> dict[str, Any]:
        return {"kind": self.kind, **{name: getattr(self, name) for name in _DEADLINE_FIELDS[self.kind]}}


#: The fields each priority kind needs.
_PRIORITY_FIELDS = {"fixed": ("level",), "pias": ("thresholds_bytes",)}


class Priority(_Strict):
    """The priority level a source's hosts stamp on its data packets (``topology.priority_queues`` levels, 0 the
    top; ACKs and other control packets always go at the top): fixed (``level``), or PIAS-style demotion
    (``thresholds_bytes``: a flow drops one level each time the payload bytes it has sent reach the next
    threshold). Whether the levels exist is the engine's check."""

    kind: Literal["fixed", "pias"] = _SOURCE["priority"]["kind"]
    level: Optional[Int] = Field(None, ge=0, le=U32)
    thresholds_bytes: Optional[list[Annotated[Int, Field(ge=0, le=U64)]]] = None

    @model_validator(mode="after")
    def _complete(self) -> "Priority":
        for name in _PRIORITY_FIELDS[self.kind]:
            if getattr(self, name) is None:
                raise ValueError(f"{name}: required for priority kind '{self.kind}'")
        # A field of the other kind would be ignored: refused instead.
        for name in sorted(n for n in self.model_fields_set - {"kind", *_PRIORITY_FIELDS[self.kind]} if getattr(self, n) is not None):
            raise ValueError(f"{name}: not used by priority kind '{self.kind}' (it uses {', '.join(_PRIORITY_FIELDS[self.kind])}); remove it")
        return self

    def engine(self) -> dict[str, Any]:
        return {"kind": self.kind, **{name: getattr(self, name) for name in _PRIORITY_FIELDS[self.kind]}}


#: Every source's priority unless it gives its own: the engine's default (every data packet at the top level).
_DEFAULT_PRIORITY = Priority(**_SOURCE["priority"])


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


#: The source fields each pattern reads (the engine's traffic generator, ``crates/dclb-core/src/traffic``);
#: a field given for a source whose pattern does not read it would be ignored, so it is an error instead.
#: ``udp_rate_gbps`` is read only by a UDP source.
_EVERY_PATTERN = ("pattern", "transport", "udp_rate_gbps", "best_effort", "priority")
PATTERN_FIELDS: dict[str, frozenset[str]] = {
    "poisson": frozenset((*_EVERY_PATTERN, "workload", "size_bytes", "load", "load_basis", "flows", "duration_us", "senders", "receivers", "start_us", "deadline", "inter_leaf_only")),
    "group": frozenset((*_EVERY_PATTERN, "workload", "size_bytes", "flows", "senders", "receivers", "start_us", "spread_us", "deadline", "inter_leaf_only")),
    "incast": frozenset((*_EVERY_PATTERN, "workload", "size_bytes", "senders", "receivers", "start_us", "rounds", "period_us", "deadline")),
    "long_lived": frozenset((*_EVERY_PATTERN, "size_bytes", "senders", "receivers", "start_us", "deadline")),
    "list": frozenset((*_EVERY_PATTERN, "flows_csv", "flow_list")),
}


class Source(_AddedLater):
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
    priority: Priority = _DEFAULT_PRIORITY

    ADDED_LATER = {"priority": _DEFAULT_PRIORITY.model_dump(mode="json")}
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
        return self

    def unused(self, names: Any) -> list[tuple[str, str]]:
        """(field, why) for each of ``names`` (fields given for this source) that it would ignore: a field
        its pattern does not read (:data:`PATTERN_FIELDS`), ``udp_rate_gbps`` on a TCP source. A field given
        its default value is not one of them: read or not, the run is the same."""
        out = []
        reads = PATTERN_FIELDS[self.pattern]
        for name in names:
            if name in type(self).model_fields and getattr(self, name) == type(self).model_fields[name].default:
                continue  # its default: reading it or not makes the same run (a stored run's scenario has every field)
            if name not in reads:
                if name in ("flows_csv", "flow_list"):
                    why = f'only a list source reads explicit flows (pattern = "list"), and this source\'s pattern is {self.pattern}'
                else:
                    users = [p for p, fields in PATTERN_FIELDS.items() if name in fields]
                    why = f"a {self.pattern} source does not use it (only {', '.join(users)} sources do); remove it"
                out.append((name, why))
            elif name == "udp_rate_gbps" and self.transport != "udp":
                out.append((name, f"only a UDP source (transport = \"udp\") sends at a rate, and this source's transport is {self.transport}; remove it"))
        return out


class Traffic(Source):
    """A source (used when ``sources`` is empty), and the defaults every entry of ``sources`` inherits."""

    sources: list[dict[str, Any]] = []


class Sampler(_Strict):
    interval_us: Float = Field(_SAMPLER["interval_us"], gt=0, le=MAX_US)
    ports: Optional[list[EngineId]] = None
    flows: list[EngineId] = []


class Run(_AddedLater):
    horizon_us: Optional[Float] = Field(_RUN["horizon_us"], gt=0, le=MAX_US)
    short_threshold_bytes: Int = Field(100_000, ge=1, le=U64)
    sampler: Optional[Sampler] = None
    #: Steady-state measurement: flows arriving before this time are not measured; each poisson source's
    #: ``flows`` (or ``duration_us``) counts its arrivals after it, and arrivals go on ``cooldown_us`` more.
    warmup_us: Optional[Float] = Field(None, ge=0, le=MAX_US)
    #: How long arrivals go on after a source's measurement window (default: twice ``warmup_us``).
    cooldown_us: Optional[Float] = Field(None, ge=0, le=MAX_US)
    #: What the fabric holds at time zero: nothing, or the flows each poisson source would have in flight in
    #: steady state (``crates/dclb-core/src/traffic/stationary.rs``; with a default warm-up of 20 ms).
    start: Literal["empty", "stationary"] = "empty"
    #: Stationary start: how many steady states of the fluid run to choose from (the one whose carried load is
    #: nearest the nominal is taken; 1: the first, unmatched). Default 32.
    start_candidates: Optional[Int] = Field(None, ge=1, le=1024)
    #: With a measurement window: stop this long after the window closes; measured flows still running are
    #: censored (``flows_censored``). Default: run until every measured flow has ended.
    drain_us: Optional[Float] = Field(None, ge=0, le=MAX_US)

    #: The measurement window (``crates/dclb-core/src/traffic/window.rs``) is off unless given, the start empty.
    ADDED_LATER = {"warmup_us": None, "cooldown_us": None, "start": "empty", "start_candidates": None, "drain_us": None}


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


#: Most runs one sweep may have (grid points times seeds), wherever the grid and the seed count come from: the
#: ``[sweep]`` table, ``--grid`` and ``--seeds``, or Python (:func:`dclb.sweeps.plan_sweep` checks it before
#: validating any point, which would take minutes at this size already).
MAX_SWEEP_RUNS = 100_000


class Sweep(_Strict):
    """The optional ``[sweep]`` table: a grid of overrides and a seed count (see :mod:`dclb.sweeps`).

    ``grid`` maps a dotted scenario field to its values: a TOML array (taken literally) or a text such as
    ``"ecmp,rps"`` or ``"0.2:0.8:0.2"`` (read like ``dclb sweep --grid``). ``seeds`` runs every grid point
    with the seeds ``seed, seed + 1, ..., seed + seeds - 1``. The table is not part of a run's identity: the
    resolved scenario (and so the run id) of a grid point leaves it out.
    """

    grid: dict[str, Union[list[Any], str, int, float, bool]] = {}
    seeds: Int = Field(1, ge=1, le=MAX_SWEEP_RUNS)

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
        defaults = self.traffic.model_dump(exclude={"sources"}, exclude_unset=True)
        if not self.traffic.sources:
            # exclude_unset keeps track of what the user gave (a long-lived source pairs by default only
            # when `receivers` is not given); the values are the same, both tables share their defaults.
            source = Source.model_validate(defaults)
            for name, why in source.unused(defaults):
                raise ScenarioError(f"traffic.{name}: {why}")
            return [source]
        out = []
        inheritors: dict[str, list[Source]] = {name: [] for name in defaults}  # default -> sources that take it
        for i, raw in enumerate(self.traffic.sources):
            inherited = dict(defaults)
            # A source that sets its size model replaces the inherited one rather than conflicting with it.
            for own, other in (("size_bytes", "workload"), ("workload", "size_bytes")):
                if own in raw:
                    inherited.pop(other, None)
            try:
                source = Source.model_validate({**inherited, **raw})
            except ValidationError as e:
                raise ScenarioError(validation_message(e, prefix=f"traffic.sources[{i}]")) from None
            for name, why in source.unused(raw):
                raise ScenarioError(f"traffic.sources[{i}].{name}: {why}")
            for name in inherited:
                if name not in raw:
                    inheritors[name].append(source)
            out.append(source)
        # A default of [traffic] must be read by some source that inherits it. (A default that every source
        # sets for itself is allowed: the reproduction of DAR labels its runs with such a traffic.load.)
        for name, takers in inheritors.items():
            if takers and all(source.unused([name]) for source in takers):
                if name == "udp_rate_gbps":
                    why = "none of the sources that inherit it uses UDP (transport = \"udp\")"
                else:
                    readers = [p for p, fields in PATTERN_FIELDS.items() if name in fields]
                    kinds = sorted({source.pattern for source in takers})
                    why = f"the sources that inherit it are {' and '.join(kinds)} sources, and only {', '.join(readers)} sources read it"
                raise ScenarioError(f"traffic.{name}: no source uses this default: {why}; remove it")
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


def validation_message(err: ValidationError, prefix: str = "", model: type[BaseModel] | None = None) -> str:
    """The user's one line for pydantic's first error: the field's dotted name (after ``prefix``), then what
    is wrong; an unknown field lists the fields ``model`` (default: the scenario) allows there."""
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

"""Property-based test of the scenario schema: whatever value of whatever type lands in any field of any table,
`dclb run --dry-run` answers with a valid dry run (exit 0) or one error line (exit 2): never a traceback, a Rust
panic, a hang, an internal error or a serde message; and a value of the wrong type, out of its documented range
or not finite is never accepted (exit 2, naming the field as the user wrote it).

Each example overrides one field of a small valid scenario with ``--set FIELD=VALUE``, the value written as TOML
(so the override parser is exercised too), and runs the CLI's entry point in this process (``dclb.cli.main``,
what the ``dclb`` script calls); two examples also go through the installed command. Hypothesis's deadline
bounds each example's time, and a faulthandler watchdog turns a hang in native code, which no Python-level
timeout can interrupt, into a failure with tracebacks.
"""

from __future__ import annotations

import faulthandler
import json
import math
import re
from datetime import timedelta
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TINY, dclb_cli
from test_scenario_schema import dclb_main

from dclb import _core
from dclb.scenario import Deadline, LinkOverride, Run, Sampler, Source, Topology, Transport

#: The engine's integer widths.
U32, U64 = 2**32 - 1, 2**64 - 1

# --------------------------------------------------------------------------------------------------------
# Three small valid scenarios that between them have every table

BASE = TINY + '\n[traffic.deadline]\nkind = "uniform"\nlo_us = 100\nhi_us = 500\n'
SOURCES = """
name = "sources"
[topology]
leaves = 2
spines = 2
hosts_per_leaf = 4
[traffic]
workload = "websearch"
[[traffic.sources]]
load = 0.2
flows = 20
[[traffic.sources]]
pattern = "group"
size_bytes = 1000
flows = 5
"""
LONG = """
name = "long"
[topology]
leaves = 2
spines = 2
hosts_per_leaf = 2
[[topology.links]]
leaf = 0
spine = 1
rate_gbps = 5
[traffic]
pattern = "long_lived"
senders = "leaf:0"
receivers = "leaf:1"
[run]
horizon_us = 300
sampler = { interval_us = 100, flows = [0] }
"""

#: (base scenario, table as --set spells it, table as error messages spell it, the table's model)
TABLES = [
    ("base", "topology", "topology", Topology),
    ("base", "transport", "transport", Transport),
    ("base", "traffic", "traffic", Source),
    ("base", "traffic.deadline", "traffic.deadline", Deadline),
    ("sources", "traffic.sources.0", "traffic.sources[0]", Source),
    ("sources", "traffic.sources.1", "traffic.sources[1]", Source),
    ("long", "run", "run", Run),
    ("long", "run.sampler", "run.sampler", Sampler),
    ("long", "topology.links.0", "topology.links[0]", LinkOverride),
]

#: Topology sizes are drawn small or beyond the engine's range: a fabric of millions of hosts is a memory
#: question (refused by the memory estimate of the run), not a schema one.
SIZES = {"leaves", "spines", "hosts_per_leaf", "links_per_pair"}


# --------------------------------------------------------------------------------------------------------
# What the schema promises about a field, read from its annotation


def _kind(annotation: Any, metadata: list[Any]) -> tuple[str, Any, list[Any]]:
    """(kind, literal choices, bounds) of a field: kind is int, float, bool, literal or other."""
    bounds = [m for m in metadata if isinstance(m, (annotated_types.Ge, annotated_types.Gt, annotated_types.Le, annotated_types.Lt))]
    if get_origin(annotation) in (Union, UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            return "other", None, bounds
        annotation = args[0]
    if get_origin(annotation) is Annotated:
        base, *extra = get_args(annotation)
        kind, choices, more = _kind(base, list(extra))
        return kind, choices, bounds + more
    if get_origin(annotation) is Literal:
        return "literal", get_args(annotation), bounds
    if annotation is bool:
        return "bool", None, bounds
    if annotation is int:
        return "int", None, bounds
    if annotation is float:
        return "float", None, bounds
    return "other", None, bounds


def surely_invalid(kind: str, choices: Any, bounds: list[Any], value: Any) -> bool:
    """True if the documented type or range of the field rules ``value`` out."""
    if kind == "bool":
        return not isinstance(value, bool)
    if kind == "literal":
        return value not in choices or isinstance(value, bool)
    if kind in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return True
        if isinstance(value, float) and not math.isfinite(value):
            return True
        if kind == "int" and isinstance(value, float) and not value.is_integer():
            return True
        for b in bounds:
            if (isinstance(b, annotated_types.Ge) and not value >= b.ge) or (isinstance(b, annotated_types.Gt) and not value > b.gt) \
                    or (isinstance(b, annotated_types.Le) and not value <= b.le) or (isinstance(b, annotated_types.Lt) and not value < b.lt):
                return True
    return False


# --------------------------------------------------------------------------------------------------------
# Values of every type, written as TOML for --set

scalars = st.one_of(
    st.booleans(),
    st.integers(-3, 100),
    st.integers(-(2**70), 2**70),
    st.sampled_from([U32, U32 + 1, U64, U64 + 1, 2**63]),
    st.floats(-10, 1e4),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e30, -1e30, 1e-300, 0.5, 2.5, 0.0]),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=8),
    st.sampled_from(["4", "all", "leaf:0", "leaf:1", "0-3", "websearch", "ecmp", "packets", "fixed", "true"]),
)
values = st.one_of(
    scalars,
    st.lists(st.one_of(st.integers(-2, 20), st.sampled_from(["0-1", "leaf:1", "x"]), st.floats(allow_nan=True)), max_size=3),
    st.dictionaries(st.sampled_from(["kind", "us", "websearch", "leaf_up", "a"]), scalars, max_size=2),
)
small_or_huge = st.one_of(st.integers(-2, 64), st.integers(U32 + 1, 2**70), st.sampled_from([1.5, 4.0, math.inf, "4", True]))


def toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + "}"


@st.composite
def overrides(draw: st.DrawFn) -> tuple[str, str, str, Any, tuple[str, Any, list[Any]]]:
    """(base, --set text, field as errors name it, value, what the schema promises about the field)."""
    if draw(st.integers(0, 9)) == 0:  # the balancer: a scheme, or one of its parameters
        schemes = _core.schemes()
        scheme = draw(st.sampled_from([s["name"] for s in schemes]))
        params = next(s["params"] for s in schemes if s["name"] == scheme)
        name = draw(st.sampled_from(["scheme", *[p["name"] for p in params], "nonsense_param"]))
        value = draw(values)
        sets = [] if name == "scheme" else [f'lb.scheme="{scheme}"']
        return "base", sets + [f"lb.{name}={toml(value)}"], f"lb.{name}", value, ("other", None, [])
    base, table, shown, model = draw(st.sampled_from(TABLES))
    fields = sorted(set(model.model_fields) - {"sources"})
    name = draw(st.sampled_from([*fields, "no_such_field"]))
    value = draw(small_or_huge if name in SIZES else values)
    if name == "no_such_field":
        promise: tuple[str, Any, list[Any]] = ("unknown", None, [])
    else:
        info = model.model_fields[name]
        promise = _kind(info.annotation, list(info.metadata))
    return base, [f"{table}.{name}={toml(value)}"], f"{shown}.{name}", value, promise


#: What a valid dry run promises about the run it describes (issue #24): its times within the engine's clock
#: (an estimated end without a horizon within a tenth of it), every source expected to start a flow, and a
#: size within the event limit.
CLOCK_US = (2**64 - 1) / 1e6


def check_valid_run(facts: dict[str, Any]) -> None:
    from dclb.preview import event_limit

    assert facts["valid"] is True, facts
    if not facts["horizon"]:
        assert facts["sim_time_us"] <= 0.1 * CLOCK_US, facts
    for source in facts["sources"]:
        assert source["started"] >= 1 or source["flows"] >= 1 and source["started"] > 0, facts
        if source["end_us"] is not None:
            assert source["end_us"] < CLOCK_US or facts["horizon"], facts
    limit = event_limit()
    assert limit is None or facts["events"] <= limit, facts


def check(result: Any, field: str, value: Any, promise: tuple[str, Any, list[Any]]) -> None:
    text = result.stdout + result.stderr
    assert result.returncode in (0, 2), (result.returncode, text)
    for bad in ("Traceback", "panicked", "internal error", "engine config", "line 1 column"):
        assert bad not in text, text
    if result.returncode == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, result.stderr
    else:
        check_valid_run(json.loads(result.stdout))
    kind, choices, bounds = promise
    if kind == "unknown" or surely_invalid(kind, choices, bounds, value):
        assert result.returncode == 2, f"{field} = {value!r} was accepted: {text}"
        assert field in result.stderr, (field, result.stderr)


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bases")
    out = {}
    for name, text in (("base", BASE), ("sources", SOURCES), ("long", LONG)):
        out[name] = root / f"{name}.toml"
        out[name].write_text(text)
        assert dclb_main("run", str(out[name]), "--dry-run", "--no-store").returncode == 0
    return out


@settings(max_examples=300, deadline=timedelta(seconds=5), suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], derandomize=True)
@given(overrides())
def test_no_value_of_any_type_breaks_the_dry_run(bases, case):
    base, sets, field, value, promise = case
    args = ["run", str(bases[base]), "--dry-run", "--no-store", "--json", *[a for s in sets for a in ("--set", s)]]
    check(dclb_main(*args), field, value, promise)


@pytest.fixture(autouse=True, scope="module")
def _watchdog():
    """A hang in the engine (native code, where no Python timeout reaches) fails the run with tracebacks."""
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.mark.parametrize("base, setting, field, value, promise", [
    ("base", "topology.fabric_delay_us=1e30", "topology.fabric_delay_us", 1e30, ("float", None, [])),
    ("long", "run.sampler.ports=[true]", "run.sampler.ports", [True], ("other", None, [])),
])
def test_examples_through_the_installed_command(bases, base, setting, field, value, promise):
    result = dclb_cli("run", str(bases[base]), "--dry-run", "--no-store", "--json", "--set", setting)
    check(result, field, value, promise)


# --------------------------------------------------------------------------------------------------------
# The run-size rules over the fields that set times, rates, loads, counts, timers and scheme parameters:
# whatever they are, a valid dry run describes a run whose times fit the clock, whose every source has work
# and whose events are within the limit, and a refused one says why in one line that names a field.

TIMES = st.one_of(st.floats(0, 1e14, allow_nan=False), st.sampled_from([0.0, 1e-6, 1.0, 1e12, 1.8e13, 1.9e13]))
RATES = st.one_of(st.floats(1e-9, 100), st.sampled_from([1e-9, 1e-6, 1e-3]))
#: An error line: the field as the user wrote it, then what is wrong.
ERROR_LINE = re.compile(r"^error: ([A-Za-z_][\w.\[\]]*): \S")


@st.composite
def run_sizes(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(base, a few of the fields that decide a run's times, work and events, set at once). The base with two
    sources reaches a group source and a source that may have nothing to do beside one that has."""
    base = draw(st.sampled_from(["base", "sources"]))
    traffic = "traffic" if base == "base" else f"traffic.sources.{draw(st.integers(0, 1))}"
    fields = {
        "topology.host_rate_gbps": RATES,
        "topology.fabric_rate_gbps": RATES,
        "topology.fabric_delay_us": st.one_of(st.floats(0, 1e9), st.sampled_from([1e6, 1e9])),
        "transport.max_rto_us": st.one_of(TIMES.filter(lambda t: t >= 5000), st.sampled_from([1e10, 1e12])),
        "run.horizon_us": TIMES.filter(lambda t: t > 0),
        f"{traffic}.start_us": TIMES,
        f"{traffic}.deadline": st.builds(lambda us: {"kind": "fixed", "us": us}, TIMES.filter(lambda t: t > 0)),
        "run.sampler": st.builds(lambda us: {"interval_us": us}, st.sampled_from([1e-6, 1e-3, 1.0, 100.0])),
        "lb.scheme": st.sampled_from(['"hermes"', '"mdtlb"', '"lbt"', '"dar"']),
    }
    if base == "base" or traffic.endswith("0"):  # the poisson source
        fields[f"{traffic}.load"] = st.one_of(st.floats(1e-15, 1), st.sampled_from([1e-12, 1e-9, 1e-6]))
        fields[f"{traffic}.duration_us"] = st.one_of(TIMES.filter(lambda t: t > 0), st.sampled_from([1e-6, 1e-3, 1.0]))
    else:  # the group source
        fields[f"{traffic}.spread_us"] = TIMES
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), min_size=1, max_size=3, unique=True))
    sets = []
    for name in chosen:
        value = draw(fields[name])
        if name == "lb.scheme":  # a probing or timed scheme, at some interval
            sets.append(f"lb.scheme={value}")
            if value in ('"hermes"', '"mdtlb"'):
                sets.append(f"lb.probe_us={toml(draw(st.sampled_from([0.0, 1e-6, 1e-3, 1.0, 50.0])))}")
            continue
        sets.append(f"{name}={value if isinstance(value, str) else toml(value)}")
    return base, sets


def check_one_clear_line(result: Any, sets: list[str]) -> None:
    """A refused run size: exit 2 and one error line that names a field (the scheme's or the scenario's)."""
    assert result.returncode in (0, 2), result.stderr
    if result.returncode == 2:
        (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert ERROR_LINE.match(line), line
        if "clock" in line:
            assert "picoseconds in 64 bits" in line, line  # the clock's range is given


@settings(max_examples=200, deadline=timedelta(seconds=5), suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], derandomize=True)
@given(run_sizes())
def test_a_valid_dry_run_fits_the_clock_and_has_work_for_every_source(bases, case):
    base, sets = case
    result = dclb_main("run", str(bases[base]), "--dry-run", "--no-store", "--json", *[a for s in sets for a in ("--set", s)])
    check(result, "", None, ("other", None, []))
    check_one_clear_line(result, sets)


@pytest.mark.parametrize("base, sets, needle", [
    ("base", ["topology.host_rate_gbps=1e-9"], "error: topology.host_rate_gbps: "),
    ("sources", ["traffic.sources.1.start_us=1.8e13", "traffic.sources.1.spread_us=1e12"], "error: traffic.sources[1].spread_us: "),
    ("sources", ["traffic.sources.0.duration_us=1e-3"], "error: traffic.sources[0].duration_us: "),
    ("base", ['lb.scheme="hermes"', "lb.probe_us=1e-6"], "error: lb.probe_us: "),
])
def test_the_run_size_sweep_reaches_every_rule(bases, base, sets, needle):
    """The strategy above draws each of these (the clock, zero work, the event limit); checked by hand too, so
    that a strategy that stopped reaching one would not pass silently."""
    result = dclb_main("run", str(bases[base]), "--dry-run", "--no-store", *[a for s in sets for a in ("--set", s)])
    assert result.returncode == 2 and result.stderr.startswith(needle), result.stderr
    check_one_clear_line(result, sets)


#: Parameter relations the issue names (scheme, low parameter, high parameter): low must not exceed high.
RELATIONS = [
    ("hermes", "rtt_low_us", "rtt_high_us"),
    ("mdtlb", "rtt_low_s_us", "rtt_high_s_us"),
    ("mdtlb", "rtt_low_d_us", "rtt_high_d_us"),
    ("mdtlb", "portion_small", "portion_big"),
    ("lbt", "q_min_bytes", "q1_max_bytes"),
]


@settings(max_examples=40, deadline=timedelta(seconds=5), suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], derandomize=True)
@given(st.sampled_from(RELATIONS), st.integers(1, 1000), st.integers(1, 1000))
def test_a_valid_dry_run_keeps_every_parameter_relation(bases, relation, low, high):
    scheme, low_name, high_name = relation
    scale = 1000.0 if scheme == "mdtlb" and "portion" in low_name else 1.0
    sets = [f"lb.scheme=\"{scheme}\"", f"lb.{low_name}={low / scale!r}", f"lb.{high_name}={high / scale!r}"]
    result = dclb_main("run", str(bases["base"]), "--dry-run", "--no-store", "--json", *[a for s in sets for a in ("--set", s)])
    assert result.returncode in (0, 2), result.stderr
    if result.returncode == 0:
        assert low <= high, f"{scheme}: lb.{low_name} = {low / scale} above lb.{high_name} = {high / scale} was accepted"
    else:  # refused for the relation, in one line naming one of the two (the one the scenario gave: both)
        assert low > high, result.stderr
        (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert line.startswith(f"error: lb.{low_name}: ") and f"break {low_name} <= {high_name}" in line, line

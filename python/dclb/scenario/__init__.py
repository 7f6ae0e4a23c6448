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
bits per second), so no value the engine cannot parse ever reaches it. What the user wrote that would
be ignored is refused here too: ``size_bytes`` with a ``workload``, a source field its pattern does not read
(:data:`~dclb.scenario.schema.PATTERN_FIELDS`), a deadline field of another kind, a link property two
overrides both set or that a failure or blackhole makes moot; and, as the one relation checked here, an RTO cap
below the minimum or initial RTO. Everything else that relates
one value to another -- whether links stay connected, a scheme's parameters, whether a load can be carried,
whether a source can make a flow at all -- is decided by the engine's one check (``Config::check``), asked
through ``_core.check_config``, whose rules include three about the run as a whole, from the engine's estimate
of it (:mod:`dclb.preview` prints the same estimate): its times within the engine's clock, work for every
source, a size within the event limit. All raise
:class:`~dclb.errors.ScenarioError` with one line that names the field as the user wrote it. Every file a
scenario names is read through :func:`dclb.textfiles.read_text`, which names the file and field on any failure.

A validated scenario is resolved once (:func:`resolve`): host sets expanded (a long-lived source without
``receivers`` pairs each sender with the host at its position on the next leaf), workloads and flow lists
read, the engine config built. The check, :func:`describe_load` and :func:`engine_config` share that resolution,
so a run reads each file once; scenarios are immutable so that it cannot go stale. Overrides
(``--set a.b=value``) are applied to the raw TOML first, so they are validated exactly like the file.

The code
--------
This package is the scenario's public face; its parts, one job each: :mod:`~dclb.scenario.schema` (the
tables, their types, ranges and defaults, and the one-line message of a violation),
:mod:`~dclb.scenario.loading` (the file, overrides, validation) and :mod:`~dclb.scenario.resolution`
(files read once, host sets, the engine config and its check, engine errors in the user's words).
"""

from __future__ import annotations

from .loading import (
    apply_overrides, check_overrides, check_seed, field_path, from_dict, load_scenario, parse_override, read_scenario_file, scenario_from,
    set_field,
)
from .resolution import Resolution, ResolvedSource, describe_load, engine_config, resolve
from .schema import (
    MAX_GBPS,
    MAX_SWEEP_RUNS,
    MAX_US,
    MIN_GBPS,
    U32,
    U64,
    Deadline,
    Float,
    Int,
    Lb,
    LinkOverride,
    ListedFlow,
    Run,
    Sampler,
    Scenario,
    Source,
    Sweep,
    Topology,
    Traffic,
    Transport,
    validation_message,
    field_path_problem,
)

__all__ = [
    "load_scenario",
    "scenario_from",
    "check_overrides",
    "check_seed",
    "from_dict",
    "read_scenario_file",
    "apply_overrides",
    "parse_override",
    "set_field",
    "field_path",
    "field_path_problem",
    "resolve",
    "engine_config",
    "describe_load",
    "Resolution",
    "ResolvedSource",
    "Scenario",
    "Topology",
    "Transport",
    "Lb",
    "Traffic",
    "Source",
    "Deadline",
    "LinkOverride",
    "ListedFlow",
    "Sampler",
    "Run",
    "Sweep",
    "Int",
    "Float",
    "U32",
    "U64",
    "MAX_US",
    "MAX_SWEEP_RUNS",
    "MIN_GBPS",
    "MAX_GBPS",
    "validation_message",
]

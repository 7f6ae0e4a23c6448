"""How much memory a run may use, and the check the front makes before its own large allocations.

A scenario can ask for more memory than the machine has (a billion flows, 100,000 leaves, a sampler row every
0.1 ns). Allocating it would abort the engine (a Rust allocation failure ends the process) or raise
``MemoryError`` in Python, so the run's memory is estimated first and a run over the limit is refused with one
line naming the field. The engine estimates its own parts (``crates/dclb-core/src/memory.rs``) and holds the
run to the limit this module gives it; this module adds what Python allocates before the engine's check can
run: the host sets it expands (``senders = "all"`` on ten million hosts is a list of ten million numbers).

The limit is the memory available on this machine (``MemAvailable``, or a cgroup's remaining memory when that
is smaller), read when a scenario is checked and again when a run starts (a sweep's workers read their own).
``DCLB_MEMORY_LIMIT`` overrides it: a size such as ``8GB``, ``512MB`` or ``2GiB`` (KB, MB, GB, TB, PB are
decimal, KiB ... PiB binary, read by pydantic's ``ByteSize``; a plain number such as ``1e9`` is bytes), or
``none`` to turn the check off.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from pydantic import ByteSize, TypeAdapter, ValidationError

from . import _core
from .errors import ScenarioError, UserError

ENV = "DCLB_MEMORY_LIMIT"

#: Bytes Python and the engine's config parser spend on one host of an expanded host set (the set and the
#: sorted list being built, the JSON text, the engine's copy): about 65 B measured, rounded up.
BYTES_PER_EXPANDED_HOST = 128

_BYTE_SIZE = TypeAdapter(ByteSize)


def parse_size(text: str) -> Optional[int]:
    """Bytes from ``8GB``, ``512 MB``, ``2GiB``, ``1e9``; None for ``none`` or ``off``. Raises UserError."""
    if text.strip().lower() in ("none", "off"):
        return None
    try:
        given: float | str = float(text)  # a plain number, exponent included, is bytes
    except ValueError:
        given = text  # a number and a unit
    try:
        size = int(_BYTE_SIZE.validate_python(given))
    except (ValidationError, ValueError, OverflowError):  # not a size; inf and nan are no sizes either
        size = 0
    if size < 1:
        raise UserError(f"{ENV}: cannot read {text!r}; give a size such as 8GB, 512MB or 2GiB, or none to turn the memory check off")
    return size


def _available() -> Optional[int]:
    """Bytes this process can still get: MemAvailable, less if a cgroup (v2) limit leaves less; else the
    physical memory; None if the platform tells neither."""
    found: list[int] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            found.append(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()))
    except (OSError, ValueError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            return None
    return max(min(found), 0)


def memory_limit() -> Optional[tuple[int, str]]:
    """The memory a run may use and where that number comes from (for messages), or None for no limit."""
    text = os.environ.get(ENV)
    if text is not None:
        limit = parse_size(text)
        return None if limit is None else (limit, f"{ENV}={text.strip()}")
    available = _available()
    if available is None:
        return None
    return available, f"the memory available on this machine; set {ENV} to change it"


def _machine_memory() -> Optional[tuple[int, str]]:
    """All of this machine's memory (physical pages), for the bound that holds with the limit off; None if
    the platform does not say."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return total, f"all of this machine's memory: {ENV}=none lifts the limit on a run, but the checks before it build the fabric and expand the host sets, and those must fit the machine"


def check_before_expanding(skeleton: dict[str, Any], host_sets: list[tuple[str, int]]) -> None:
    """Refuses, before any host set is expanded and before the fabric is built, a scenario whose fields
    break a rule that needs no allocation (a fabric with more ports than the engine's 32-bit ids), or whose
    fabric (and sampler, over a horizon) and expanded host sets already exceed the limit. With the limit
    off (``DCLB_MEMORY_LIMIT=none``) they are still held to the machine's whole memory: the check builds
    the fabric and expands the sets itself, so a fabric no machine of this size can hold would otherwise
    grow until the system kills the process, a dry run included. ``skeleton``: the engine config without
    its sources; ``host_sets``: (field, how many hosts the set names at most) for each sender and receiver
    set."""
    limit = memory_limit() or _machine_memory()
    hosts = sum(n for _, n in host_sets)
    extra = []
    if host_sets:
        field = max(host_sets, key=lambda item: item[1])[0]
        extra.append((f"host sets of {hosts} hosts", field, float(hosts * BYTES_PER_EXPANDED_HOST), "name fewer hosts, or use fewer hosts or leaves"))
    try:
        _core.check_memory(json.dumps(skeleton), extra, limit)
    except _core.ConfigError as e:
        # Without sources, the engine's field names are the user's (topology, transport, lb, run and the
        # host-set fields given above, which are named as the user wrote them).
        raise ScenarioError(str(e)) from None

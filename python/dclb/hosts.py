"""Host-set syntax used by traffic sources.

A host set names global host indices (hosts are numbered leaf by leaf: leaf ``l`` holds hosts
``l*hosts_per_leaf .. (l+1)*hosts_per_leaf - 1``). Accepted forms, alone or comma-separated, as a string or as
a list whose items are ints or such strings:

* ``"all"`` — every host;
* ``"leaf:2"`` or ``"leaf:0-3"`` — every host on those leaves;
* ``"17"`` or ``"0-99"`` — host indices (ranges inclusive).
"""

from __future__ import annotations

from typing import Union

from .errors import ScenarioError

HostSpec = Union[str, int, list]


def _range(text: str, field: str, limit: int, what: str) -> range:
    try:
        if "-" in text:
            lo, hi = (int(x) for x in text.split("-", 1))
        else:
            lo = hi = int(text)
    except ValueError:
        raise ScenarioError(f"{field}: cannot read {text!r}; use 'all', 'leaf:A-B', 'A-B' or a list of host numbers") from None
    if lo < 0 or hi < lo or hi >= limit:
        raise ScenarioError(f"{field}: {what} range {text!r} is outside 0..{limit - 1}")
    return range(lo, hi + 1)


def host_set_size(spec: HostSpec, leaves: int, hosts_per_leaf: int) -> int:
    """At most how many hosts ``spec`` names, counted without expanding it (repeats counted twice, anything
    unreadable as nothing: :func:`parse_hosts` reports it). What the memory check needs before expanding."""
    total = leaves * hosts_per_leaf
    count = 0
    for item in spec if isinstance(spec, list) else [spec]:
        if isinstance(item, int) and not isinstance(item, bool):
            count += 1
            continue
        if not isinstance(item, str):
            continue
        for part in (p.strip() for p in item.split(",")):
            try:
                if part == "all":
                    count += total
                elif part.startswith("leaf:"):
                    count += len(_range(part[5:], "", leaves, "leaf")) * hosts_per_leaf
                elif part:
                    count += len(_range(part, "", total, "host"))
            except ScenarioError:
                pass
    return min(count, total)


def parse_hosts(spec: HostSpec, leaves: int, hosts_per_leaf: int, field: str) -> list[int]:
    """Expands a host set into sorted, de-duplicated host indices."""
    total = leaves * hosts_per_leaf
    items = spec if isinstance(spec, list) else [spec]
    out: set[int] = set()
    for item in items:
        if isinstance(item, bool):
            raise ScenarioError(f"{field}: expected host numbers or a host-set string, got {item!r}")
        if isinstance(item, int):
            if not 0 <= item < total:
                raise ScenarioError(f"{field}: host {item} does not exist (hosts are 0..{total - 1})")
            out.add(item)
            continue
        if not isinstance(item, str):
            raise ScenarioError(f"{field}: expected host numbers or a host-set string, got {item!r}")
        for part in (p.strip() for p in item.split(",")):
            if part == "all":
                out.update(range(total))
            elif part.startswith("leaf:"):
                for leaf in _range(part[5:], field, leaves, "leaf"):
                    out.update(range(leaf * hosts_per_leaf, (leaf + 1) * hosts_per_leaf))
            elif part:
                out.update(_range(part, field, total, "host"))
    if not out:
        raise ScenarioError(f"{field}: the host set is empty")
    return sorted(out)

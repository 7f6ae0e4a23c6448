"""dclb: a packet-level simulator of leaf-spine datacenter fabrics and their load balancers.

Python entry points (the CLI ``dclb`` wraps the same functions):

* :func:`dclb.load_scenario` — read and validate a scenario TOML file (with ``--set``-style overrides);
* :func:`dclb.run` — simulate one scenario, store the results, return tables and a summary;
* :func:`dclb.sweep` — run a scenario over a grid of values and seeds, in parallel, into one result store;
* :func:`dclb.open_store` — open a results directory and query it with pandas or SQL.

The Rust engine lives in ``dclb._core`` and is imported lazily, so that the pure-Python parts (store,
summary, scenario parsing) work even where the extension is not built.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "load_scenario": ("dclb.scenario", "load_scenario"),
    "Scenario": ("dclb.scenario", "Scenario"),
    "ScenarioError": ("dclb.errors", "ScenarioError"),
    "UserError": ("dclb.errors", "UserError"),
    "run": ("dclb.runner", "run"),
    "RunResult": ("dclb.runner", "RunResult"),
    "SourceWithoutFlows": ("dclb.runner", "SourceWithoutFlows"),
    "open_store": ("dclb.store", "open_store"),
    "sweep": ("dclb.sweeps", "sweep"),
    "summarize": ("dclb.summary", "summarize"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(import_module(module), attr)
    raise AttributeError(f"module 'dclb' has no attribute {name!r}")


__all__ = sorted(_LAZY) + ["__version__"]

"""Re-running each paper's evaluation: ``dclb reproduce PAPER``.

A paper is a Python module in :mod:`dclb.reproduce.papers` that describes its figures (:mod:`.spec`) over shipped
scenario files in ``dclb/data/papers/<paper>/`` and declares each claim as data (:mod:`.claims`: compare, rank,
trend, level, not testable) over shared metrics (:mod:`.metrics`). :func:`reproduce` plans the runs at a scale
(:mod:`.plan`), runs what the store lacks (:mod:`.run`), draws every figure (:mod:`.draw`), judges each claim
under one rule and gives its reason (:mod:`.verdict`) and writes the report and summaries (:mod:`.report`).
"""

from __future__ import annotations

import importlib

from ..errors import ScenarioError
from .spec import Paper

#: The papers, in the order ``all`` runs them.
PAPERS = ("lbt", "tam", "tr", "dar", "mdtlb")


def available() -> list[str]:
    """The papers ``all`` runs: every one of :data:`PAPERS` (each is a module in :mod:`dclb.reproduce.papers`)."""
    return list(PAPERS)


def get_paper(key: str) -> Paper:
    if key not in PAPERS:
        raise ScenarioError(f"PAPER: unknown paper {key!r}; allowed: {', '.join(PAPERS)}, all")
    return importlib.import_module(f"{__name__}.papers.{key}").PAPER


def reproduce(*args, **kwargs):
    from .run import reproduce as _reproduce

    return _reproduce(*args, **kwargs)

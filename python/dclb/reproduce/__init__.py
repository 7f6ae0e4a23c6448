"""Re-running each paper's evaluation: ``dclb reproduce PAPER``.

A paper is a Python module in :mod:`dclb.reproduce.papers` that describes its figures (:mod:`.spec`) over shipped
scenario files in ``dclb/data/papers/<paper>/``. :func:`reproduce` plans the runs at a scale (:mod:`.plan`),
runs what the store lacks (:mod:`.run`), draws every figure (:mod:`.draw`), judges each claim from the data
(:mod:`.verdict`) and writes the report (:mod:`.report`).
"""

from __future__ import annotations

import importlib

from ..errors import ScenarioError
from .spec import Paper

#: The papers, in the order ``all`` runs them.
PAPERS = ("lbt", "tam", "tr", "dar", "mdtlb")


def available() -> list[str]:
    """The papers whose reproduction is written (a module in :mod:`dclb.reproduce.papers`)."""
    out = []
    for key in PAPERS:
        try:
            importlib.import_module(f"{__name__}.papers.{key}")
        except ModuleNotFoundError:
            continue
        out.append(key)
    return out


def get_paper(key: str) -> Paper:
    if key not in PAPERS:
        raise ScenarioError(f"PAPER: unknown paper {key!r}; allowed: {', '.join(PAPERS)}, all")
    try:
        module = importlib.import_module(f"{__name__}.papers.{key}")
    except ModuleNotFoundError:
        raise ScenarioError(f"PAPER: the reproduction of {key!r} is not written yet; available: {', '.join(available()) or 'none'}") from None
    return module.PAPER


def reproduce(*args, **kwargs):
    from .run import reproduce as _reproduce

    return _reproduce(*args, **kwargs)

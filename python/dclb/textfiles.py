"""Reading the text files a user names: a scenario file, a workload CDF, a flow list.

Every such file is read through :func:`read_text`, so that whatever is wrong with it -- missing, a directory,
unreadable, binary, not UTF-8 -- is one :class:`~dclb.errors.ScenarioError` line that names the field that
named the file (when there is one), the file, and what is wrong, never a codec's message without a file name.
A UTF-8 byte-order mark, which some editors and spreadsheet programs write at the start of a file, is dropped
(it would otherwise become part of the first CSV column's name or of the first TOML key).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from .errors import ScenarioError
from .paths import file_part

#: A NUL byte never occurs in the text formats read here; a file with one is binary.
_BINARY_MARK = "\x00"


def read_text(path: str | os.PathLike[str], what: str, field: Optional[str] = None) -> str:
    """The text of ``path``, a ``what`` (``"scenario file"``, ``"workload CDF"``, ``"flow list"``) named by
    ``field`` (``"traffic.flows_csv"``, or None for a file given on the command line).

    Raises ScenarioError, starting with the field (or the path when there is no field), for a path that is
    empty, missing, a directory, unreadable, binary or not UTF-8 text."""
    shown = str(path)
    head = f"{field}: " if field else ""
    if not shown:
        raise ScenarioError(f"{head or 'path: '}empty path; give the {what}'s path")
    p = Path(path)
    if (part := file_part(p)) is not None:
        raise ScenarioError(f"{head}cannot read {shown}: {part} is a file, not a directory, so there is no {what} under it")
    if p.is_dir():
        raise ScenarioError(f"{head}{shown} is a directory, not a {what}")
    if not p.exists():
        raise ScenarioError(f"{head}{shown}: no such {what}")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ScenarioError(f"{head}{shown}: cannot read the {what}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ScenarioError(
            f"{head}{shown}: not a text file (byte {e.start} is not UTF-8); a {what} is UTF-8 text"
        ) from None
    if _BINARY_MARK in text:
        raise ScenarioError(f"{head}{shown}: not a text file (it contains NUL bytes); a {what} is UTF-8 text")
    return text

"""Paths a user gives: one check per kind of path, each a one-line :class:`~dclb.errors.UserError`.

Every option or field that names a path goes through one of these before anything is read or written (and
before a run is simulated, so that an output that cannot be written costs no simulation):

* :func:`output_dir`: a directory to write into, created if missing (``--out`` of ``run``, ``sweep`` and
  ``reproduce``; the result store of ``dclb.run`` and ``dclb.sweep``);
* :func:`output_file`: a file to write, its directories created if missing (``--out`` of ``plot`` and
  ``report``, ``--dump-config``);
* files to read (a scenario file, a workload CDF, a flow list) are read through
  :func:`dclb.textfiles.read_text`, which asks :func:`file_part` too; a result store to read is checked by
  the store (:meth:`dclb.store.Store._require_store`), likewise.

What they tell apart, the cases the operating system reports only as ``File exists`` or ``Not a
directory`` naming a part of the path the user may not recognise:

* a part of the path that is a regular file where a directory must be (``afile/x.png``);
* a directory where a file is expected, and a file where a directory is expected;
* a location this process cannot write (the nearest existing directory is read-only or not ours; an
  existing directory is probed by creating and removing a file, which also finds a read-only mount).

Nothing is created here: a command that then fails leaves no new directory behind. Only the standard
library is used (the CLI calls these before the storage stack loads).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Union

from .errors import UserError

PathLike = Union[str, "os.PathLike[str]"]


def file_part(path: Path) -> Path | None:
    """The first proper ancestor of ``path`` that exists and is not a directory (a regular file, say)."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
        if not parent.exists():
            return None
    return None


def _nearest_existing(path: Path) -> Path:
    existing = path
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    return existing


def _writable_dir(directory: Path) -> str | None:
    """Why nothing can be created in the existing directory ``directory``, or None if something can."""
    if not os.access(directory, os.W_OK | os.X_OK):
        return "permission denied"
    try:
        fd, probe = tempfile.mkstemp(prefix=".dclb-write-check-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        return error.strerror or str(error)
    return None


def _parts_are_directories(path: Path, label: str, doing: str) -> None:
    part = file_part(path)
    if part is not None:
        raise UserError(f"{label}: cannot {doing} {path}: {part} is a file, not a directory, so nothing can be made under it; give another path")


def output_dir(path: PathLike, label: str) -> Path:
    """Checks that the results directory ``path`` can be written (or created): returns it as a Path.

    An existing ``path`` must be a directory this process can create files in; a missing one needs every
    existing part of it to be a directory, the nearest of which this process can write in."""
    path = Path(path)
    _parts_are_directories(path, label, "write results to")
    if path.exists() and not path.is_dir():
        raise UserError(f"{label}: cannot write results to {path}: it is a file, not a directory; give a directory (it is created if missing)")
    existing = _nearest_existing(path)
    why = _writable_dir(existing)
    if why is not None:
        where = "write in it" if existing == path else f"create it in {existing}"
        raise UserError(f"{label}: cannot write results to {path}: cannot {where} ({why})")
    return path


def output_file(path: PathLike, label: str) -> Path:
    """Checks that the file ``path`` can be written (replaced if it exists; its directories created if
    missing): returns it as a Path."""
    path = Path(path)
    _parts_are_directories(path, label, "write")
    if path.is_dir():
        raise UserError(f"{label}: cannot write {path}: it is a directory; give a file name (such as {path / 'out'}{path.suffix or ''})")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise UserError(f"{label}: cannot write {path}: the file is not writable (permission denied)")
        return path
    existing = _nearest_existing(path.parent)
    why = _writable_dir(existing)
    if why is not None:
        raise UserError(f"{label}: cannot write {path}: cannot create it in {existing} ({why})")
    return path

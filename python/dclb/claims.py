"""Claims: several sweeps on one store share the work instead of each running every point.

How it works
------------
Before a sweep worker runs a point it *claims* it: it writes ``DIR/claims/<run_id>.json`` saying who runs it
(process id, host name, start time, a random token). A claim is taken and given up while holding the file lock
``DIR/claims.lock``, so two processes can never both believe they hold one, and it is written to a temporary
name and renamed into place, so it is never seen half-written. Whoever finds a point claimed by someone alive
leaves it to them (:mod:`dclb.sweeps` comes back to it at the end of its queue, by when it is usually done).

While a point runs, a thread of its worker touches the claim file every :data:`HEARTBEAT_S` seconds. A claim
is *stale*, and may be taken over, when its owner is gone: on the same host, when no process has its id; on
any host, when its file has not been touched for :data:`STALE_AFTER_S` seconds (the owner was killed on
another machine, or its id was reused). So a sweep killed with SIGKILL, or on a machine that died, never
blocks a point for long. A claim is only a promise to do the work, not a lock on the results: the run folder
is still published by one atomic rename (:mod:`dclb.store`), so a claim taken over from a process that was
only paused cannot corrupt anything; the point is at worst run twice.

A claim file that outlives its owner is harmless; ``dclb store check`` lists stale ones and ``dclb store
repair`` deletes them.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

import filelock

from . import interrupts

CLAIMS_DIR = "claims"
CLAIMS_LOCK = "claims.lock"
#: How often a running point's claim is touched, in seconds.
HEARTBEAT_S = 15.0
#: A claim untouched for this long is stale whoever owns it, in seconds.
STALE_AFTER_S = 120.0
LOCK_TIMEOUT_S = 600.0

_HOST = socket.gethostname()


def claims_path(store_path: Path) -> Path:
    return store_path / CLAIMS_DIR


def _claim_file(store_path: Path, run_id: str) -> Path:
    return claims_path(store_path) / f"{run_id}.json"


@contextlib.contextmanager
def _lock(store_path: Path) -> Iterator[None]:
    from .errors import StoreError

    lock = filelock.FileLock(str(store_path / CLAIMS_LOCK), timeout=LOCK_TIMEOUT_S)
    try:
        with interrupts.deferred(), lock:
            yield
    except filelock.Timeout as error:
        raise StoreError(f"timed out waiting for the claims lock of {store_path}") from error


def _pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user has that id
        return True
    return True


def read_claim(path: Path) -> Optional[dict[str, Any]]:
    """The claim in ``path`` with its age (``age_s``), or None if there is none. An unreadable claim has no
    owner and an infinite age: it is stale."""
    try:
        age = time.time() - path.stat().st_mtime
        info = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        info = {}
        age = float("inf")
    if not isinstance(info, dict):
        info, age = {}, float("inf")
    return {**info, "age_s": age}


def is_stale(claim: dict[str, Any]) -> bool:
    """Whether a claim's owner is gone (see the module documentation)."""
    if claim.get("age_s", float("inf")) > STALE_AFTER_S:
        return True
    if claim.get("host") == _HOST:
        return not _pid_alive(claim.get("pid"))
    return False


def process_gone(pid: int, host: str) -> bool:
    """Whether process ``pid`` of ``host`` is known to be gone (only a process of this host can be known to)."""
    return host == _HOST and not _pid_alive(pid)


def describe(claim: dict[str, Any]) -> str:
    return f"process {claim.get('pid', '?')} on {claim.get('host', '?')} since {claim.get('since', '?')}"


@dataclass
class Claim:
    """A point this process has claimed; :meth:`release` (or leaving the ``with`` block) gives it up."""

    store_path: Path
    run_id: str
    token: str
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: Optional[threading.Thread] = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return _claim_file(self.store_path, self.run_id)

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with contextlib.suppress(OSError):
                os.utime(self.path)

    def start_heartbeat(self) -> None:
        self._thread = threading.Thread(target=self._beat, name=f"dclb-claim-{self.run_id}", daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Deletes the claim if it is still ours (a claim taken over as stale belongs to its new owner)."""
        self._stop.set()
        with _lock(self.store_path):
            current = read_claim(self.path)
            if current is not None and current.get("token") == self.token:
                self.path.unlink(missing_ok=True)

    def __enter__(self) -> "Claim":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def try_claim(store_path: Path, run_id: str) -> tuple[Optional[Claim], Optional[dict[str, Any]]]:
    """Claims ``run_id`` for this process: (the claim, None), or (None, the live claim of its owner)."""
    from .store.files import write_json
    from .store.records import check_run_id, utc_now

    check_run_id(run_id)
    folder = claims_path(store_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = _claim_file(store_path, run_id)
    mine = {"pid": os.getpid(), "host": _HOST, "since": utc_now(), "token": secrets.token_hex(8)}
    with _lock(store_path):
        current = read_claim(path)
        if current is not None and not is_stale(current):
            return None, current
        write_json(path, mine)
    claim = Claim(store_path, run_id, mine["token"])
    claim.start_heartbeat()
    return claim, None


def claims(store_path: Path) -> dict[str, dict[str, Any]]:
    """Every claim file of a store: run id -> claim (with ``age_s``)."""
    folder = claims_path(store_path)
    if not folder.is_dir():
        return {}
    out = {}
    for path in sorted(folder.glob("*.json")):
        claim = read_claim(path)
        if claim is not None:
            out[path.name[: -len(".json")]] = claim
    return out


def drop_stale(store_path: Path, run_id: str) -> bool:
    """Deletes the claim of ``run_id`` if it is stale; True if it did."""
    path = _claim_file(store_path, run_id)
    with _lock(store_path):
        current = read_claim(path)
        if current is None or not is_stale(current):
            return False
        path.unlink(missing_ok=True)
        return True

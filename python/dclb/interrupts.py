"""Interrupts: Ctrl-C and SIGTERM end a command promptly, with one line, and leave the store consistent.

How it works
------------
Three pieces, used by the CLI, the store and the sweep:

* :func:`install` (the CLI calls it first) turns SIGINT, SIGTERM and SIGHUP into :class:`Interrupted`, a
  :class:`KeyboardInterrupt` that remembers the signal. Python raises it in the main thread at the next
  bytecode; the engine gives control back between chunks of events (a few tenths of a second), so a run
  stops within that. A signal that was ignored when the process started (``nohup``, a background job)
  stays ignored. Only the first signal raises: the process is then on its way out, and a second Ctrl-C of
  an impatient user must not cut its clean-up (bounded to seconds) short. Once a signal has arrived,
  :func:`happened` is true for the rest of the process: an error
  that surfaces because of the interrupt (DuckDB's "Query interrupted", a broken process pool) is then
  reported as the interrupt, not as a bug.

* :func:`deferred` holds signals back for the length of a block and delivers them, as they would have been,
  when it ends. The store wraps every step that must not be cut in two in it: publishing a run folder (two
  renames), writing catalog rows (a delete and an insert), taking or dropping a claim. :func:`shielded`
  holds them back and drops them: a command cleaning up after an interrupt is not cut short by the second
  Ctrl-C of an impatient user. Both only act in the main thread (the only one where Python runs signal
  handlers); elsewhere they do nothing.

* :func:`children_ignore_sigint` blocks SIGINT in the calling thread while worker processes are started.
  The signal mask survives ``fork`` and ``exec``, and a Python that starts with SIGINT blocked never sees
  one, so a Ctrl-C at the terminal (sent to the whole process group) reaches only the coordinating process:
  no worker prints a traceback of its own, and the coordinator stops the workers in order (see
  :mod:`dclb.sweeps`). A SIGINT that arrives meanwhile stays pending and is delivered when the block ends,
  so it is not lost.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Interrupted", "install", "happened", "deferred", "shielded", "children_ignore_sigint", "SIGNALS"]

#: The signals that mean "stop": Ctrl-C, ``kill`` and a closed terminal.
SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

_first_signal: int | None = None


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread when a stop signal arrives. ``note`` may say what was kept (a sweep sets it
    to how many of its runs are stored)."""

    def __init__(self, signum: int = signal.SIGINT, note: str | None = None) -> None:
        super().__init__(signum, note)
        self.signum = signum
        self.note = note

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


def _raise(signum: int, frame: Any) -> None:
    global _first_signal
    if _first_signal is not None:
        return  # already stopping: a second Ctrl-C must not cut the clean-up short
    _first_signal = signum
    raise Interrupted(signum)


def install() -> None:
    """Makes SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread (signals the process
    started with ignored stay ignored)."""
    global _first_signal
    if threading.current_thread() is not threading.main_thread():
        return
    _first_signal = None  # a new command in this process (in-process callers run several)
    for signum in SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _raise)


def happened() -> bool:
    """True once a stop signal has been delivered to :func:`install`'s handler in this process."""
    return _first_signal is not None


def _deliver(signum: int, handler: Any) -> None:
    """Does what ``handler`` (a previous signal disposition) would have done with ``signum``."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        os.kill(os.getpid(), signum)  # the default action: the process ends


@contextlib.contextmanager
def _holding(replay: bool) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        received.append(signum)

    previous = {signum: signal.signal(signum, hold) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if replay and received:
            _deliver(received[0], previous[received[0]])


def deferred() -> contextlib.AbstractContextManager[None]:
    """Holds stop signals back during the block and delivers the first one when it ends."""
    return _holding(replay=True)


def shielded() -> contextlib.AbstractContextManager[None]:
    """Ignores stop signals during the block (cleaning up after an interrupt)."""
    return _holding(replay=False)


@contextlib.contextmanager
def children_ignore_sigint() -> Iterator[None]:
    """Processes started by this thread inside the block (and the threads it starts) never receive SIGINT;
    one sent to this process meanwhile is delivered when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX: nothing to inherit
        yield
        return
    # Starting multiprocessing's resource tracker unblocks SIGINT afterwards (it blocks it only while it
    # starts the tracker), so start the tracker first.
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

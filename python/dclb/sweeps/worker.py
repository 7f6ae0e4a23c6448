"""The worker side of a sweep: running one point into the store, and stopping when asked.

:func:`run_point` runs in a worker process (the local pool's, or a Dask worker): it claims the point
(:mod:`dclb.claims`), runs it and writes its run folder, or writes a failed folder with the error's one
line (:func:`dclb.errors.one_line`). A point another live process has claimed comes back ``busy``, or, when
the task says ``wait``, is waited for. The coordinator asks its workers to stop through a
:class:`multiprocessing.Event` (local pool) or a stop file in the store (Dask), which the engine's progress
callback looks at between chunks of events; a stopped point writes nothing.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import one_line

if TYPE_CHECKING:
    from ..store import RunRecord


def failed_record(task: Mapping[str, Any], error: str, started: str, wall_s: float) -> RunRecord:
    """The record of a point that failed: its validated scenario if it has one, else its raw data."""
    from ..store import RunRecord

    sc = task.get("scenario")
    return RunRecord(
        run_id=task["run_id"], name=sc.name if sc is not None else task["raw"].get("name"), status="failed",
        seed=task["seed"], scenario=sc.resolved() if sc is not None else task["raw"],
        started_at=started, wall_s=wall_s, error=error,
    )


#: How often a worker looks again at a point another sweep is running, in seconds.
CLAIM_POLL_S = 0.5
#: Name prefix of the stop files of interrupted Dask sweeps, in ``DIR/claims/``.
STOP_PREFIX = "stop-"
#: How long the coordinator gives its workers to stop after an interrupt before it kills them, in seconds.
STOP_GRACE_S = 10.0

# Set in the processes of the local pool: the coordinator's request to stop (a multiprocessing Event), and
# whether this process got a SIGTERM of its own.
_STOP_EVENT: Any = None
_STOPPING = False


_task_stop = threading.local()  # .path: the stop file of the sweep whose point this thread runs (Dask)


def _stop_requested() -> bool:
    if _STOPPING or (_STOP_EVENT is not None and _STOP_EVENT.is_set()):
        return True
    path = getattr(_task_stop, "path", None)
    return path is not None and os.path.exists(path)


def _check_stop(*_progress: Any) -> None:
    """The engine's progress callback in a worker: between chunks of events, give up the point if asked."""
    if _stop_requested():
        from ..interrupts import Interrupted

        raise Interrupted(signal.SIGTERM)


def run_point(task: Mapping[str, Any]) -> dict[str, Any]:
    """Runs one valid sweep point in a worker and writes its run folder; returns what the coordinator needs.

    The point is claimed first (:mod:`dclb.claims`). If another live process holds its claim the reply has
    ``status = "busy"``, unless ``task["wait"]``, when the worker waits for that process to finish (or
    die) and then uses its run (or runs the point itself). A point is given up, with ``status =
    "interrupted"`` and nothing written, when the coordinator asks its workers to stop.

    Never raises for a failed point (the failure is written to the store and returned); only a store that
    cannot be written at all propagates."""
    from .. import claims
    from ..interrupts import Interrupted
    from ..runner import SourceWithoutFlows, run
    from ..store import Store, utc_now

    t0 = time.perf_counter()
    started = utc_now()
    store = Store(task["store"])
    run_id = task["run_id"]
    reply: dict[str, Any] = {"run_id": run_id, "status": "failed", "reused": False, "error": None, "record": None, "sim_s": 0.0, "worker_s": 0.0, "pid": os.getpid()}

    def done(**fields: Any) -> dict[str, Any]:
        reply.update(fields, worker_s=time.perf_counter() - t0)
        _task_stop.path = None
        return reply

    _task_stop.path = task.get("stop_file")  # run by Dask: the coordinator creates this file to stop

    claim = None
    while claim is None:
        if _stop_requested():
            return done(status="interrupted")
        found = store.verify(run_id)
        if found.ok:
            return done(status="completed", reused=True, record=found.record)
        claim, owner = claims.try_claim(store.path, run_id)
        if claim is None:
            if not task.get("wait"):
                return done(status="busy", owner=owner)
            time.sleep(CLAIM_POLL_S)  # in the worker: the coordinator itself never polls
    with claim:
        found = store.verify(run_id)  # it may have been published between our check and our claim
        if found.ok:
            return done(status="completed", reused=True, record=found.record)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", SourceWithoutFlows)
                result = run(task["scenario"], out=store.path, catalog=False, config=task["config"], progress=_check_stop, strict=bool(task.get("strict")))
            # The coordinator says what the run warned of (a worker's own output is not seen).
            notes = [str(w.message) for w in caught if issubclass(w.category, SourceWithoutFlows)]
            return done(status="completed", record=result.record.as_dict(), sim_s=float(result.stats.get("wall_s", 0.0)), warnings=notes)
        except Interrupted:
            if _stop_requested():
                return done(status="interrupted")
            raise
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: BLE001 -- the engine may raise a PanicException
            message = one_line(error, name_type=True)
            record = failed_record(task, message, started, time.perf_counter() - t0)
            store.write_failed(run_id, record)
            return done(error=message, record=record.as_dict())


def _worker_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM in a pool worker: finish cleanly, like a stop request from the coordinator."""
    global _STOPPING
    _STOPPING = True


def pool_worker_init(parent_pid: int, stop_event: Any) -> None:
    """Initializer of the local pool's processes. Ctrl-C is the coordinator's to handle (it reaches the whole
    process group): the coordinator asks the workers to stop through ``stop_event``, and each gives up its
    point between two chunks of engine events, writing nothing. A worker whose coordinator died exits."""
    global _STOP_EVENT
    _STOP_EVENT = stop_event
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_sigterm)
    _exit_with_parent(parent_pid)


def _exit_with_parent(parent_pid: int) -> None:
    """A worker whose coordinator died (e.g. was killed) exits instead of lingering."""

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="dclb-exit-with-parent", daemon=True).start()

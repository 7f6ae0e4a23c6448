"""Where a sweep's points run: a local process pool, or a Dask cluster (local or remote).

Both executors take the same tasks (:func:`dclb.sweeps.worker.run_point`) and answer the coordinator's four
questions: submit a task, wait for any to finish, how many are running, and close (with ``cancel``, asking
the workers to give up their points and killing those that have not after
:data:`~dclb.sweeps.worker.STOP_GRACE_S` seconds).

**The caller's script is not run again in the workers.** The local pool starts its processes with the
``spawn`` method (a fresh interpreter: no inherited threads or locks, the same on every platform). A spawned
process normally imports the parent's main module first, so that functions defined there can be unpickled;
a script that calls ``dclb.sweep(..., jobs=2)`` without an ``if __name__ == "__main__":`` guard would then
call the sweep again in every worker, which multiprocessing refuses with a traceback, and every point
would come back failed. dclb's tasks need nothing from the main module (the task function, its arguments
and the initializer are all dclb's), so the pool's processes, named :data:`WORKER_NAME`, start without it:
the preparation data a spawned process gets (:func:`multiprocessing.spawn.get_preparation_data`) leaves out
the main module for processes of that name, and only for them (and, while a local Dask cluster starts its
worker processes, for the processes it starts: they run the same tasks). A script with or without the guard
sweeps the same, and nothing of it runs twice. Should a worker still find itself re-running a sweep while it
starts (:func:`refuse_in_bootstrap`), it says so in one line naming the guard.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.context
import multiprocessing.spawn
import os
import secrets
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Optional

from ..errors import UserError, one_line
from .worker import STOP_GRACE_S, STOP_PREFIX, pool_worker_init, run_point


#: Name prefix of the local pool's processes: the processes started without the caller's main module.
WORKER_NAME = "dclb-sweep-worker"

_stock_preparation_data = multiprocessing.spawn.get_preparation_data
#: True while a local Dask cluster starts its workers (:func:`_without_main_module`).
_starting_cluster = False


def _preparation_data(name: str) -> dict[str, Any]:
    """What a spawned process is prepared with; for the pool's own processes, without the main module."""
    data = _stock_preparation_data(name)
    if name.startswith(WORKER_NAME) or _starting_cluster:
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
    return data


@contextlib.contextmanager
def _without_main_module() -> Any:
    """Processes spawned in this block (a local Dask cluster's nannies and workers, started before its
    constructor returns) start without the caller's main module."""
    global _starting_cluster
    multiprocessing.spawn.get_preparation_data = _preparation_data
    _starting_cluster = True
    try:
        yield
    finally:
        _starting_cluster = False


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned process of the local pool, named so that it starts without the caller's main module."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = f"{WORKER_NAME}-{self.name}"


class _WorkerContext(multiprocessing.context.SpawnContext):
    Process = _WorkerProcess


def refuse_in_bootstrap() -> None:
    """Raises UserError when called in a process that multiprocessing is still starting (it imports the
    parent's main module): a script that starts a sweep at its top level, without the guard, in a process
    started by some other pool than dclb's."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise UserError(
            "sweep: started while a new worker process was still starting (it runs the calling script's top level "
            "again); put the script's sweep under `if __name__ == \"__main__\":`"
        )


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _LocalPool:
    def __init__(self, jobs: int) -> None:
        # The stock preparation data, but without the main module for the pool's own processes (module doc).
        multiprocessing.spawn.get_preparation_data = _preparation_data
        context = _WorkerContext()
        self.slots = jobs
        self.description = f"{jobs} local process{'es' if jobs != 1 else ''}"
        self.stop_event = context.Event()
        self.pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=context,
            initializer=pool_worker_init,
            initargs=(os.getpid(), self.stop_event),
        )

    def submit(self, task: dict[str, Any]) -> Any:
        return self.pool.submit(run_point, task)

    def wait_any(self, futures: Iterable[Any]) -> Iterable[Any]:
        return wait(futures, return_when=FIRST_COMPLETED).done

    def running(self, futures: Iterable[Any]) -> int:
        return min(self.slots, sum(1 for f in futures if f.running()))

    def close(self, cancel: bool = False) -> None:
        """Shuts the pool down; with ``cancel``, asks the workers to give up their points, waits up to
        :data:`STOP_GRACE_S` for them to exit, and kills any that have not."""
        if not cancel:
            self.pool.shutdown(wait=True)
            return
        self.stop_event.set()
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join(1.0)


class _DaskCluster:
    def __init__(self, dask: Any, jobs: int) -> None:
        import logging

        try:
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - distributed is a dependency
            raise UserError(f"--dask: the 'distributed' package is not installed ({e})") from None
        self.cluster = None
        self.own_client = True
        self.futures: list[Any] = []
        self.stop_file: Optional[Path] = None
        if isinstance(dask, Client):
            self.client, self.own_client = dask, False
            where = f"Dask cluster {dask.scheduler.address}"
        elif dask == "local":
            # Workers log only what is critical: the sweep reports each point's failure itself, and what a
            # worker logs at ERROR is its link to the scheduler, which an interrupt closes under it (a
            # heartbeat that found the scheduler gone printed a traceback after Ctrl-C, now and then).
            with _without_main_module():
                self.cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL)
            self.client = Client(self.cluster)
            where = f"local Dask cluster ({jobs} worker{'s' if jobs != 1 else ''})"
        elif isinstance(dask, str) and dask:
            try:
                self.client = Client(dask, timeout="20s")
            except (OSError, TimeoutError, ValueError, TypeError) as e:
                raise UserError(
                    f"--dask {dask}: cannot reach a Dask scheduler there ({one_line(e, name_type=True)}); "
                    "give 'local', or a running scheduler's address such as tcp://host:8786"
                ) from None
            where = f"Dask cluster {dask}"
        else:
            raise UserError(f"--dask: expected 'local', a scheduler address such as tcp://host:8786, or a distributed.Client; got {dask!r}")
        self.slots = max(1, sum(self.client.nthreads().values()))
        self.description = f"{where}, {self.slots} thread{'s' if self.slots != 1 else ''}"

    def submit(self, task: dict[str, Any]) -> Any:
        if self.stop_file is None:
            # Created when the sweep is interrupted: tasks look for it between chunks of engine events and give
            # up. A file in the store, which every worker can already see, needs nothing from Dask.
            from ..claims import claims_path

            self.stop_file = claims_path(Path(task["store"])) / f"{STOP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        future = self.client.submit(run_point, {**task, "stop_file": str(self.stop_file)}, pure=False)
        self.futures.append(future)
        return future

    def wait_any(self, futures: Iterable[Any]) -> Iterable[Any]:
        from distributed import wait as dask_wait

        return dask_wait(list(futures), return_when="FIRST_COMPLETED").done

    def running(self, futures: Iterable[Any]) -> int:
        return min(self.slots, sum(1 for f in futures if not f.done()))

    def close(self, cancel: bool = False) -> None:
        """Closes the client (and a local cluster). With ``cancel``, the sweep's stop file is created first
        and its tasks, running or queued, give up their points (writing nothing) before the close."""
        import logging

        if cancel:
            # Closing a cluster under running tasks makes distributed log connection errors: not news.
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            with contextlib.suppress(Exception):
                from distributed import wait as dask_wait

                if self.stop_file is not None:
                    self.stop_file.parent.mkdir(parents=True, exist_ok=True)
                    self.stop_file.touch()
                # Running tasks give up within a chunk of events, queued ones as soon as they start; wait for
                # that (blocking on the futures) so that no worker is in the middle of a point at the close.
                dask_wait(self.futures, timeout=STOP_GRACE_S)
        if self.own_client:
            with contextlib.suppress(Exception):
                self.client.close(timeout=STOP_GRACE_S if cancel else None)
        if self.cluster is not None:
            self.cluster.close(timeout=STOP_GRACE_S if cancel else None)
        if self.stop_file is not None:
            self.stop_file.unlink(missing_ok=True)

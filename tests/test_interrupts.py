"""Interrupts through the real CLI: Ctrl-C (once or twice), SIGTERM, at several moments, for `dclb run`,
`dclb sweep` (local pool and --dask local) and `dclb reproduce`.

Each one must end the command with one line and exit status 130, with no traceback, no leaked-semaphore
warning, no process of the command left behind, and a consistent store: every complete run folder in the
catalog, nothing listed that is not there, no half-written folder. The signals go to the process group when
they stand for Ctrl-C at a terminal (which signals the whole foreground group) and to the command alone for
`kill PID`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dclb
from conftest import TINY

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find processes")

EXE = str(Path(sys.executable).parent / "dclb")
WAIT_S = 120  # the most any wait below may take on a loaded machine before the test gives up


def _as_if_in_a_terminal() -> None:
    """In the child before exec: the signal dispositions of a command typed at a terminal. A test run started in
    the background by a non-interactive shell (`pytest &`, as CI harnesses may do) ignores SIGINT, and an ignored
    or blocked signal is inherited across exec; a command that respects an ignored SIGINT (as dclb does, like
    any program under nohup) would then never see the Ctrl-C these tests send."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


def _start(args: list[str], cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [EXE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, start_new_session=True,
        preexec_fn=_as_if_in_a_terminal,
    )


def _live_session_members(sid: int) -> list[str]:
    """Processes of session ``sid`` that are not zombies (a zombie has finished; only its parent has not
    collected it), as "pid state command" texts."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append(f"{entry.name} {state} {stat[stat.index('(') + 1 : stat.rindex(')')]}")
    return found


def _handlers_installed(pid: int) -> bool:
    """True once the CLI catches SIGTERM (Python does not by default): its own handlers are in place."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(status.split("SigCgt:")[1].split()[0], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def _started(proc: subprocess.Popen, since: float):
    """Condition: the CLI runs its own code (its signal handlers are in place; for a dclb without them,
    3 s have passed)."""
    return lambda: _handlers_installed(proc.pid) or time.monotonic() - since > 3


def _running_a_point(store_dir: Path):
    """Condition: a worker is running a point (it claimed one), or one has finished."""
    return lambda: any((store_dir / "claims").glob("*.json")) or len(_complete_folders(store_dir / "runs")) >= 1


def _complete_folders(runs: Path) -> list[Path]:
    if not runs.is_dir():
        return []
    return [d for d in runs.iterdir() if not d.name.startswith(".") and (d / "COMPLETE").is_file()]


def _wait_for(condition, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert proc.poll() is None, f"the command ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def _finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the command hung after the interrupt; stderr: {err}")
    return proc.returncode, out, err


def _assert_clean_exit(proc: subprocess.Popen, returncode: int, stderr: str, note: str) -> None:
    assert returncode == 130, stderr
    assert "Traceback" not in stderr and "leaked" not in stderr and "internal error" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("interrupted")]
    assert len(lines) == 1 and note in lines[0], stderr
    deadline = time.monotonic() + 10
    while _live_session_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)  # the command waited for its workers; this only lets the kernel finish reaping
    assert _live_session_members(proc.pid) == []


def _assert_store_consistent(store_dir: Path) -> int:
    """Every complete folder is in the catalog and every catalog row has its folder; nothing half-written.
    Returns how many runs are complete."""
    runs = store_dir / "runs"
    complete = sorted(d.name for d in _complete_folders(runs))
    assert [d.name for d in runs.iterdir() if d.name.startswith(".tmp-")] == [] if runs.is_dir() else True
    if not complete:
        return 0
    store = dclb.open_store(store_dir)
    assert store.catalog_drift() == ([], [])
    catalog = store.runs(all_rows=True)
    assert sorted(catalog.loc[catalog["status"] == "completed", "run_id"]) == complete
    for run_id in complete:
        assert store.verify(run_id).ok, store.verify(run_id).problems
    assert not list((store_dir / "claims").glob("*.json")) if (store_dir / "claims").is_dir() else True
    return len(complete)


def _sweep_args(tiny: Path, out: Path, *extra: str) -> list[str]:
    # 10 points of 300 flows: enough work left after the first finishes for the signal to land mid-sweep.
    return ["sweep", str(tiny), "--grid", "lb.scheme=ecmp,rps", "--grid", "traffic.load=0.2:0.6:0.1", "--set", "traffic.flows=300", "--out", str(out), "-q", *extra]


@pytest.mark.parametrize("how", ["ctrl-c twice", "sigterm"])
def test_interrupting_a_sweep_mid_run(tiny, tmp_path, how):
    out = tmp_path / "res"
    proc = _start(_sweep_args(tiny, out, "--jobs", "2"))
    if how == "sigterm":  # as soon as a point is being run
        _wait_for(_running_a_point(out), proc, "a point was being run")
    else:  # once a run is stored, so that the catalog has something to keep up with
        _wait_for(lambda: len(_complete_folders(out / "runs")) >= 1, proc, "the first run was stored")
    if how == "sigterm":
        os.kill(proc.pid, signal.SIGTERM)  # `kill PID`: the coordinator alone
    else:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
        time.sleep(0.3)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
    returncode, _, stderr = _finish(proc)
    stored = len(_complete_folders(out / "runs"))
    _assert_clean_exit(proc, returncode, stderr, f"{stored} of 10 runs are complete in {out}; run the same command again")
    assert _assert_store_consistent(out) == stored
    assert stored < 10 and (stored >= 1 or how == "sigterm")


def test_interrupting_a_sweep_while_it_plans(tiny, tmp_path):
    out = tmp_path / "res"
    # Planning validates every point; 600 of them keep it busy for a while before anything runs.
    proc = _start(["sweep", str(tiny), "--grid", "traffic.load=0.2:0.799:0.001", "--grid", "lb.scheme=ecmp", "--out", str(out), "-q"])
    _wait_for(_started(proc, time.monotonic()), proc, "the CLI started")
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    returncode, _, stderr = _finish(proc)
    _assert_clean_exit(proc, returncode, stderr, "interrupted")
    assert "running" not in stderr  # it never got as far as running anything
    assert _assert_store_consistent(out) == 0


def test_interrupting_a_dask_sweep(tiny, tmp_path):
    out = tmp_path / "res"
    proc = _start(_sweep_args(tiny, out, "--jobs", "2", "--dask", "local"))
    _wait_for(lambda: len(_complete_folders(out / "runs")) >= 1, proc, "the first run was stored")
    os.killpg(proc.pid, signal.SIGINT)
    returncode, _, stderr = _finish(proc)
    stored = len(_complete_folders(out / "runs"))
    _assert_clean_exit(proc, returncode, stderr, f"{stored} of 10 runs are complete in {out}")
    assert "distributed" not in stderr
    assert _assert_store_consistent(out) == stored


def test_interrupting_a_run_stores_nothing(tmp_path):
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY)
    out = tmp_path / "res"
    proc = _start(["run", str(scenario), "--set", "traffic.flows=20000", "--out", str(out)])
    _wait_for(_started(proc, time.monotonic()), proc, "the CLI started")
    time.sleep(1.5)  # into the simulation, which takes far longer than this
    os.kill(proc.pid, signal.SIGTERM)
    returncode, _, stderr = _finish(proc)
    _assert_clean_exit(proc, returncode, stderr, "interrupted: nothing was stored")
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())


def test_interrupting_a_reproduction(tmp_path):
    out = tmp_path / "repro"
    proc = _start(["reproduce", "mdtlb", "--scale", "ci", "--out", str(out), "--jobs", "1", "-q"])
    _wait_for(_running_a_point(out / "store"), proc, "a point was being run")
    os.killpg(proc.pid, signal.SIGINT)
    returncode, _, stderr = _finish(proc)
    stored = len(_complete_folders(out / "store" / "runs"))
    _assert_clean_exit(proc, returncode, stderr, f"{stored} of ")
    assert f"runs are complete in {out / 'store'}; run the same command again" in stderr
    assert _assert_store_consistent(out / "store") == stored

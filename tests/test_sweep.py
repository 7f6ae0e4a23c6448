"""Sweeps: grid parsing, the [sweep] table, local pool vs Dask, failed points, resume after a real kill."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import dclb
from dclb.errors import ScenarioError
from dclb.runner import run_id_for
from dclb.scenario import load_scenario
from dclb.store import RunRecord
from dclb.sweeps import expand_range, normalize_grid, parse_grid_option, plan_sweep

from conftest import GRID, TINY, dclb_cli


# --------------------------------------------------------------------------------------------------------
# Grid text and the [sweep] table (no simulation)


def test_ranges_are_inclusive_and_exact():
    assert expand_range("0.2:0.8:0.2", "g") == [0.2, 0.4, 0.6, 0.8]
    assert expand_range("0.2:0.8:0.2", "g")[2] == float("0.6")  # the same number --set traffic.load=0.6 gives
    assert expand_range("1:9:4", "g") == [1, 5, 9] and all(isinstance(v, int) for v in expand_range("1:9:4", "g"))
    assert expand_range("0.1:0.35:0.1", "g") == [0.1, 0.2, 0.3]
    assert parse_grid_option("traffic.load=0.1,0.5:0.7:0.1") == ("traffic.load", [0.1, 0.5, 0.6, 0.7])


def test_values_are_read_like_set():
    assert parse_grid_option("lb.scheme=ecmp,rps,drb") == ("lb.scheme", ["ecmp", "rps", "drb"])
    field, values = parse_grid_option('traffic.senders="leaf:0",[0,1,2],true')
    assert values == ["leaf:0", [0, 1, 2], True]
    assert normalize_grid({"topology.spines": [2, 4], "lb.scheme": "ecmp"}) == {"topology.spines": [2, 4], "lb.scheme": ["ecmp"]}


@pytest.mark.parametrize(
    "text, needle",
    [
        ("traffic.load=0.2:0.8", "malformed range"),
        ("traffic.load=0.2:x:0.1", "malformed range"),
        ("traffic.load=0.8:0.2:0.2", "ends before it starts"),
        ("traffic.load=0.2:0.8:0", "positive step"),
        ("traffic.load", "expected FIELD=VALUES"),
        ("traffic.load=0.2,,0.4", "empty value"),
    ],
)
def test_bad_grid_text(text, needle):
    with pytest.raises(ScenarioError, match=needle):
        parse_grid_option(text)


@pytest.mark.parametrize(
    "key, needle",
    [("traffic.lod", "unknown field 'lod' in traffic"), ("topology.spines.x", "not a table"), ("seed", "seeds"), ("lb.nonsense_param", "no scheme has a parameter")],
)
def test_unknown_grid_fields(key, needle):
    with pytest.raises(ScenarioError, match=needle):
        normalize_grid({key: [1]}, "--grid")


def test_sweep_table_is_validated_and_not_part_of_the_identity(tmp_path):
    plain = tmp_path / "tiny.toml"
    plain.write_text(TINY)
    with_table = tmp_path / "t2.toml"
    with_table.write_text(TINY + '\n[sweep]\ngrid = {"lb.scheme" = ["ecmp", "rps"], "traffic.load" = [0.2, 0.4]}\nseeds = 3\n')
    sc = load_scenario(with_table)
    assert sc.sweep is not None and sc.sweep.seeds == 3
    assert "sweep" not in sc.resolved()
    assert run_id_for(sc) == run_id_for(load_scenario(plain))
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY + '\n[sweep]\ngrid = {"traffic.lod" = [0.2]}\n')
    with pytest.raises(ScenarioError, match=r"sweep\.grid\.traffic\.lod: unknown field"):
        load_scenario(bad)
    bad.write_text(TINY + "\n[sweep]\nseeds = 0\n")
    with pytest.raises(ScenarioError, match=r"sweep\.seeds"):
        load_scenario(bad)


def test_plan_points_and_seeds(tiny):
    plan = plan_sweep(tiny, grid={"lb.scheme": "ecmp,rps,drb", "traffic.load": "0.2:0.8:0.2"}, seeds=3)
    assert len(plan.points) == 3 * 4 * 3
    assert plan.seeds == [7, 8, 9]  # base seed 7 (the scenario's) + 0, 1, 2
    assert len({p.run_id for p in plan.points}) == len(plan.points)
    # A point is exactly what `dclb run --set ... --seed ...` runs, with the same run id.
    p = next(p for p in plan.points if p.values == {"lb.scheme": "rps", "traffic.load": 0.6} and p.seed == 8)
    assert p.run_id == run_id_for(load_scenario(tiny, ["lb.scheme=rps", "traffic.load=0.6"], seed=8))


def test_plan_from_a_scenario_object_or_dict_matches_the_file(tiny):
    import tomllib

    from_file = [p.run_id for p in plan_sweep(tiny, grid={"lb.scheme": "ecmp,drb"}, seeds=2).points]
    from_object = [p.run_id for p in plan_sweep(load_scenario(tiny), grid={"lb.scheme": "ecmp,drb"}, seeds=2).points]
    from_dict = [p.run_id for p in plan_sweep({**tomllib.loads(TINY)}, grid={"lb.scheme": ["ecmp", "drb"]}, seeds=2).points]
    assert from_file == from_object == from_dict and len(from_file) == 4


# --------------------------------------------------------------------------------------------------------
# Local pool and Dask give the same results


def _summary_without_timing(record: dict) -> dict:
    return {k: v for k, v in record["summary"].items() if k not in ("wall_s", "events_per_s")}


def test_pool_sweep_stores_every_point(pool_sweep):
    _, store_dir, frame = pool_sweep
    assert len(frame) == 8 and set(frame["status"]) == {"completed"} and not frame["reused"].any()
    assert sorted(frame["seed"].unique()) == [7, 8]
    runs = dclb.open_store(store_dir).runs()
    assert sorted(runs["run_id"]) == sorted(frame["run_id"])
    assert set(runs["status"]) == {"completed"} and set(runs["lb.scheme"]) == {"ecmp", "rps"}
    assert frame["short_afct_us"].notna().all()


def test_dask_local_cluster_gives_identical_results(pool_sweep, tmp_path):
    scenario, store_dir, pool_frame = pool_sweep
    dask_frame = dclb.sweep(scenario, grid=GRID, seeds=2, out=tmp_path / "dask", jobs=2, dask="local")
    assert sorted(dask_frame["run_id"]) == sorted(pool_frame["run_id"])
    assert set(dask_frame["status"]) == {"completed"}
    a, b = dclb.open_store(store_dir), dclb.open_store(tmp_path / "dask")
    for run_id in pool_frame["run_id"]:
        assert _summary_without_timing(a.read_record(run_id)) == _summary_without_timing(b.read_record(run_id)), run_id
        for table in ("flows", "ports", "switches", "samples"):
            ta = pq.read_table(a.run_path(run_id) / f"{table}.parquet")
            tb = pq.read_table(b.run_path(run_id) / f"{table}.parquet")
            assert ta.equals(tb), (run_id, table)


def test_a_sweep_point_has_the_record_dclb_run_writes(pool_sweep, tmp_path):
    scenario, store_dir, _ = pool_sweep
    result = dclb.run(load_scenario(scenario, ["lb.scheme=ecmp", "traffic.load=0.2"]), out=tmp_path / "alone")
    alone = dclb.open_store(tmp_path / "alone").read_record(result.run_id)
    swept = dclb.open_store(store_dir).read_record(result.run_id)
    assert set(alone) == set(swept) == {f.name for f in dataclasses.fields(RunRecord)}
    timing = {"started_at", "finished_at", "wall_s", "summary"}
    assert {k: v for k, v in alone.items() if k not in timing} == {k: v for k, v in swept.items() if k not in timing}
    assert _summary_without_timing(alone) == _summary_without_timing(swept)


def test_rerunning_a_finished_sweep_runs_nothing(pool_sweep):
    scenario, store_dir, pool_frame = pool_sweep
    again = dclb.sweep(scenario, grid=GRID, seeds=2, out=store_dir, jobs=2)
    assert again["reused"].all() and again.attrs["sweep"]["ran"] == 0
    assert list(again["short_afct_us"]) == list(pool_frame["short_afct_us"])


# --------------------------------------------------------------------------------------------------------
# Failures and resuming


def test_a_failing_point_is_recorded_and_the_rest_completes(tiny, tmp_path):
    out = tmp_path / "res"
    result = dclb_cli("sweep", str(tiny), "--grid", "traffic.load=0.3,3.0", "--out", str(out), "--jobs", "2", "-q")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert "2 points: 1 completed" in result.stdout and "1 failed" in result.stdout  # the summary is printed
    runs = dclb.open_store(out).runs().set_index("traffic.load")
    assert runs.loc[0.3, "status"] == "completed"
    assert runs.loc[3.0, "status"] == "failed" and "traffic.load" in runs.loc[3.0, "error"]
    failed_id = runs.loc[3.0, "run_id"]
    folder = out / "runs" / failed_id
    assert not (folder / "COMPLETE").exists()
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "failed" and set(record) == {f.name for f in dataclasses.fields(RunRecord)}
    # Re-running retries only the failed point.
    again = dclb_cli("sweep", str(tiny), "--grid", "traffic.load=0.3,3.0", "--out", str(out), "-q")
    assert again.returncode == 1 and "1 already complete; running 1" in again.stderr


def test_the_coordinator_waits_on_futures_without_polling(tiny, tmp_path, monkeypatch):
    def no_sleep(seconds):
        raise AssertionError(f"the coordinator slept {seconds} s instead of waiting on its futures")

    monkeypatch.setattr(time, "sleep", no_sleep)  # the workers are other processes: only the coordinator
    frame = dclb.sweep(tiny, grid={"lb.scheme": ["ecmp", "rps"]}, out=tmp_path / "res", jobs=2)
    assert list(frame["status"]) == ["completed", "completed"]


def test_a_point_whose_worker_died_is_stored_as_failed(tiny, tmp_path):
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from dclb.sweeps.coordinator import _reply_of

    point = plan_sweep(tiny).points[0]
    died: Future = Future()
    died.set_exception(BrokenProcessPool("a worker process terminated abruptly"))
    store = dclb.open_store(tmp_path / "res", create=True)
    reply = _reply_of(died, point, store)
    assert reply["status"] == "failed" and reply["error"].startswith("worker failed: ")
    assert store.status(point.run_id) == "failed"
    assert store.read_record(point.run_id)["error"] == reply["error"] == reply["record"]["error"]


def _complete_folders(runs_dir: Path) -> list[Path]:
    return [d for d in runs_dir.iterdir() if not d.name.startswith(".") and (d / "COMPLETE").is_file()]


def _check_complete_folder(folder: Path, flows: int) -> None:
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "completed" and record["run_id"] == folder.name
    assert pq.read_table(folder / "flows.parquet").num_rows == flows
    assert pq.read_table(folder / "ports.parquet").num_rows > 0
    assert pq.read_table(folder / "switches.parquet").num_rows > 0


def test_resume_after_the_sweep_is_killed(tiny, tmp_path):
    out = tmp_path / "res"
    flows = 400  # about a second per point: the kill lands while later points are still to run
    args = [str(tiny), "--grid", "lb.scheme=ecmp,rps,drb", "--grid", "traffic.load=0.3,0.5", "--set", f"traffic.flows={flows}", "--out", str(out), "-q"]
    exe = str(Path(sys.executable).parent / "dclb")
    proc = subprocess.Popen([exe, "sweep", *args, "--jobs", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "runs").is_dir() and len(_complete_folders(out / "runs")) >= 2:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its worker, at once
    finally:
        proc.wait(timeout=30)
    done_before = _complete_folders(out / "runs")
    assert 2 <= len(done_before) < 6
    for folder in done_before:  # whatever counts as done is whole
        _check_complete_folder(folder, flows)

    result = dclb_cli("sweep", *args, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    assert f"{len(done_before)} already complete" in result.stderr
    store = dclb.open_store(out)
    runs = store.runs()
    assert len(runs) == 6 and runs["run_id"].is_unique and set(runs["status"]) == {"completed"}
    folders = [d for d in (out / "runs").iterdir() if not d.name.startswith(".")]
    assert len(folders) == 6
    for folder in folders:
        _check_complete_folder(folder, flows)
    assert store.rebuild_catalog() == 6


def test_reconcile_records_folders_the_catalog_missed(pool_sweep, tmp_path):
    """A folder written by a worker whose coordinator died before recording it gets recorded later."""
    import shutil

    from dclb.sweeps import reconcile

    _, store_dir, frame = pool_sweep
    copy = tmp_path / "copy"
    shutil.copytree(store_dir / "runs", copy / "runs")
    store = dclb.open_store(copy)
    store.rebuild_catalog()
    victim = frame["run_id"][0]
    with_victim = store.runs()
    assert victim in set(with_victim["run_id"])
    # Forget one row, as if the coordinator had been killed before recording it.
    import duckdb

    con = duckdb.connect(str(copy / "catalog.duckdb"))
    con.execute("DELETE FROM runs WHERE run_id = ?", [victim])
    con.close()
    assert reconcile(store) == 1
    assert sorted(store.runs()["run_id"]) == sorted(with_victim["run_id"])


def _ran_here(stdout: str) -> int:
    """Points a `dclb sweep` ran itself, from its closing line "N points: C completed (R from earlier runs)"."""
    import re

    match = re.search(r"(\d+) points: (\d+) completed \((\d+) from earlier runs\)", stdout)
    assert match, stdout
    return int(match[2]) - int(match[3])


def test_two_sweeps_at_once_share_the_work(tiny, tmp_path):
    """Two sweeps of the same 8 points on one store at the same moment: each point runs once in all, both
    sweeps end with every point, and the catalog has every run once."""
    out = tmp_path / "res"
    exe = str(Path(sys.executable).parent / "dclb")
    args = [exe, "sweep", str(tiny), "--grid", "lb.scheme=ecmp,rps", "--grid", "traffic.load=0.2,0.3", "--seeds", "2", "--out", str(out), "--jobs", "1", "-q"]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    ran = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        assert "8 points: 8 completed" in stdout
        ran.append(_ran_here(stdout))
    assert sum(ran) == 8, ran
    runs = dclb.open_store(out).runs()
    assert len(runs) == 8 and runs["run_id"].is_unique and set(runs["status"]) == {"completed"}
    folders = [d for d in (out / "runs").iterdir() if not d.name.startswith(".")]
    assert len(folders) == 8
    for folder in folders:
        _check_complete_folder(folder, 60)
    assert list((out / "claims").glob("*.json")) == []  # every claim was given up


def test_a_stale_claim_is_taken_over(tiny, tmp_path):
    """A claim whose process is gone (killed with SIGKILL, say) does not hold its point back."""
    from dclb.claims import try_claim

    plan = plan_sweep(tiny)
    out = tmp_path / "res"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    claims_dir = out / "claims"
    claims_dir.mkdir(parents=True)
    (claims_dir / f"{plan.points[0].run_id}.json").write_text(json.dumps({"pid": int(dead), "host": __import__("socket").gethostname(), "since": "x", "token": "t"}))
    claim, owner = try_claim(out, plan.points[0].run_id)  # the owner is gone: taken over at once
    assert claim is not None and owner is None
    again, owner = try_claim(out, plan.points[0].run_id)  # now the owner is alive: this process
    assert again is None and owner["pid"] == os.getpid()
    claim.release()
    assert not claim.path.exists()


# --------------------------------------------------------------------------------------------------------
# Run ids


def _run_id(tiny: Path, *settings: str) -> str:
    from click.testing import CliRunner

    from dclb.cli import cli

    args = ["run", str(tiny), "--no-store", "--json", "-q"] + [a for s in settings for a in ("--set", s)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["run_id"]


def test_run_ids_depend_on_what_changes_the_run(tiny, tmp_path):
    plain = _run_id(tiny)
    assert _run_id(tiny, 'description="a note"') == plain  # cosmetic
    assert _run_id(tiny, "run.short_threshold_bytes=50000") != plain  # changes the stored summary
    assert _run_id(tiny, "traffic.load=0.5") != plain
    renamed = _run_id(tiny, 'name="other"')  # the name only gives the folder its prefix
    assert renamed.startswith("other-") and renamed.split("-")[-1] == plain.split("-")[-1]


def test_a_sweep_with_a_new_description_reuses_the_store(tiny, tmp_path):
    from click.testing import CliRunner

    from dclb.cli import cli

    out = tmp_path / "res"
    for scheme in ("ecmp", "rps"):  # the sweep's two points, run here
        dclb.run(load_scenario(tiny, [f"lb.scheme={scheme}"]), out=out)
    args = ["sweep", str(tiny), "--grid", "lb.scheme=ecmp,rps", "--set", 'description="now with a note"', "--out", str(out), "-q"]
    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert again.exit_code == 0 and "all 2 points are already complete" in again.stderr


class _InlinePool:
    """Stands in for the process pool: runs each task here and notes which points reached a worker."""

    def __init__(self, jobs: int, submitted: list) -> None:
        self.slots, self.description, self.submitted = jobs, "inline", submitted

    def submit(self, task):
        from concurrent.futures import Future

        from dclb.sweeps import run_point

        self.submitted.append(task["run_id"])
        future = Future()
        future.set_result(run_point(task))
        return future

    def wait_any(self, futures):
        return list(futures)

    def running(self, futures) -> int:
        return 0

    def close(self, cancel: bool = False) -> None:
        pass


def test_a_point_only_the_engine_rejects_is_planned_failed_and_never_reaches_a_worker(tiny, tmp_path, monkeypatch):
    from dclb import sweeps
    from dclb.sweeps import coordinator

    plan = plan_sweep(tiny, grid={"lb.d": [0, 2]}, overrides=["lb.scheme=drill"])
    bad, good = plan.points
    assert bad.error == "lb.d: must be in [1, 64], got 0" and bad.config is None
    assert good.error is None and good.config["lb"] == {"scheme": "drill", "params": {"d": 2}, "timing": "fabric"}
    submitted: list = []
    monkeypatch.setattr(coordinator, "_LocalPool", lambda jobs: _InlinePool(jobs, submitted))
    frame = sweeps.execute(plan, out=tmp_path / "res", jobs=1)
    assert submitted == [good.run_id]
    assert list(frame["status"]) == ["failed", "completed"] and frame["error"][0] == bad.error
    record = json.loads((tmp_path / "res" / "runs" / bad.run_id / "run.json").read_text())
    assert record["status"] == "failed" and record["error"] == bad.error
    assert dclb.open_store(tmp_path / "res").runs().set_index("run_id").loc[bad.run_id, "status"] == "failed"

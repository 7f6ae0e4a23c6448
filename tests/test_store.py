"""Tests of dclb.store: run folders, crash safety, the catalog and queries."""

from __future__ import annotations

import multiprocessing
import os
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dclb.store import (
    Store,
    StoreError,
    flatten,
    open_store,
    scenario_hash,
)


def flows_table(n: int, offset: int = 0) -> pa.Table:
    return pa.table(
        {
            "flow_id": pa.array(range(offset, offset + n), pa.int64()),
            "size_bytes": pa.array([1_000 * (i + 1) for i in range(n)], pa.int64()),
            "transport": pa.array(["dctcp"] * n, pa.string()),
            "fct_us": pa.array([float(i) for i in range(n)], pa.float64()),
            "uplink_bytes": pa.array([[i, 2 * i] for i in range(n)], pa.list_(pa.int64())),
        }
    )


def ports_table(n: int) -> pa.Table:
    return pa.table(
        {"node": pa.array(range(n), pa.int32()), "drops": pa.array([7] * n, pa.int64())}
    )


def record(name: str, load: float = 0.5, scheme: str = "ecmp", **summary) -> dict:
    return {
        "name": name,
        "status": "completed",
        "scenario": {
            "lb": {"scheme": scheme},
            "traffic": {"load": load},
            "topology": {"spines": 4},
        },
        "seed": 1,
        "summary": {"short_afct_us": 12.5, "drops": 3, **summary},
        "dclb_version": "0.1.0",
        "started_at": "2024-01-01T00:00:00",
        "finished_at": "2024-01-01T00:00:01",
        "wall_s": 1.0,
        "error": None,
    }


def read_back(store: Store, name: str, run_id: str, schema: pa.Schema) -> pa.Table:
    frame = store.table(name, [run_id]).drop(columns="run_id")
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def hidden_entries(store: Store) -> list[str]:
    return [p.name for p in store.runs_path.iterdir() if p.name.startswith(".")]


# --------------------------------------------------------------------------
# run folders
# --------------------------------------------------------------------------


def test_round_trip_of_a_run(tmp_path):
    store = Store(tmp_path / "results")
    flows, ports = flows_table(5), ports_table(3)
    samples = pa.table({"t_us": [0.0, 1.0], "queue": [3, 4]})
    folder = store.write_run(
        "r1", record("first"), {"flows": flows, "ports": ports, "samples": samples}
    )

    assert folder == tmp_path / "results" / "runs" / "r1"
    assert sorted(p.name for p in folder.iterdir()) == [
        "COMPLETE",
        "flows.parquet",
        "ports.parquet",
        "run.json",
        "samples.parquet",
    ]
    assert store.is_complete("r1") and store.status("r1") == "completed"
    assert read_back(store, "flows", "r1", flows.schema).equals(flows)
    assert read_back(store, "ports", "r1", ports.schema).equals(ports)
    assert read_back(store, "samples", "r1", samples.schema).equals(samples)
    assert list(store.flows().columns)[0] == "run_id"
    assert set(store.flows()["run_id"]) == {"r1"}

    stored = store.read_record("r1")
    assert stored["run_id"] == "r1" and stored["scenario"] == record("first")["scenario"]
    assert stored["scenario_hash"] == scenario_hash(record("first")["scenario"])
    assert hidden_entries(store) == []


def test_flows_of_several_runs_are_concatenated(tmp_path):
    store = Store(tmp_path)
    store.write_run("a", record("a"), {"flows": flows_table(2), "ports": ports_table(1)})
    store.write_run("b", record("b"), {"flows": flows_table(3), "ports": ports_table(1)})
    assert store.flows()["run_id"].tolist() == ["a", "a", "b", "b", "b"]
    assert store.flows("b")["run_id"].tolist() == ["b"] * 3
    assert store.samples().empty  # neither run has samples
    assert store.run_ids() == ["a", "b"]


def test_reading_one_run_does_not_list_the_store(tmp_path, monkeypatch):
    # A report reads each run's tables one by one; listing every run folder for each read made it quadratic
    # in the store's size (a cached paper over a 9,000-run store took 12 minutes to redraw).
    store = Store(tmp_path)
    store.write_run("a", record("a"), {"flows": flows_table(2), "ports": ports_table(1)})
    store.write_run("b", record("b"), {"flows": flows_table(3), "ports": ports_table(1)})

    def listing():
        raise AssertionError("a read of named runs listed the whole store")

    monkeypatch.setattr(store, "run_ids", listing)
    assert store.flows("b")["run_id"].tolist() == ["b"] * 3
    assert store.flows(["a", "b"])["run_id"].tolist() == ["a", "a", "b", "b", "b"]
    with pytest.raises(StoreError, match=r"no complete run \['\.\./x', 'c'\]"):
        store.flows(["a", "c", "../x"])


def test_a_table_reads_only_the_columns_asked_for(tmp_path):
    store = Store(tmp_path)
    store.write_run("a", record("a"), {"flows": flows_table(2), "ports": ports_table(1)})
    store.write_run("b", record("b"), {"flows": flows_table(3).drop_columns(["fct_us"]), "ports": ports_table(1)})
    frame = store.flows(columns=["fct_us"])
    assert list(frame.columns) == ["run_id", "fct_us"]
    assert frame["fct_us"].isna().tolist() == [False, False, True, True, True]  # b has no fct_us: nulls
    with pytest.raises(StoreError, match="no column fct_ms in the flows table; its columns: .*fct_us"):
        store.flows(columns=["fct_ms"])


def test_replacing_a_run(tmp_path):
    store = Store(tmp_path)
    store.write_run(
        "r1",
        record("old"),
        {"flows": flows_table(4), "ports": ports_table(2), "samples": pa.table({"x": [1]})},
    )
    new_flows = flows_table(2, offset=100)
    store.write_run("r1", record("new"), {"flows": new_flows, "ports": ports_table(1)})

    assert store.read_record("r1")["name"] == "new"
    assert read_back(store, "flows", "r1", new_flows.schema).equals(new_flows)
    assert not (store.run_path("r1") / "samples.parquet").exists()  # old files do not linger
    assert hidden_entries(store) == []


class Killed(BaseException):
    """Stands in for the process being killed."""


def snapshot(store: Store, run_id: str, versions: dict[str, pa.Table]) -> str:
    """Which version the run folder shows: "absent", or the version whose
    record *and* tables are all there."""
    if not store.is_complete(run_id):
        assert store.status(run_id) in (None, "incomplete")
        assert run_id not in store.run_ids()
        return "absent"
    name = store.read_record(run_id)["name"]
    expected = versions[name]
    assert read_back(store, "flows", run_id, expected.schema).equals(expected)
    return name


def test_a_kill_at_any_moment_never_leaves_a_false_complete_run(tmp_path, monkeypatch):
    versions = {"old": flows_table(3), "new": flows_table(6, offset=50)}
    tables = {name: {"flows": t, "ports": ports_table(2)} for name, t in versions.items()}
    real_replace = os.replace
    seen = []
    kill_at = 0
    while True:
        store = Store(tmp_path / f"kill{kill_at}")
        store.write_run("r", record("old"), tables["old"])
        calls = 0

        def replace_or_die(src, dst, limit=kill_at):
            nonlocal calls
            if calls >= limit:
                raise Killed
            calls += 1
            real_replace(src, dst)

        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", replace_or_die)
            patch.setattr(
                shutil, "rmtree", lambda *args, **kwargs: None
            )  # a killed process cleans nothing
            try:
                store.write_run("r", record("new"), tables["new"])
                finished = True
            except Killed:
                finished = False
        state = snapshot(store, "r", versions)
        seen.append(state)
        store.rebuild_catalog()  # leftovers in hidden folders are ignored
        catalog = store.runs()
        assert catalog["run_id"].tolist() == (["r"] if state != "absent" else [])
        if finished:
            break
        kill_at += 1

    assert seen[-1] == "new"
    assert set(seen) == {"old", "absent", "new"}  # the swap window was exercised
    assert seen == sorted(seen, key=["old", "absent", "new"].index)


def test_a_folder_without_complete_is_not_counted(tmp_path):
    store = Store(tmp_path)
    store.write_run("good", record("good"), {"flows": flows_table(2), "ports": ports_table(1)})
    store.write_run("half", record("half"), {"flows": flows_table(2), "ports": ports_table(1)})
    (store.run_path("half") / "COMPLETE").unlink()

    assert not store.is_complete("half") and store.status("half") == "incomplete"
    assert store.status("nothing") is None
    assert store.run_ids() == ["good"]
    assert set(store.flows()["run_id"]) == {"good"}
    assert store.rebuild_catalog() == 1
    assert store.runs()["run_id"].tolist() == ["good"]
    assert store.sql("SELECT DISTINCT run_id FROM flows")["run_id"].tolist() == ["good"]
    with pytest.raises(StoreError, match="half"):
        store.flows(["half"])


def test_invalid_run_ids_are_rejected(tmp_path):
    store = Store(tmp_path)
    for bad in ("../escape", ".tmp-x", "a/b", ""):
        with pytest.raises(ValueError):
            store.write_run(bad, record("x"), {"flows": flows_table(1)})


def test_failed_run_is_recorded_with_its_message(tmp_path):
    store = Store(tmp_path)
    failure = {**record("broken"), "status": "failed", "error": "engine panicked: queue overflow"}
    store.write_failed("bad", failure)
    store.record_in_catalog({**failure, "run_id": "bad"})

    assert not store.is_complete("bad")
    assert store.status("bad") == "failed"
    assert sorted(p.name for p in store.run_path("bad").iterdir()) == ["run.json"]
    row = store.runs().set_index("run_id").loc["bad"]
    assert row["status"] == "failed" and row["error"] == "engine panicked: queue overflow"

    (tmp_path / "catalog.duckdb").unlink()
    row = store.runs().set_index("run_id").loc["bad"]  # rebuilt from the folder
    assert row["error"] == "engine panicked: queue overflow"


def test_failed_run_needs_an_error(tmp_path):
    with pytest.raises(ValueError, match="error"):
        Store(tmp_path).write_failed("bad", record("x"))


# --------------------------------------------------------------------------
# the catalog
# --------------------------------------------------------------------------


def test_catalog_columns_are_flattened_scenario_and_summary(tmp_path):
    store = Store(tmp_path)
    store.record_in_catalog({**record("a", load=0.3), "run_id": "a"})
    runs = store.runs(all_rows=True)
    row = runs.iloc[0]
    assert list(runs.columns[:10]) == [
        "run_id",
        "name",
        "status",
        "seed",
        "scenario_hash",
        "dclb_version",
        "started_at",
        "finished_at",
        "wall_s",
        "error",
    ]
    assert row["lb.scheme"] == "ecmp" and row["traffic.load"] == 0.3 and row["topology.spines"] == 4
    assert row["short_afct_us"] == 12.5 and row["drops"] == 3
    assert row["scenario_hash"] == scenario_hash(record("a", load=0.3)["scenario"])


def test_recording_twice_replaces_the_row(tmp_path):
    store = Store(tmp_path)
    store.record_in_catalog({**record("a", extra_metric=1.0), "run_id": "a"})
    store.record_in_catalog({**record("a2"), "run_id": "a"})
    runs = store.runs(all_rows=True)
    assert len(runs) == 1 and runs.loc[0, "name"] == "a2"
    assert pd.isna(runs.loc[0, "extra_metric"])  # nothing stale from the first row


def test_column_types_widen_and_fall_back_to_text(tmp_path):
    store = Store(tmp_path)
    store.record_in_catalog({**record("a", m=1, flag=True), "run_id": "a"})
    store.record_in_catalog({**record("b", m=2.5, flag=False), "run_id": "b"})
    types = dict(
        store.sql(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'runs'"
        ).values.tolist()
    )
    assert types["m"] == "DOUBLE" and types["flag"] == "BOOLEAN"
    assert store.runs(all_rows=True)["m"].tolist() == [1.0, 2.5]

    store.record_in_catalog({**record("c", m="n/a", flag=3), "run_id": "c"})
    runs = store.runs(all_rows=True)
    assert runs["m"].tolist() == ["1.0", "2.5", "n/a"]
    assert runs["flag"].tolist() == [1, 0, 3]


def test_rebuild_from_folders_gives_the_same_rows(tmp_path):
    store = Store(tmp_path)
    records = {
        "r1": record("one", load=0.3, scheme="ecmp", drops=1),
        "r2": record("two", load=0.7, scheme="conga", new_metric=2),
        "r3": {
            **record("three", new_metric=2.5),
            "scenario": {"lb": {"scheme": "letflow", "flowlet_timeout_us": 50}},
        },
    }
    for run_id, rec in records.items():
        store.write_run(run_id, rec, {"flows": flows_table(2), "ports": ports_table(1)})
        store.record_in_catalog({**rec, "run_id": run_id})
    failure = {**record("four"), "status": "failed", "error": "boom"}
    store.write_failed("r4", failure)
    store.record_in_catalog({**failure, "run_id": "r4"})
    # leftovers of a killed writer must not show up
    (store.runs_path / ".tmp-r9-deadbeef").mkdir()
    (store.runs_path / ".tmp-r9-deadbeef" / "COMPLETE").write_text("")
    before = store.runs()

    (tmp_path / "catalog.duckdb").unlink()
    after = store.runs()  # a missing catalog is rebuilt on read
    assert store.rebuild_catalog() == 4

    assert before["run_id"].tolist() == ["r1", "r2", "r3", "r4"]
    assert set(before.columns) == set(after.columns)
    pd.testing.assert_frame_equal(before, after[list(before.columns)])
    pd.testing.assert_frame_equal(store.runs()[list(before.columns)], before)


def test_sql_over_catalog_and_flows_view(tmp_path):
    store = Store(tmp_path)
    for run_id, load, n in (("lo", 0.2, 2), ("hi", 0.8, 5)):
        rec = record(run_id, load=load)
        store.write_run(run_id, rec, {"flows": flows_table(n), "ports": ports_table(3)})
        store.record_in_catalog({**rec, "run_id": run_id})

    busy = store.sql('SELECT run_id, "lb.scheme" FROM runs WHERE "traffic.load" > 0.5')
    assert busy.values.tolist() == [["hi", "ecmp"]]

    counts = store.sql("SELECT run_id, count(*) AS n FROM flows GROUP BY run_id ORDER BY run_id")
    assert counts.values.tolist() == [["hi", 5], ["lo", 2]]

    joined = store.sql(
        'SELECT r."traffic.load" AS load, sum(p.drops) AS drops '
        "FROM ports p JOIN runs r USING (run_id) GROUP BY load ORDER BY load"
    )
    assert joined.values.tolist() == [[0.2, 21], [0.8, 21]]


def test_switches_are_queryable_like_flows_and_ports(tmp_path):
    store = Store(tmp_path)
    switches = pa.table({"node": [8, 9], "kind": ["leaf", "spine"], "decisions": [5, 6]})
    for run_id in ("a", "b"):
        store.write_run(run_id, record(run_id), {"flows": flows_table(1), "ports": ports_table(1), "switches": switches})
        store.record_in_catalog({**record(run_id), "run_id": run_id})
    decided = store.sql("SELECT run_id, sum(decisions) AS n FROM switches GROUP BY run_id ORDER BY run_id")
    assert decided.values.tolist() == [["a", 11], ["b", 11]]
    assert store.switches("b", columns=["kind"]).values.tolist() == [["b", "leaf"], ["b", "spine"]]


def test_sql_cannot_write_the_catalog(tmp_path):
    store = Store(tmp_path)
    store.record_in_catalog({**record("a"), "run_id": "a"})
    with pytest.raises(StoreError):
        store.sql("DELETE FROM catalog.main.runs")
    with pytest.raises(StoreError, match="syntax"):
        store.sql("SELEKT 1")
    assert len(store.runs(all_rows=True)) == 1


def _record_many(root: str, worker: int, count: int) -> None:
    store = Store(root)
    for index in range(count):
        rec = record(f"w{worker}", load=index / count)
        rec["scenario"][f"only_worker_{worker}"] = index  # forces concurrent ALTER TABLEs
        store.record_in_catalog({**rec, "run_id": f"w{worker}-{index:02d}"})


def test_two_processes_record_concurrently(tmp_path):
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_record_many, args=(str(tmp_path), worker, 20)) for worker in (0, 1)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [process.exitcode for process in workers] == [0, 0]

    runs = Store(tmp_path).runs(all_rows=True)
    assert len(runs) == 40 and runs["run_id"].is_unique
    assert runs["only_worker_0"].notna().sum() == 20
    assert runs["only_worker_1"].notna().sum() == 20


def _hold_catalog_open(path: str, seconds: float, ready) -> None:
    import time

    import duckdb

    con = duckdb.connect(path, read_only=True)
    ready.set()
    time.sleep(seconds)
    con.close()


def test_another_program_holding_the_catalog_is_waited_for(tmp_path, monkeypatch):
    # A DuckDB shell opened on the catalog beside a long reproduction once ended it with "Could not set lock":
    # a run is recorded once the other program lets go, and only a program that never does is an error.
    import dclb.store.store as store_module

    store = Store(tmp_path)

    def stored(run_id: str) -> dict:
        store.write_run(run_id, record(run_id), {"flows": flows_table(2), "ports": ports_table(1)})
        return store.read_record(run_id)

    store.record_in_catalog(stored("r1"))
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_catalog_open, args=(str(store.catalog_path), 1.5, ready))
    holder.start()
    assert ready.wait(60)
    store.record_in_catalog(stored("r2"))
    holder.join(60)
    assert set(Store(tmp_path).runs()["run_id"]) == {"r1", "r2"}

    monkeypatch.setattr(store_module, "CATALOG_BUSY_WAIT_S", 0.2)
    ready = context.Event()
    holder = context.Process(target=_hold_catalog_open, args=(str(store.catalog_path), 5.0, ready))
    holder.start()
    assert ready.wait(60)
    with pytest.raises(StoreError, match="another program has it open"):
        store.record_in_catalog(stored("r3"))
    holder.join(60)
    assert store.is_complete("r3")  # the folder is stored; only its catalog row waits for `store repair`


# --------------------------------------------------------------------------
# not a store
# --------------------------------------------------------------------------


def test_missing_path_is_a_clear_store_error(tmp_path):
    missing = tmp_path / "nowhere"
    for action in (
        lambda: open_store(missing),
        lambda: Store(missing).runs(),
        lambda: Store(missing).sql("SELECT 1"),
        lambda: Store(missing).flows(),
    ):
        with pytest.raises(StoreError, match="nowhere"):
            action()
    assert not missing.exists()  # reading created nothing
    assert issubclass(StoreError, ValueError)


def test_directory_that_is_not_a_store(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(StoreError, match="not a result store"):
        Store(tmp_path).runs()
    with pytest.raises(StoreError, match="not a directory"):
        Store(tmp_path / "notes.txt").runs()


def test_corrupt_catalog_is_a_store_error(tmp_path):
    store = open_store(tmp_path, create=True)
    store.catalog_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="catalog.duckdb"):
        store.runs()
    store.rebuild_catalog()
    assert store.runs().empty


def test_open_store_create(tmp_path):
    store = open_store(tmp_path / "new", create=True)
    assert store.runs().empty
    assert "run_id" in store.runs().columns
    assert open_store(tmp_path / "new").path == tmp_path / "new"


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def test_scenario_hash_is_canonical():
    a = {"lb": {"scheme": "ecmp", "k": 2}, "seed": 1}
    b = {"seed": 1, "lb": {"k": 2, "scheme": "ecmp"}}
    assert scenario_hash(a) == scenario_hash(b)
    assert len(scenario_hash(a)) == 16 and int(scenario_hash(a), 16) >= 0
    assert scenario_hash(a) != scenario_hash({**a, "seed": 2})


def test_flatten_uses_dotted_keys():
    nested = {"lb": {"scheme": "ecmp", "params": {"k": 2}}, "hosts": [1, 2], "empty": {}}
    assert flatten(nested) == {"lb.scheme": "ecmp", "lb.params.k": 2, "hosts": [1, 2], "empty": {}}
    assert flatten({"a": 1}, prefix="x.") == {"x.a": 1}


def test_lists_in_the_scenario_are_stored_as_json_text(tmp_path):
    store = Store(tmp_path)
    rec = record("a")
    rec["scenario"]["topology"]["failed_links"] = [[0, 1], [2, 3]]
    store.record_in_catalog({**rec, "run_id": "a"})
    assert store.runs(all_rows=True).loc[0, "topology.failed_links"] == "[[0, 1], [2, 3]]"


# --------------------------------------------------------------------------
# verifying, checking and repairing a store through the CLI
# --------------------------------------------------------------------------

from pathlib import Path  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from dclb.cli import cli  # noqa: E402

SWEEP_GRID = ["--grid", "lb.scheme=ecmp,rps,drb", "--out"]


def cli_run(*args: str):
    """Runs a dclb command in this process (as `dclb ARGS` would, without the start-up cost)."""
    return CliRunner().invoke(cli, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[Path, Path]:
    """A store of the three complete runs of a sweep over SWEEP_GRID: (scenario file, store). They are run
    in this process (a sweep's points are exactly these runs, and this saves starting workers)."""
    import dclb
    from conftest import TINY

    base = tmp_path_factory.mktemp("swept")
    scenario = base / "tiny.toml"
    scenario.write_text(TINY)
    for scheme in ("ecmp", "rps", "drb"):
        dclb.run(dclb.load_scenario(scenario, [f"lb.scheme={scheme}"]), out=base / "store")
    return scenario, base / "store"


@pytest.fixture
def store_copy(swept, tmp_path) -> tuple[Path, Path, list[str]]:
    scenario, store_dir = swept
    copy = tmp_path / "store"
    shutil.copytree(store_dir, copy)
    return scenario, copy, sorted(d.name for d in (copy / "runs").iterdir())


def sweep_again(scenario: Path, store_dir: Path):
    return cli_run("sweep", scenario, *SWEEP_GRID, store_dir, "-q", "--jobs", "1")


def test_results_check_and_repair_when_folders_and_catalog_disagree(store_copy):
    import duckdb

    scenario, store_dir, (unlisted, unmarked, deleted) = store_copy
    con = duckdb.connect(str(store_dir / "catalog.duckdb"))
    con.execute("DELETE FROM runs WHERE run_id = ?", [unlisted])  # a sweep killed before recording it
    con.close()
    (store_dir / "runs" / unmarked / "COMPLETE").unlink()
    shutil.rmtree(store_dir / "runs" / deleted)

    shown = cli_run("results", store_dir, "--format", "csv")
    assert shown.exit_code == 0
    assert unmarked not in shown.stdout and deleted not in shown.stdout  # never shown as completed
    assert "2 runs in the catalog whose folder is gone or incomplete (not shown)" in shown.stderr
    assert "1 complete run folder not in the catalog" in shown.stderr and "dclb store repair" in shown.stderr

    check = cli_run("store", "check", store_dir)
    assert check.exit_code == 1
    lines = check.stdout.splitlines()
    assert f"run {unmarked}: it has no COMPLETE marker" in check.stdout
    assert f"catalog: lists {deleted} as completed, but its folder is gone" in lines
    assert f"catalog: does not list {unlisted} (completed)" in lines
    assert lines[-1].startswith("1 run (1 complete, 0 failed): 4 problems")

    repair = cli_run("store", "repair", store_dir)
    assert repair.exit_code == 0, repair.stdout
    assert f"run {unmarked}: it has no COMPLETE marker" in repair.stdout and "set aside in" in repair.stdout
    assert "rebuilt the catalog (1 rows)" in repair.stdout and repair.stdout.splitlines()[-1].endswith("4 fixed")
    assert (store_dir / "set-aside").is_dir() and not (store_dir / "runs" / unmarked).exists()
    again = cli_run("store", "check", store_dir)
    assert again.exit_code == 0 and again.stdout.strip().splitlines()[-1] == "1 run (1 complete, 0 failed): no problems found"
    assert open_store(store_dir).runs()["run_id"].tolist() == [unlisted]

    rerun = sweep_again(scenario, store_dir)  # the two lost points run again, the listed one does not
    assert rerun.exit_code == 0 and "1 already complete; running 2" in rerun.stderr
    assert cli_run("store", "check", store_dir).exit_code == 0


def test_a_sweep_runs_damaged_points_again(store_copy):
    scenario, store_dir, (truncated, garbled, good) = store_copy
    flows = store_dir / "runs" / truncated / "flows.parquet"
    flows.write_bytes(flows.read_bytes()[:-100])
    (store_dir / "runs" / garbled / "run.json").write_text('{"run_id": "oops", ')

    check = cli_run("store", "check", store_dir)
    assert check.exit_code == 1
    assert f"run {truncated}: flows.parquet has" in check.stdout and "when written (truncated or changed)" in check.stdout
    assert f"run {garbled}: run.json has" in check.stdout
    with pytest.raises(StoreError, match="cannot read .*flows.parquet.*dclb store check"):
        open_store(store_dir).flows(truncated)

    rerun = sweep_again(scenario, store_dir)  # a damaged run.json no longer aborts the sweep
    assert rerun.exit_code == 0, rerun.stderr
    assert f"run {truncated} is damaged (flows.parquet has" in rerun.stderr
    assert f"run {garbled} is damaged (run.json has" in rerun.stderr
    assert "1 already complete; running 2" in rerun.stderr
    assert cli_run("store", "check", store_dir).exit_code == 0
    assert len(open_store(store_dir).flows(truncated)) == 60


def test_deep_check_compares_checksums(store_copy):
    _, store_dir, (changed, *_) = store_copy
    flows = store_dir / "runs" / changed / "flows.parquet"
    data = bytearray(flows.read_bytes())
    data[len(data) // 3] ^= 0xFF  # same size, footer intact: only the checksum can tell
    flows.write_bytes(bytes(data))
    assert cli_run("store", "check", store_dir).exit_code == 0
    deep = cli_run("store", "check", store_dir, "--deep")
    assert deep.exit_code == 1 and f"run {changed}: flows.parquet has changed since it was written" in deep.stdout
    assert cli_run("store", "repair", store_dir, "--deep").exit_code == 0
    assert cli_run("store", "check", store_dir, "--deep").exit_code == 0


def test_a_folder_written_before_manifests_still_counts(store_copy):
    """COMPLETE holding just the run id (what dclb wrote before manifests): the folder is checked by what can
    be read without a manifest, and counts as done."""
    _, store_dir, (old, damaged, _) = store_copy
    for run_id in (old, damaged):
        (store_dir / "runs" / run_id / "COMPLETE").write_text(run_id + "\n")
    store = open_store(store_dir)
    assert store.verify(old).ok
    # Without a manifest, a table whose row count disagrees with the summary is still caught.
    flows = store_dir / "runs" / damaged / "flows.parquet"
    pq.write_table(pq.read_table(flows).slice(0, 1), flows)
    found = store.verify(damaged)
    assert not found.ok and "flows.parquet has 1 rows, but the run's summary counts" in found.problems[0]
    check = cli_run("store", "check", store_dir)
    assert check.exit_code == 1 and f"run {damaged}: flows.parquet has 1 rows" in check.stdout and f"run {old}" not in check.stdout

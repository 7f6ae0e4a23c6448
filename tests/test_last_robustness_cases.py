"""The last robustness cases of issue #30 (part 3), each with the class of mistakes behind it:

* relations between parameters that can never hold (a queue threshold above every buffer it is compared
  with, a warm-up that ends after the horizon);
* paths a user gives where a part is a file, a directory stands where a file is expected, or the place
  cannot be written (one helper, :mod:`dclb.paths`);
* checks that are shallow but say "no problems" (``store check`` / ``store repair`` without ``--deep``);
* a sweep from a script without the ``if __name__ == "__main__":`` guard;
* a fabric too large to check, with the memory limit off (``DCLB_MEMORY_LIMIT=none``), dry run or not.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dclb
from conftest import TINY
from dclb.errors import UserError
from test_scenario_schema import dclb_main, refused

QUICKSTART = Path(__file__).resolve().parent.parent / "scenarios" / "quickstart.toml"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def _dry(tiny: Path, *settings: str) -> subprocess.CompletedProcess:
    return dclb_main("run", str(tiny), "--dry-run", "--no-store", *[a for s in settings for a in ("--set", s)])


# --------------------------------------------------------------------------------------------------------
# Relations that can never hold


@pytest.mark.parametrize("settings, needles", [
    # The case: LBT's lower bound of its thresholds above the ports' buffer.
    (["lb.scheme=\"lbt\"", "topology.buffer_bytes=384000", "lb.q_min_bytes=500000"],
     ["lb.q_min_bytes: 500000 bytes", "topology.buffer_bytes = 384000 bytes", "use at most 384000 bytes"]),
    # The same relation with the default buffer and in packets.
    (["lb.scheme=\"lbt\"", "lb.q_min_bytes=100000000"], ["lb.q_min_bytes: 100000000 bytes", "topology.buffer_bytes = 384000 bytes (the default at this rate)"]),
    (["lb.scheme=\"lbt\"", "topology.queue_unit=\"packets\"", "topology.buffer_packets=100", "lb.q_min_bytes=200000"],
     ["lb.q_min_bytes", "topology.buffer_packets = 100 packets", "150000 bytes"]),
    # A period given longer than the run: its first round would come after the end.
    (["lb.scheme=\"hermes\"", "lb.probe_us=100000", "run.horizon_us=50000"], ["lb.probe_us: 100000 us", "run.horizon_us = 50000 us", "would ever probe"]),
    # A measurement window that opens when the run has ended.
    (["run.warmup_us=100000", "run.horizon_us=50000"], ["run.warmup_us", "run.horizon_us = 50000 us", "no flow would be measured"]),
])
def test_a_relation_that_can_never_hold_is_refused_naming_both_fields(tiny, settings, needles):
    refused(_dry(tiny, *settings), *needles)


@pytest.mark.parametrize("settings", [
    ["lb.scheme=\"lbt\"", "topology.buffer_bytes=384000", "lb.q_min_bytes=384000"],  # a full queue reaches it
    ["lb.scheme=\"lbt\"", "lb.q1_max_bytes=10000000", "lb.q2_max_bytes=10000000"],  # upper bounds: no cap, odd but meaningful
    ["lb.scheme=\"tam\"", "lb.k_star_bytes=1000000000"],  # TAM's queue rule off, its coexistence marking kept
    ["run.warmup_us=10000", "run.horizon_us=50000"],
    ["lb.scheme=\"hermes\"", "lb.probe_us=0", "run.horizon_us=50000"],  # probing off, said so
])
def test_odd_but_meaningful_settings_still_run(tiny, settings):
    result = _dry(tiny, *settings)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------------------------------------
# Paths


@pytest.fixture
def store(tmp_path: Path, tiny: Path) -> Path:
    out = tmp_path / "store"
    dclb.run(dclb.load_scenario(tiny), out=out)
    return out


def test_a_file_inside_an_output_path_is_named_with_the_option(tmp_path, tiny, store):
    afile = tmp_path / "afile"
    afile.write_text("a file")
    part = f"{afile} is a file, not a directory"
    # The case: a figure under a file.
    refused(dclb_main("plot", str(store), "--kind", "cdf", "--out", str(afile / "x.png")), "--out", part)
    # The class: every option and field that names a path.
    refused(dclb_main("report", str(store), "--out", str(afile / "r.html")), "--out", part)
    refused(dclb_main("run", str(tiny), "--out", str(afile / "res"), "-q"), "--out", part)
    refused(dclb_main("run", str(tiny), "--out", str(afile / "res"), "--dry-run"), "--out", part)  # a dry run checks it too
    refused(dclb_main("run", str(tiny), "--dump-config", str(afile / "c.json"), "--no-store", "--dry-run"), "--dump-config", part)
    refused(dclb_main("sweep", str(tiny), "--out", str(afile / "res"), "--dry-run"), "--out", part)
    refused(dclb_main("reproduce", "lbt", "--scale", "ci", "--figure", "2", "--out", str(afile / "r")), "--out", part)
    refused(dclb_main("run", str(afile / "s.toml")), "no scenario file under it", part)
    refused(dclb_main("results", str(afile / "store")), part)
    refused(dclb_main("store", "check", str(afile / "store")), part)
    refused(_dry(tiny, f"traffic.workload=\"{afile / 'w.csv'}\""), "traffic.workload", part)
    with pytest.raises(UserError, match="^out: cannot write results to .* is a file, not a directory"):
        dclb.run(dclb.load_scenario(tiny), out=afile / "res")
    with pytest.raises(UserError, match="^out: cannot write results to .* is a file, not a directory"):
        dclb.sweep(tiny, out=afile / "res", jobs=1)


def test_a_directory_where_a_file_goes_and_a_file_where_a_directory_goes(tmp_path, tiny, store):
    adir = tmp_path / "adir.png"
    adir.mkdir()
    refused(dclb_main("plot", str(store), "--kind", "cdf", "--out", str(adir)), "--out", "it is a directory; give a file name")
    (tmp_path / "page.html").mkdir()
    refused(dclb_main("report", str(store), "--out", str(tmp_path / "page.html")), "--out", "it is a directory")
    refused(dclb_main("run", str(tiny), "--dump-config", str(tmp_path), "--no-store", "--dry-run"), "--dump-config", "it is a directory")
    refused(dclb_main("run", str(tmp_path)), f"{tmp_path} is a directory, not a scenario file")
    (tmp_path / "res").write_text("a file")
    refused(dclb_main("run", str(tiny), "--out", str(tmp_path / "res"), "-q"), "--out", "it is a file, not a directory")


def test_an_unwritable_location_is_named_before_the_work(tmp_path, tiny, monkeypatch):
    # As root every directory is writable by permission, so the probe's failure is simulated where it is made.
    import dclb.paths as paths

    locked = tmp_path / "locked"
    locked.mkdir()
    real = paths._writable_dir
    monkeypatch.setattr(paths, "_writable_dir", lambda d: "permission denied" if Path(d) == locked else real(d))
    refused(dclb_main("run", str(tiny), "--out", str(locked / "res"), "-q"), "--out", f"cannot create it in {locked} (permission denied)")
    refused(dclb_main("run", str(tiny), "--out", str(locked), "--dry-run"), "--out", "cannot write in it (permission denied)")


# --------------------------------------------------------------------------------------------------------
# Shallow checks say what they did not check


def test_a_shallow_check_and_repair_say_what_they_did_not_check(store):
    [folder] = (store / "runs").iterdir()
    flows = folder / "flows.parquet"
    data = bytearray(flows.read_bytes())
    data[len(data) // 3] ^= 0xFF  # same size, footer intact: only the contents' checksum tells
    flows.write_bytes(bytes(data))
    for command in (["store", "check", str(store)], ["store", "repair", str(store)]):
        result = dclb_main(*command)
        assert result.returncode == 0, result.stdout
        lines = result.stdout.strip().splitlines()
        assert lines[-1] == "1 run (1 complete, 0 failed): no problems found", lines
        assert lines[-2].startswith("checked: 1 run folder (files present with their recorded sizes, Parquet footers and row counts, run.json), 1 catalog row"), lines
        assert f"not checked: the files' contents" in lines[-2] and f"`dclb {command[0]} {command[1]} --deep {store}` reads every byte" in lines[-2], lines
    deep = dclb_main("store", "check", "--deep", str(store))
    assert deep.returncode == 1 and "SHA-256 differs" in deep.stdout
    assert "every byte against its SHA-256" in deep.stdout and "not checked: nothing left" in deep.stdout


# --------------------------------------------------------------------------------------------------------
# A sweep from a script without the main guard


@pytest.mark.parametrize("dask", [None, "local"])
def test_a_sweep_from_a_script_without_the_main_guard_runs_and_runs_the_script_once(tmp_path, tiny, dask):
    log = tmp_path / "top-level.log"
    script = tmp_path / "noguard.py"
    script.write_text(textwrap.dedent(f"""
        import dclb
        with open({str(log)!r}, "a") as f:
            f.write("ran\\n")
        frame = dclb.sweep({str(tiny)!r}, grid={{"lb.scheme": ["ecmp", "rps"]}}, overrides=["traffic.flows=20"], out={str(tmp_path / "store")!r}, jobs=2, dask={dask!r})
        print(",".join(frame["status"]))
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stdout.strip() == "completed,completed", (result.stdout, result.stderr[-3000:])
    assert log.read_text() == "ran\n"  # the workers did not run the script's top level again
    assert sorted(dclb.open_store(tmp_path / "store").runs()["status"]) == ["completed", "completed"]


def test_a_sweep_started_while_a_worker_process_starts_names_the_guard(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(UserError, match='if __name__ == "__main__":'):
        dclb.sweep(tiny, out=tmp_path / "store", jobs=2)
    assert not (tmp_path / "store").exists()  # nothing stored, no point failed


# --------------------------------------------------------------------------------------------------------
# Fabrics too large to check, with the memory limit off


def _capped(*args: str, cap_bytes: int = 2 << 30) -> subprocess.CompletedProcess:
    """The installed `dclb` with DCLB_MEMORY_LIMIT=none, in a process whose address space is capped (a run
    that allocated per host would fail within the cap instead of growing), and a timeout."""
    exe = shutil.which("dclb") or str(Path(sys.executable).parent / "dclb")
    env = {**os.environ, "DCLB_MEMORY_LIMIT": "none"}

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=60, env=env, preexec_fn=cap)


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_fabric_beyond_the_port_ids_is_refused_by_arithmetic_with_the_memory_limit_off(dry_run):
    args = ["run", str(QUICKSTART), "--no-store", "-q", "--set", "topology.leaves=1000000000", *(["--dry-run"] if dry_run else [])]
    refused(_capped(*args), "topology:", "24000000000 ports", "32-bit port ids")


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_fabric_larger_than_the_machine_is_refused_with_the_memory_limit_off(dry_run):
    # Within the port ids (2.4e9 ports), but no machine of this size holds it: the checks would build it.
    args = ["run", str(QUICKSTART), "--no-store", "-q", "--set", "topology.leaves=100000000", *(["--dry-run"] if dry_run else [])]
    refused(_capped(*args), "topology.leaves", "all of this machine's memory", "DCLB_MEMORY_LIMIT=none")


def test_the_memory_limit_off_still_runs_what_fits(tiny):
    result = _capped("run", str(tiny), "--no-store", "-q", "--dry-run", cap_bytes=4 << 30)
    assert result.returncode == 0, result.stderr

"""`dclb results`, `dclb plot`, `dclb report` on the shared small sweep; statistics; bad input."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dclb
from dclb.analysis import mean_ci, normalize, t_quantile

from conftest import dclb_cli


# --------------------------------------------------------------------------------------------------------
# Statistics


def test_t_quantiles():
    # Two-sided 95 % points of Student's t, as printed in statistics tables (4 decimals).
    table = {1: 12.7062, 2: 4.3027, 3: 3.1824, 5: 2.5706, 10: 2.2281, 30: 2.0423, 1000: 1.9623}
    for dof, expected in table.items():
        assert t_quantile(0.975, dof) == pytest.approx(expected, abs=5e-5), dof


def test_mean_and_confidence_interval():
    mean, half, n = mean_ci([1.0, 2.0, 3.0, float("nan")])
    assert (mean, n) == (2.0, 3)
    assert half == pytest.approx(t_quantile(0.975, 2) * 1.0 / math.sqrt(3), rel=1e-9)
    assert math.isnan(mean_ci([5.0])[1])


def test_normalize_matches_the_other_fields_and_the_seed():
    runs = pd.DataFrame(
        {
            "run_id": list("abcdefgh"),
            "lb.scheme": ["ecmp", "rps"] * 4,
            "traffic.load": [0.2, 0.2, 0.2, 0.2, 0.4, 0.4, 0.4, 0.4],
            "seed": [1, 1, 2, 2, 1, 1, 2, 2],
            "m": [10.0, 5.0, 20.0, 30.0, 4.0, 8.0, 1.0, 1.0],
        }
    )
    out = normalize(runs, "m", "lb.scheme=ecmp").set_index("run_id")["m"]
    assert out.to_dict() == {"a": 1.0, "b": 0.5, "c": 1.0, "d": 1.5, "e": 1.0, "f": 2.0, "g": 1.0, "h": 1.0}
    by_load = normalize(runs, "m", "traffic.load=0.2").set_index("run_id")["m"]
    assert by_load["e"] == 0.4 and by_load["f"] == 8.0 / 5.0


# --------------------------------------------------------------------------------------------------------
# results


def test_results_table_and_sql(pool_sweep):
    _, store_dir, frame = pool_sweep
    table = dclb_cli("results", str(store_dir))
    assert table.returncode == 0, table.stderr
    for needle in ["run_id", "lb.scheme", "traffic.load", "seed", "status", "short_afct_us", "8 runs: 8 completed", frame["run_id"][0]]:
        assert needle in table.stdout, needle
    chosen = dclb_cli("results", str(store_dir), "--columns", "lb.scheme,drops", "--where", "lb.scheme = 'rps'", "--format", "csv")
    lines = chosen.stdout.strip().splitlines()
    assert lines[0] == "run_id,lb.scheme,drops" and len(lines) == 5 and all(",rps," in l for l in lines[1:])
    query = dclb_cli("results", str(store_dir), "--sql", 'select "lb.scheme" as scheme, count(*) as n from runs group by 1 order by 1', "--format", "json")
    assert json.loads(query.stdout) == [{"scheme": "ecmp", "n": 4}, {"scheme": "rps", "n": 4}]
    flows = dclb.open_store(store_dir).sql("select count(*) as n from flows")
    assert int(flows["n"][0]) == 8 * 60
    switches = dclb_cli("results", str(store_dir), "--sql", "select kind, count(*) as n from switches group by 1 order by 1", "--format", "json")
    assert json.loads(switches.stdout) == [{"kind": "leaf", "n": 8 * 2}, {"kind": "spine", "n": 8 * 2}]


# --------------------------------------------------------------------------------------------------------
# plot


def _png_ok(path: Path) -> None:
    import matplotlib.image as mpimg

    image = mpimg.imread(path)
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 300
    assert float(np.std(image[..., :3])) > 0.01, "the image is not blank"


def test_plot_kinds_write_files_that_open(pool_sweep, tmp_path):
    _, store_dir, _ = pool_sweep
    s = str(store_dir)
    line = dclb_cli("plot", s, "--x", "traffic.load", "--y", "short_afct_us", "--hue", "lb.scheme", "--out", str(tmp_path / "line.png"))
    assert line.returncode == 0, line.stderr
    _png_ok(tmp_path / "line.png")
    norm = dclb_cli("plot", s, "--x", "traffic.load", "--y", "long_goodput_gbps", "--hue", "lb.scheme", "--normalize-to", "lb.scheme=ecmp", "--out", str(tmp_path / "norm.png"))
    assert norm.returncode == 0, norm.stderr
    _png_ok(tmp_path / "norm.png")
    cdf = dclb_cli("plot", s, "--kind", "cdf", "--hue", "lb.scheme", "--facet", "traffic.load", "--out", str(tmp_path / "cdf.svg"))
    assert cdf.returncode == 0, cdf.stderr
    assert ET.parse(tmp_path / "cdf.svg").getroot().tag.endswith("svg")
    bins = dclb_cli("plot", s, "--kind", "bins", "--hue", "lb.scheme", "--out", str(tmp_path / "bins.pdf"))
    assert bins.returncode == 0, bins.stderr
    assert (tmp_path / "bins.pdf").read_bytes().startswith(b"%PDF")
    series = dclb_cli("plot", s, "--kind", "timeseries", "--y", "queue_bytes", "--hue", "lb.scheme", "--where", "traffic.load = 0.4")
    assert series.returncode == 0, series.stderr
    written = Path(series.stdout.split("wrote ", 1)[1].strip())
    _png_ok(written)


def test_plot_from_python_labels_units_and_markers(pool_sweep):
    from dclb.plots import make_figure

    _, store_dir, _ = pool_sweep
    fig = make_figure(dclb.open_store(store_dir), "line", x="traffic.load", y="short_p99_fct_us", hue="lb.scheme")
    ax = fig.axes[0]
    assert "(µs)" in ax.get_ylabel() and ax.get_xlabel() == "traffic.load"
    lines = {c.get_label(): c.lines[0] for c in ax.containers}  # one errorbar container per hue value
    assert set(lines) == {"ecmp", "rps"}
    assert lines["ecmp"].get_marker() != lines["rps"].get_marker()
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["ecmp", "rps"]


# --------------------------------------------------------------------------------------------------------
# report


_CHECK_IMAGES = (
    "<script>window.addEventListener('load', function () {"
    " var images = document.images, broken = 0;"
    " for (var i = 0; i < images.length; i++) { if (!(images[i].complete && images[i].naturalWidth > 0)) broken++; }"
    " document.body.setAttribute('data-images', images.length); document.body.setAttribute('data-broken', broken); });"
    "</script>"
)


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_report_is_one_self_contained_page_that_renders(pool_sweep, tmp_path):
    _, store_dir, _ = pool_sweep
    out = tmp_path / "report.html"
    result = dclb_cli("report", str(store_dir), "--out", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    for needle in ["Scenario grid", "lb.scheme", "traffic.load", "ecmp, rps", "0.2, 0.4", "Summary", "short_afct_us", "Figures", "CDF"]:
        assert needle in page, needle
    # No external resources: every src/href is a data: URI (or an in-page anchor).
    for ref in re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page):
        assert ref.startswith("data:") or ref.startswith("#"), ref
    assert "<script" not in page.lower() and "@import" not in page and "url(" not in page
    n_images = page.count("<img ")
    assert n_images >= 5
    for alt in ("FCT CDF", "slowdown per flow-size bin", "queue length over time"):  # the runs have a sampler
        assert f'alt="{alt}"' in page, alt

    browser = _browser()
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed, and CI must render the report (.ci/run installs it)")
        pytest.skip("no chromium on this machine: install Debian's `chromium` package to render the report")
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", _CHECK_IMAGES + "</body>"), encoding="utf-8")
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body, (dom.returncode, dom.stderr[-2000:])
    counts = dict(re.findall(r'data-(images|broken)="(\d+)"', body.group(0)))
    assert counts == {"images": str(n_images), "broken": "0"}, counts
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,3000", f"--screenshot={shot}", out.as_uri()], capture_output=True, timeout=180, cwd=tmp_path)
    assert shot.is_file() and shot.stat().st_size > 10_000


# --------------------------------------------------------------------------------------------------------
# Bad input: one line, exit 2


def _one_line_error(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [l for l in result.stderr.strip().splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--grid", "traffic.lod=0.2,0.4"], ["--grid traffic.lod", "unknown field"]),
        (["--grid", "traffic.load=0.2:0.8"], ["--grid traffic.load", "malformed range"]),
        (["--grid", "lb.scheme=ecmp", "--seeds", "0"], ["seeds"]),
        (["--grid", "traffic.load=3.0"], ["traffic.load"]),  # no valid point at all
    ],
)
def test_sweep_bad_input(tiny, tmp_path, args, needles):
    _one_line_error(dclb_cli("sweep", str(tiny), *args, "--out", str(tmp_path / "r"), "-q"), *needles)
    assert not (tmp_path / "r" / "runs").exists() or not any((tmp_path / "r" / "runs").iterdir())


@pytest.mark.parametrize("command", [["results"], ["plot", "--x", "traffic.load", "--y", "short_afct_us"], ["report"]])
def test_missing_store_directory(tmp_path, command):
    _one_line_error(dclb_cli(command[0], str(tmp_path / "nowhere"), *command[1:]), "nowhere")


def test_plot_bad_fields(pool_sweep):
    _, store_dir, _ = pool_sweep
    _one_line_error(dclb_cli("plot", str(store_dir), "--x", "traffic.lod", "--y", "short_afct_us"), "traffic.lod", "did you mean")
    _one_line_error(dclb_cli("plot", str(store_dir), "--x", "traffic.load", "--y", "short_afct_us", "--normalize-to", "lb.scheme=magic"), "lb.scheme", "magic")
    _one_line_error(dclb_cli("plot", str(store_dir), "--x", "traffic.load", "--y", "short_afct_us", "--out", "x.gif"), ".png")
    _one_line_error(dclb_cli("plot", str(store_dir), "--kind", "cdf", "--y", "fct_ms"), "--y fct_ms", "flows table", "fct_us")
    _one_line_error(dclb_cli("results", str(store_dir), "--sql", "select nope from runs"), "nope")

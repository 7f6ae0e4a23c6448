"""Flow-size workloads: the shipped CDFs, user CDF files, and mixtures.

A workload file lists ``<size_bytes> <cumulative_probability>`` points, one per line; ``#`` starts a comment.
The ns-2 three-column form ``<size> <anything> <cdf>`` is accepted too. Probabilities are fractions in [0, 1];
a file whose last probability is exactly 100 is read as percent. This module reads the file; whether the points
form a CDF (sizes and probabilities must not decrease, the last probability must be 1; repeated sizes and
probabilities, i.e. point masses and flat segments, are legal) is the engine's rule (``check::cdf_problem``),
reported here with the file's line. Sampling interpolates linearly between points (``traffic::cdf``), and the
mean used to calibrate load, :attr:`Workload.mean_bytes`, is the engine's mean of that same distribution.

Shipped workloads (``dclb workloads`` lists them with their means and sources): ``websearch``, ``datamining``,
``cachefollower``, ``webserver``, ``hadoop``, and the variants under ``alternates/`` (named by file stem, e.g.
``datamining_conga_vl2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from . import _core
from .errors import ScenarioError
from .paths import file_part
from .textfiles import read_text

MAIN_WORKLOADS = ("websearch", "datamining", "cachefollower", "webserver", "hadoop")


@dataclass(frozen=True)
class Workload:
    name: str
    path: Path
    points: tuple[tuple[float, float], ...]
    description: str
    source: str

    @property
    def mean_bytes(self) -> float:
        return _core.cdf_mean(list(self.points))

    @property
    def second_moment_bytes2(self) -> float:
        """E[S^2] of the same piecewise-linear distribution (bytes squared): the point mass at the first size,
        then each segment uniform between its sizes."""
        p = self.points
        m = p[0][0] ** 2 * p[0][1]
        for (x0, c0), (x1, c1) in zip(p, p[1:]):
            m += (c1 - c0) * (x0 * x0 + x0 * x1 + x1 * x1) / 3.0
        return m


def _data_dir() -> Path:
    return Path(str(resources.files("dclb") / "data" / "workloads"))


def builtin_paths() -> dict[str, Path]:
    """Shipped workload names mapped to their files (main ones first, then alternates)."""
    base = _data_dir()
    found = {p.stem: p for p in sorted(base.glob("*.cdf"))}
    ordered = {name: found.pop(name) for name in MAIN_WORKLOADS if name in found}
    ordered.update(found)
    for p in sorted((base / "alternates").glob("*.cdf")):
        ordered.setdefault(p.stem, p)
    return ordered


def parse_cdf(text: str, origin: str) -> tuple[tuple[float, float], ...]:
    """Parses and checks CDF text; errors name ``origin`` and the line."""
    rows: list[tuple[float, float, int]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        if len(parts) not in (2, 3):
            raise ScenarioError(f"{origin}:{lineno}: expected '<size_bytes> <probability>', got {raw.strip()!r}")
        try:
            size, prob = float(parts[0]), float(parts[-1])
        except ValueError:
            raise ScenarioError(f"{origin}:{lineno}: not a number in {raw.strip()!r}") from None
        if not (math.isfinite(size) and math.isfinite(prob)):
            # Python reads "nan" and "inf" as numbers; in a CDF they are mistakes, named here at their line
            # rather than as the comparison with a neighbour that they break.
            raise ScenarioError(f"{origin}:{lineno}: sizes and probabilities must be finite numbers, got {raw.strip()!r}")
        rows.append((size, prob, lineno))
    if rows and rows[-1][1] == 100.0:
        rows = [(s, p / 100.0, n) for s, p, n in rows]
    points = tuple((s, p) for s, p, _ in rows)
    problem = _core.cdf_problem(list(points))
    if problem is not None:
        index, what = problem
        where = f"{origin}:{rows[index][2]}" if index is not None else origin
        raise ScenarioError(f"{where}: {what}")
    mean = _core.cdf_mean(list(points))
    if mean < 1.0:
        # A drawn size is at least 1 byte, and load is calibrated with the CDF's mean: with a mean below one
        # byte (an all-zero CDF has 0) the arrival rate would be wrong or infinite, and the error would
        # blame the load. Sizes are in bytes.
        raise ScenarioError(f"{origin}: the sizes' mean is {mean:g} bytes; a flow is at least 1 byte (sizes are in bytes), so the CDF needs a mean of at least 1")
    return points


def _header(text: str) -> tuple[str, str]:
    comments = [line[1:].strip() for line in text.splitlines() if line.startswith("#")]
    description = comments[0] if comments else ""
    source = next((c.split(":", 1)[1].strip() for c in comments if c.lower().startswith("source:")), "")
    return description, source


def load(spec: str, base_dir: Path | None = None, field: str = "traffic.workload") -> Workload:
    """A workload by shipped name or by file path (relative paths resolve against ``base_dir``)."""
    builtins = builtin_paths()
    if spec in builtins:
        path = builtins[spec]
    else:
        path = Path(spec).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.exists() and file_part(path) is None:
            names = ", ".join(MAIN_WORKLOADS)
            raise ScenarioError(f"{field}: '{spec}' is neither a shipped workload ({names}, or see `dclb workloads`) nor an existing file")
    text = read_text(path, "workload CDF", field)
    points = parse_cdf(text, str(path) if spec not in builtins else spec)
    description, source = _header(text)
    return Workload(spec if spec in builtins else path.stem, path, points, description, source)

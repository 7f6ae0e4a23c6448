"""Flow-size workloads: the shipped CDFs, user CDF files, and mixtures.

A workload file lists ``<size_bytes> <cumulative_probability>`` points, one per line; ``#`` starts a comment.
The ns-2 three-column form ``<size> <anything> <cdf>`` is accepted too. Probabilities are fractions in [0, 1];
a file whose last probability is exactly 100 is read as percent. Sizes and probabilities must not decrease and
the last probability must be 1: repeated sizes (point masses) and repeated probabilities (flat segments) are
legal. Sampling interpolates linearly between points (see the engine's ``traffic::cdf``), and the mean used to
calibrate load is the mean of that same interpolated distribution.

Shipped workloads (``dclb workloads`` lists them with their means and sources): ``websearch``, ``datamining``,
``cachefollower``, ``webserver``, ``hadoop``, and the variants under ``alternates/`` (named by file stem, e.g.
``datamining_conga_vl2``).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import ScenarioError

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
        return cdf_mean(self.points)


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


def cdf_mean(points: tuple[tuple[float, float], ...] | list[tuple[float, float]]) -> float:
    """Mean of the piecewise-linear distribution: the first point's mass plus each segment's trapezoid."""
    mean = points[0][0] * points[0][1]
    for (x0, p0), (x1, p1) in zip(points, points[1:]):
        mean += (p1 - p0) * (x0 + x1) / 2.0
    return mean


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
        rows.append((size, prob, lineno))
    if len(rows) < 2:
        raise ScenarioError(f"{origin}: a CDF needs at least two points, found {len(rows)}")
    if rows[-1][1] == 100.0:
        rows = [(s, p / 100.0, n) for s, p, n in rows]
    for (s0, p0, _), (s1, p1, n1) in zip(rows, rows[1:]):
        if s1 < s0:
            raise ScenarioError(f"{origin}:{n1}: sizes must not decrease ({s1:g} after {s0:g}); the CDF is not monotonic")
        if p1 < p0:
            raise ScenarioError(f"{origin}:{n1}: probabilities must not decrease ({p1:g} after {p0:g}); the CDF is not monotonic")
    first, last = rows[0], rows[-1]
    if first[0] < 0 or not 0.0 <= first[1] <= 1.0:
        raise ScenarioError(f"{origin}:{first[2]}: sizes must be >= 0 and probabilities in [0, 1]")
    if abs(last[1] - 1.0) > 1e-9:
        raise ScenarioError(f"{origin}:{last[2]}: the last probability must be 1 (the CDF must end at 1), got {last[1]:g}")
    return tuple((s, p) for s, p, _ in rows)


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
        if not path.is_file():
            names = ", ".join(MAIN_WORKLOADS)
            raise ScenarioError(f"{field}: '{spec}' is neither a shipped workload ({names}, or see `dclb workloads`) nor an existing file")
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioError(f"{field}: cannot read {path}: {e.strerror}") from None
    points = parse_cdf(text, str(path) if spec not in builtins else spec)
    description, source = _header(text)
    return Workload(spec if spec in builtins else path.stem, path, points, description, source)

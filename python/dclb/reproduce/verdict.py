"""Verdicts: the rule by which dclb judges a paper's claim from its runs, stated once.

The rule
--------
*Pairing.* Every scheme of a figure runs the same flows at the same seed and grid point (the seed draws the
traffic; the scheme only routes it). So two series are compared **paired**: for each seed, the two values at the
same point give one number, the log of their ratio (:data:`LOG`), or their difference (:data:`DIFF`) for
quantities that can be zero, such as miss rates, retransmission ratios and counts (a metric declares this with
``Metric.scale = "difference"``; a ratio metric with a zero in the pair falls back to it and says so). Pairing
takes away the part of the noise that the flows of a seed cause in both series alike.

*Effect and noise.* The effect is the mean of these numbers over seeds, shown as a percent change
(``exp(mean) - 1`` for a log ratio; the difference over the second series' mean for a difference), with a
:data:`CONFIDENCE` two-sided Student-t interval over seeds (``mean ± t(n-1) · s / √n``). With fewer than
:data:`MIN_SEEDS` seeds the interval means nothing (with two, ``t = 12.7``): the verdict then reads *cannot tell*
with "noise unknown with N seeds", and shows the means only as a hint.

*Outcomes* (:class:`Outcome`). A claim that gives the paper's number (a percent change, or a range of them) is:

* **reproduced** — the interval excludes zero, on the paper's side, and dclb's effect is at least
  :data:`REPRODUCED_FRACTION` of the paper's (of the smaller end of a range). "Up to p%" is judged on the pair
  (scheme, point) where dclb's effect is largest; "around p%" on the per-seed mean over the points; "more than p%"
  (``at_least``) needs the whole of p.
* **same direction, much smaller** — significant on the paper's side, but below that fraction. (An interval that
  excludes zero reaches at most twice its mean, so with a fraction of one half it cannot reach the paper's number
  either: "much smaller" is itself significant.)
* **indistinguishable** — the interval contains no effect (zero): within the noise of these seeds.
* **opposite** — significantly the other way.
* **cannot tell** — no data, or fewer than :data:`MIN_SEEDS` seeds.
* **not testable** — the claim is about something a simulator cannot measure, or cannot differ between the
  schemes by construction, or needs what the paper does not give; the verdict says which.

An ordinal claim ("X beats Y at every load") judges each asked pair and point the same way, with the claimed
direction in place of a number; it is reproduced when every pair is significantly in that direction, and the
verdict says how many were indistinguishable and how many opposite (an opposite pair makes the claim opposite,
else an indistinguishable one makes it indistinguishable). A claim of a level or a tolerance ("about the same",
"within ±10%", "below 1 ms") has a band, shown as dclb's reading: reproduced when the interval lies inside the
band, opposite when it lies wholly outside, indistinguishable otherwise. A rank ("X among the best k") is
reproduced when at most k - 1 others are not significantly behind X, opposite when at least k are significantly
ahead.

*Reasons* (:class:`Reason`). A verdict's outcome is at the shipped setting and reading. Its reason also looks at
other settings, readings and metrics when a claim has been judged under them (:func:`judge_claim`): a claim that
fails as shipped but is reproduced with another setting is *setting-dependent*, named; with another metric,
*metric-dependent*; a paper's number larger than any load balancer could reach at this load is *headroom*; a gap
inside the noise is *within noise*; otherwise it *fails under everything tried* (and the detail lists what was
tried).

The tolerances are the constants below, written down with why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..analysis import MIN_SEEDS_FOR_CI

# ---------------------------------------------------------------------------------------------------------------
# Tolerances

#: Fewest seeds for which an interval is computed and a verdict judges a difference. The same as the figures'
#: error bars (:data:`dclb.analysis.MIN_SEEDS_FOR_CI`): with two seeds the 95% t interval is ±12.7 standard errors,
#: which separates nothing.
MIN_SEEDS = MIN_SEEDS_FOR_CI
#: Two-sided confidence of the t interval: the usual 95%. With 3 seeds an effect must be about 2.5 times the
#: per-seed spread of the paired numbers to count, which is what "significant" should cost at a few seeds.
CONFIDENCE = 0.95
#: A paper's number is reproduced when dclb's effect is at least this share of it: half, because the papers'
#: settings are partly guessed (flow counts, loads, transport), so a factor 2 in size is within what the guesses
#: can move, while an effect of a tenth of the paper's (e.g. -2% against -33%) is a different result, not the same
#: one smaller.
REPRODUCED_FRACTION = 0.5

#: Scales of an effect: the log of a ratio, a difference, or a value (a level, not a comparison).
LOG, DIFF, VALUE = "log ratio", "difference", "value"


class Outcome(str, Enum):
    """What the data say about a claim at the shipped setting and reading (see the module documentation)."""

    REPRODUCED = "reproduced"
    SMALLER = "same direction, much smaller"
    INDISTINGUISHABLE = "indistinguishable"
    OPPOSITE = "opposite"
    CANNOT_TELL = "cannot tell"
    NOT_TESTABLE = "not testable"

    @property
    def holds(self) -> Optional[bool]:
        """True when reproduced, None when the data cannot tell or the claim cannot be tested, else False."""
        if self is Outcome.REPRODUCED:
            return True
        if self in (Outcome.CANNOT_TELL, Outcome.NOT_TESTABLE):
            return None
        return False


class Reason(str, Enum):
    """Why a verdict reads as it does, over the setting, readings and metrics tried (see :func:`reason_of`)."""

    HOLDS = "holds"
    SETTING = "setting-dependent"
    METRIC = "metric-dependent"
    HEADROOM = "headroom"
    NOISE = "within noise"
    NOT_TESTABLE = "not testable"
    FAILS = "fails under everything tried"
    NOISE_UNKNOWN = "noise unknown"
    NO_DATA = "no data"


#: One line per reason, for reports and docs.
REASON_MEANING = {
    Reason.HOLDS: "reproduced at the shipped setting and reading",
    Reason.SETTING: "fails as shipped, reproduced under another setting or reading (named)",
    Reason.METRIC: "fails on the paper's metric as dclb reads it, reproduced on another (named)",
    Reason.HEADROOM: "cannot be tested at this load: the paper's number is larger than any load balancer could reach here",
    Reason.NOISE: "the gap is inside the noise of these seeds",
    Reason.NOT_TESTABLE: "not testable: in a simulator, by construction, or with what the paper gives (the detail says which)",
    Reason.FAILS: "smaller, opposite or partly so under every setting, reading and metric tried (listed)",
    Reason.NOISE_UNKNOWN: f"fewer than {MIN_SEEDS} seeds: no interval, so no verdict on a difference",
    Reason.NO_DATA: "the runs the claim reads are missing or failed",
}

RULE = (
    "Schemes share flows per seed, so two series are compared paired: per seed, the log of their ratio at the same "
    "point (their difference for quantities that can be zero). The effect is the mean over seeds, shown as a percent "
    f"change with a {CONFIDENCE:.0%} Student-t interval over seeds; with fewer than {MIN_SEEDS} seeds the noise is unknown "
    "and the verdict cannot tell. Against the paper's number: reproduced when the interval excludes zero on the paper's "
    f"side and the effect is at least {REPRODUCED_FRACTION:.0%} of the paper's; same "
    "direction, much smaller below that; indistinguishable when the interval contains zero; opposite when it is "
    "significantly the other way. An ordinal claim is reproduced when every pair it asks is significantly in its "
    "direction; a level or tolerance when the interval lies inside the band dclb reads the words as (shown)."
)


# ---------------------------------------------------------------------------------------------------------------
# Effects


def t_quantile(n: int) -> float:
    """The two-sided :data:`CONFIDENCE` quantile of Student's t with ``n - 1`` degrees of freedom."""
    from scipy.stats import t as student_t

    return float(student_t.ppf(0.5 + CONFIDENCE / 2, n - 1))


@dataclass(frozen=True)
class Effect:
    """A mean over seeds with its t interval, on one of the scales :data:`LOG`, :data:`DIFF`, :data:`VALUE`.

    ``base`` is the mean of the second series for a difference (its relative reading divides by it); ``unit``
    and ``digits`` format a value or difference."""

    scale: str
    n: int
    mean: float
    half: float
    base: float = math.nan
    unit: str = ""

    @classmethod
    def of(cls, values: Iterable[float], scale: str, base: float = math.nan, unit: str = "") -> "Effect":
        x = [float(v) for v in values if v is not None and math.isfinite(v)]
        n = len(x)
        if n == 0:
            return cls(scale, 0, math.nan, math.nan, base, unit)
        mean = sum(x) / n
        if n < 2:
            return cls(scale, n, mean, math.nan, base, unit)
        sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (n - 1))
        return cls(scale, n, mean, t_quantile(n) * sd / math.sqrt(n), base, unit)

    @property
    def known(self) -> bool:
        """Enough seeds for an interval."""
        return self.n >= MIN_SEEDS and math.isfinite(self.half)

    @property
    def lo(self) -> float:
        return self.mean - self.half

    @property
    def hi(self) -> float:
        return self.mean + self.half

    @property
    def sign(self) -> int:
        """+1 or -1 when the interval excludes zero on that side, 0 when it contains zero (or is unknown)."""
        if not self.known:
            return 0
        return 1 if self.lo > 0 else -1 if self.hi < 0 else 0

    @property
    def hint(self) -> int:
        """The sign of the mean: what the means say without the noise."""
        return 0 if not math.isfinite(self.mean) or self.mean == 0 else (1 if self.mean > 0 else -1)

    def percent(self) -> Optional[tuple[float, float, float]]:
        """(effect, low, high) as percent changes: of a ratio, or a difference over the base; None for a value or a
        difference without a positive base."""
        if self.scale == LOG:
            return tuple(100 * math.expm1(v) for v in (self.mean, self.lo, self.hi))  # type: ignore[return-value]
        if self.scale == DIFF and self.base > 0:
            return tuple(100 * v / self.base for v in (self.mean, self.lo, self.hi))  # type: ignore[return-value]
        return None

    def on_ratio(self, v: float) -> float:
        """A ratio (a band's end) on this effect's scale."""
        if self.scale == LOG:
            return math.log(v) if v > 0 else -math.inf if v == 0 else math.nan
        return v

    def text(self) -> str:
        """``-12.3% [-20.1, -4.0]`` (or a value or difference with its unit); the interval only when known."""
        if self.n == 0:
            return "no data"
        pct = self.percent()
        if self.scale == LOG:
            main = _pct(pct[0])  # type: ignore[index]
            return f"{main} [{_pct(pct[1], False)}, {_pct(pct[2], False)}]" if self.known else main  # type: ignore[index]
        signed = self.scale == DIFF
        main = _num(self.mean, signed) + (f" {self.unit}" if self.unit else "")
        if self.known:
            main = f"{_num(self.mean, signed)} [{_num(self.lo, signed)}, {_num(self.hi, signed)}]" + (f" {self.unit}" if self.unit else "")
        if pct is not None:
            main += f" ({_pct(pct[0])} of {_num(self.base)})"
        return main

    def seeds_text(self) -> str:
        return f"{self.n} seed{'s' if self.n != 1 else ''}"


def _pct(x: float, sign: bool = True) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"{x:+.1f}%" if sign else f"{x:+.1f}"


def _num(x: float, signed: bool = False) -> str:
    if not math.isfinite(x):
        return "n/a"
    a = abs(x)
    body = f"{a:.3g}" if a >= 1e-3 or a == 0 else f"{a:.2e}"
    return ("-" if x < 0 else "+" if signed else "") + body


def paired(a: Mapping[Any, float], b: Mapping[Any, float], scale: str = LOG, unit: str = "") -> Effect:
    """The paired effect of ``a`` against ``b`` over the keys (seed and point) both have: the mean log ratio, or the
    mean difference (``DIFF``, or ``LOG`` with a value at or below zero)."""
    keys = [k for k in a if k in b]
    if scale == LOG and any(a[k] <= 0 or b[k] <= 0 for k in keys):
        scale = DIFF
    if scale == LOG:
        return Effect.of((math.log(a[k] / b[k]) for k in keys), LOG)
    base = sum(b[k] for k in keys) / len(keys) if keys else math.nan
    return Effect.of((a[k] - b[k] for k in keys), DIFF, base, unit)


# ---------------------------------------------------------------------------------------------------------------
# What a claim expects of an effect


@dataclass(frozen=True)
class Direction:
    """The first series higher (+1) or lower (-1) than the second, by any amount."""

    sign: int


@dataclass(frozen=True)
class Number:
    """The paper's percent change, or a range of them; ``at_least`` for "more than p%" (all of p is needed)."""

    lo: float
    hi: float
    at_least: bool = False

    @property
    def sign(self) -> int:
        return 1 if self.lo + self.hi > 0 else -1

    @property
    def need(self) -> float:
        """The percent change (signed) that counts as reproduced by size alone."""
        smallest = min(abs(self.lo), abs(self.hi))
        return self.sign * smallest * (1.0 if self.at_least else REPRODUCED_FRACTION)

    def text(self) -> str:
        body = f"{self.lo:+.1f}%" if self.lo == self.hi else f"{self.lo:+.1f}…{self.hi:+.1f}%"
        return ("more than " if self.at_least else "") + body


@dataclass(frozen=True)
class Band:
    """An interval the effect must lie in: ratios for a log effect (0.9, 1.1 = within ±10%), values otherwise."""

    lo: float
    hi: float

    def text(self, unit: str = "", ratio: bool = False) -> str:
        def f(v: float) -> str:
            return "inf" if math.isinf(v) else f"{v:g}"

        u = f" {unit}" if unit and not ratio else ""
        if ratio:
            return f"ratio in [{f(self.lo)}, {f(self.hi)}]"
        return f"in [{f(self.lo)}, {f(self.hi)}]{u}"


Expectation = Any  # Direction | Number | Band


def judge_effect(e: Effect, expect: Expectation) -> Outcome:
    """The outcome of one effect against what the claim expects (the rule of the module documentation)."""
    if e.n == 0 or not math.isfinite(e.mean):
        return Outcome.CANNOT_TELL
    if not e.known:
        return Outcome.CANNOT_TELL
    if isinstance(expect, Band):
        lo, hi = e.on_ratio(expect.lo), e.on_ratio(expect.hi)
        if lo <= e.lo and e.hi <= hi:
            return Outcome.REPRODUCED
        if e.hi < lo or e.lo > hi:
            return Outcome.OPPOSITE
        return Outcome.INDISTINGUISHABLE
    if e.sign == 0:
        return Outcome.INDISTINGUISHABLE
    if e.sign != expect.sign:
        return Outcome.OPPOSITE
    if isinstance(expect, Direction):
        return Outcome.REPRODUCED
    pct = e.percent()
    if pct is None:  # a difference whose base is zero: only its direction can be judged
        return Outcome.REPRODUCED
    return Outcome.REPRODUCED if abs(pct[0]) >= abs(expect.need) else Outcome.SMALLER


#: How outcomes of the parts of an "every part must hold" claim combine: the first present wins.
_ALL_ORDER = (Outcome.OPPOSITE, Outcome.INDISTINGUISHABLE, Outcome.SMALLER, Outcome.CANNOT_TELL, Outcome.REPRODUCED)
#: ... and of an "any part may hold" claim.
_ANY_ORDER = (Outcome.REPRODUCED, Outcome.CANNOT_TELL, Outcome.INDISTINGUISHABLE, Outcome.SMALLER, Outcome.OPPOSITE)


def combine(outcomes: Sequence[Outcome], need: str = "all") -> Outcome:
    """One outcome from several: all must hold (``need="all"``) or one may (``"any"``)."""
    testable = [o for o in outcomes if o is not Outcome.NOT_TESTABLE]
    if not outcomes:
        return Outcome.CANNOT_TELL
    if not testable:
        return Outcome.NOT_TESTABLE
    for o in _ALL_ORDER if need == "all" else _ANY_ORDER:
        if o in testable:
            return o
    return Outcome.CANNOT_TELL


# ---------------------------------------------------------------------------------------------------------------
# Verdicts, alternatives, reasons


@dataclass(frozen=True)
class Verdict:
    """What dclb's data say about one claim: the outcome, the line the report prints, and the numbers of the
    summary (the deciding effect: the single comparison, the pair that misses by most, or the paper's best case)."""

    outcome: Outcome
    text: str
    effect: Optional[Effect] = None
    paper: str = ""
    seeds: int = 0
    points: int = 0
    #: The largest percent change any load balancer could reach for the deciding comparison, when the figure's
    #: frame knows it (a ``<metric>@ideal`` column: the metric with every flow at its ideal FCT).
    headroom: Optional[float] = None
    #: The percent change the paper's number asks for (:attr:`Number.need`), for the headroom test.
    need: Optional[float] = None
    #: Why the claim is not testable, when it is not.
    why: str = ""

    @property
    def holds(self) -> Optional[bool]:
        return self.outcome.holds


def no_data(subject: str) -> Verdict:
    return Verdict(Outcome.CANNOT_TELL, f"{subject}: dclb: no data")


@dataclass(frozen=True)
class Alternative:
    """Another way a claim was judged: a ``setting`` (other runs: ``transport.init_cwnd_packets=2``), a
    ``reading`` of the paper's words, or a ``metric``."""

    label: str
    kind: str = "setting"


@dataclass(frozen=True)
class Judgement:
    """A claim, its verdict as shipped, its verdicts under the alternatives tried, and the reason they give."""

    claim: Any
    verdict: Verdict
    alternatives: tuple[tuple[Alternative, Verdict], ...] = ()
    reason: Reason = Reason.NO_DATA
    detail: str = ""

    @property
    def holds(self) -> Optional[bool]:
        return self.verdict.holds

    @property
    def outcome(self) -> Outcome:
        return self.verdict.outcome

    @property
    def reason_text(self) -> str:
        return self.reason.value + (f": {self.detail}" if self.detail else "")

    @property
    def text(self) -> str:
        """The verdict line with its outcome and reason (what the CLI prints)."""
        reason = self.reason.value if self.detail and self.detail in self.verdict.text else self.reason_text
        return f"{self.verdict.text} => {self.verdict.outcome.value} ({reason})"

    def row(self) -> dict[str, Any]:
        """One row of a summary table (without paper and figure). dclb's effect is a percent change for a log
        ratio, else the difference or value itself in the metric's unit."""
        e = self.verdict.effect
        pct = e.percent() if e is not None and e.scale == LOG else None
        known = e is not None and e.known
        if pct is not None:
            effect, lo, hi, unit = pct[0], pct[1] if known else None, pct[2] if known else None, "%"
        elif e is not None and e.n:
            effect, lo, hi = e.mean, e.lo if known else None, e.hi if known else None
            unit = e.unit or ("difference" if e.scale == DIFF else "")
        else:
            effect = lo = hi = None
            unit = ""
        return {
            "claim": getattr(self.claim, "text", str(self.claim)),
            "concession": bool(getattr(self.claim, "concession", False)),
            "verdict": self.verdict.outcome.value,
            "reason": self.reason.value,
            "reason_detail": self.detail,
            "paper": self.verdict.paper,
            "dclb_effect": _round(effect),
            "dclb_low": _round(lo),
            "dclb_high": _round(hi),
            "effect_unit": unit,
            "seeds": self.verdict.seeds,
            "points": self.verdict.points,
            "holds": self.holds,
            "line": self.verdict.text,
        }


def _round(x: Optional[float]) -> Optional[float]:
    return None if x is None or not math.isfinite(x) else round(float(x), 4)


def headroom_short(v: Verdict) -> bool:
    """True when the paper's number asks for more than any load balancer could reach at this load."""
    if v.headroom is None or v.need is None or not math.isfinite(v.headroom):
        return False
    return abs(v.need) > abs(v.headroom) and (v.need > 0) == (v.headroom > 0)


def reason_of(v: Verdict, alternatives: Sequence[tuple[Alternative, Verdict]] = ()) -> tuple[Reason, str]:
    """The reason for verdict ``v`` given the alternatives tried (module documentation): the first that applies of
    holds, not testable, no data / noise unknown, setting-dependent (or reading), metric-dependent, headroom,
    within noise, fails under everything tried."""
    o = v.outcome
    if o is Outcome.REPRODUCED:
        return Reason.HOLDS, ""
    if o is Outcome.NOT_TESTABLE:
        return Reason.NOT_TESTABLE, v.why
    if o is Outcome.CANNOT_TELL:
        if v.seeds == 0:
            return Reason.NO_DATA, ""
        return Reason.NOISE_UNKNOWN, f"{v.seeds} seed{'s' if v.seeds != 1 else ''}"
    held = [a for a, av in alternatives if av.outcome is Outcome.REPRODUCED]
    settings = [a for a in held if a.kind in ("setting", "reading")]
    if settings:
        return Reason.SETTING, "holds with " + "; ".join(f"{a.label}" if a.kind == "setting" else f"the reading {a.label}" for a in settings)
    metrics = [a for a in held if a.kind == "metric"]
    if metrics:
        return Reason.METRIC, "holds on " + "; ".join(a.label for a in metrics)
    if headroom_short(v):
        if v.headroom == 0:  # e.g. misses only of flows that would miss alone, or none at all
            return Reason.HEADROOM, f"the paper's {v.paper} needs at least {v.need:+.1f}% here, and no balancer could reduce it at this load: the baseline is already at the floor (what every flow would get alone on the fabric)"
        return Reason.HEADROOM, f"the paper's {v.paper} needs at least {v.need:+.1f}% here, and the most any balancer could reach at this load is {v.headroom:+.1f}%"
    if o is Outcome.INDISTINGUISHABLE:
        return Reason.NOISE, f"{v.seeds} seeds"
    tried = ["the shipped setting"] + [f"{a.label} ({av.outcome.value})" for a, av in alternatives]
    return Reason.FAILS, f"{o.value}; tried: " + ", ".join(tried)


def judge_claim(claim: Any, frame: Any, settings: Mapping[Alternative, Any] | Sequence[tuple[Alternative, Any]] = ()) -> Judgement:
    """Judges ``claim`` on ``frame`` (its shipped setting), under its own declared readings and metrics
    (``claim.alternatives``), and on the frames of other ``settings`` (other runs of the same figure, e.g. a
    sensitivity run with ``transport.init_cwnd_packets=2``), and derives the reason."""
    verdict = claim.check(frame)
    alts: list[tuple[Alternative, Verdict]] = []
    for alt in getattr(claim, "alternatives", ()):
        alts.append((Alternative(alt.label, alt.kind), alt.check(frame)))
    pairs = settings.items() if isinstance(settings, Mapping) else settings
    for alternative, other in pairs:
        alts.append((alternative, claim.check(other)))
    reason, detail = reason_of(verdict, alts)
    return Judgement(claim, verdict, tuple(alts), reason, detail)


@dataclass(frozen=True)
class Tally:
    """Counts of the outcomes of a claim's comparisons, for its verdict line."""

    counts: dict[Outcome, int] = field(default_factory=dict)

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> "Tally":
        c: dict[Outcome, int] = {}
        for o in outcomes:
            c[o] = c.get(o, 0) + 1
        return cls(c)

    def text(self, what: str = "pairs") -> str:
        n = sum(self.counts.values())
        parts = [f"{self.counts.get(Outcome.REPRODUCED, 0)} of {n} {what} significantly so"]
        for o, word in ((Outcome.SMALLER, "much smaller"), (Outcome.INDISTINGUISHABLE, "indistinguishable"), (Outcome.OPPOSITE, "opposite")):
            if self.counts.get(o):
                parts.append(f"{self.counts[o]} {word}")
        return ", ".join(parts)

"""The quick scale's verdicts at load against an earlier quick reproduction (docs/reproduce.md, *Verdicts at load*).

    python validation/stationary/verdicts.py NEW_DIR OLD_DIR > verdicts.md

NEW_DIR and OLD_DIR are ``dclb reproduce all --scale quick`` output directories (their ``summary.csv`` over the
five papers and each figure's ``figN.csv``); a NEW_DIR of single-paper runs (``dclb reproduce lbt ...``, no top-level
``summary.csv``) is read paper by paper, and OLD_DIR is cut to the same papers and figures. Prints markdown: the verdict counts of both, each paper's headline
claims now (verdict, effect with its interval, reason, seeds, the load the figure's runs carried), and every claim
whose verdict changed, with its cause:

* ``seeds`` when the figure's runs started as before (an empty start kept at quick scale, or no poisson source):
  only the number of seeds changed, and the first seeds are the same runs;
* ``seeds`` too when the new effect lies inside the old interval: the estimate stayed, the interval narrowed;
* ``load`` when the figure's runs now carry their nominal load and the effect moved out of the old interval: the
  fabric the schemes were compared on changed (a stationary start instead of an empty fabric).
"""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pandas as pd

ORDER = ["reproduced", "same direction, much smaller", "indistinguishable", "opposite", "cannot tell", "not testable"]


def _headlines() -> dict[tuple[str, str], tuple[str, ...]]:
    out = {}
    for key in ("lbt", "tam", "tr", "dar", "mdtlb"):
        mod = importlib.import_module(f"dclb.reproduce.papers.{key}")
        for h in mod.SENSITIVITY.headlines:
            out[(key, h.figure)] = tuple(h.claims)
    return out


def _is_headline(row, heads) -> bool:
    prefixes = heads.get((row["paper"], str(row["figure"])), ())
    return any(p in str(row["claim"]) for p in prefixes)


def _effect(row) -> str:
    if not isinstance(row["dclb_effect"], (int, float)) or not math.isfinite(row["dclb_effect"]):
        return "—"
    unit = "%" if row["effect_unit"] == "%" else f" {row['effect_unit']}" if isinstance(row["effect_unit"], str) else ""
    # A difference of ratios (a miss rate, a retransmission share) is far below 1: one decimal would print +0.0.
    fmt = "+.1f" if max(abs(row[k]) for k in ("dclb_effect", "dclb_low", "dclb_high")) >= 1 else "+.2g"
    return f"{row['dclb_effect']:{fmt}}{unit} [{row['dclb_low']:{fmt}}, {row['dclb_high']:{fmt}}]"


def _figure_load(new_dir: Path, paper: str, figure: str) -> tuple[float, float] | None:
    """The median and lowest fabric load of a figure's stationary runs; None when its runs started as written.

    A stationary run has a measurement window (``window_carried_load_ratio``); a run that started empty (TAM's and
    TR's large sweeps at quick, any scenario that mixes patterns) has none, and its first seeds are the old runs.
    """
    slug = "fig" + "".join(c if c.isalnum() else "_" for c in str(figure))
    path = new_dir / paper / f"{slug}.csv"
    if not path.is_file():
        return None
    f = pd.read_csv(path)
    if "fabric_carried_load_ratio" not in f.columns or "window_carried_load_ratio" not in f.columns:
        return None
    v = f.loc[f["window_carried_load_ratio"].notna(), "fabric_carried_load_ratio"].dropna()
    return (float(v.median()), float(v.min())) if len(v) else None


def _cause(new, old, load) -> str:
    if load is None:
        return "seeds (same start as before: only the seeds changed)"
    e, lo, hi = new["dclb_effect"], old["dclb_low"], old["dclb_high"]
    if all(isinstance(x, (int, float)) and math.isfinite(x) for x in (e, lo, hi)) and lo <= e <= hi:
        return f"seeds (the effect stayed within the old interval; {int(old['seeds'])} to {int(new['seeds'])} seeds narrowed it)"
    was = old["dclb_effect"]
    moved = f"{was:+.1f} to {e:+.1f}" if all(isinstance(x, (int, float)) and math.isfinite(x) for x in (was, e)) else "moved"
    return f"load (now at {load[0]:.0%} of the nominal load; the effect moved from {moved})"


def _summary(out_dir: Path) -> pd.DataFrame:
    """The reproduction's claims: its ``summary.csv``, or its papers' own when only some papers were run."""
    # Figures are read as text: "3" in one paper's file and "3a" in another's must meet on the same key.
    if (out_dir / "summary.csv").is_file():
        return pd.read_csv(out_dir / "summary.csv", dtype={"figure": str})
    parts = [pd.read_csv(p, dtype={"figure": str}) for p in sorted(out_dir.glob("*/summary.csv"))]
    if not parts:
        sys.exit(f"{out_dir}: no summary.csv (run dclb reproduce there first)")
    return pd.concat(parts, ignore_index=True)


def main(new_dir: Path, old_dir: Path) -> None:
    new = _summary(new_dir)
    old = _summary(old_dir)
    # Cut the old run to the figures the new one ran (``dclb reproduce mdtlb --figure 10`` reruns one figure).
    ran = set(zip(new["paper"], new["figure"]))
    old = old[[pf in ran for pf in zip(old["paper"], old["figure"])]]
    heads = _headlines()
    print("| verdict | before (empty start, 3 seeds) | now (stationary start where the figure has one, 5 seeds) |\n|---|---|---|")
    for v in ORDER:
        a, b = int((old["verdict"] == v).sum()), int((new["verdict"] == v).sum())
        if a or b:
            print(f"| {v} | {a} | {b} |")
    print(f"| all | {len(old)} | {len(new)} |\n")
    for paper, rows in new.groupby("paper", sort=False):
        h = rows[rows.apply(lambda r: _is_headline(r, heads), axis=1)]
        print(f"**{paper.upper()}** ({len(rows)} claims: " + ", ".join(f"{int((rows['verdict'] == v).sum())} {v}" for v in ORDER if (rows["verdict"] == v).any()) + ")\n")
        print("| fig. | headline claim | verdict | reason | dclb effect [95% interval] | paper | seeds | load carried (median, lowest) |\n|---|---|---|---|---|---|---|---|")
        for _, r in h.iterrows():
            load = _figure_load(new_dir, paper, r["figure"])
            lc = f"{load[0]:.0%}, {load[1]:.0%}" if load else "not at load (empty start)"
            pn = r["paper_number"] if isinstance(r["paper_number"], str) or (isinstance(r["paper_number"], float) and math.isfinite(r["paper_number"])) else "—"
            reason = r["reason"] + (f" ({r['reason_detail']})" if isinstance(r["reason_detail"], str) and r["reason_detail"] else "")
            print(f"| {r['figure']} | {r['claim']} | {r['verdict']} | {reason} | {_effect(r)} | {pn} | {r['seeds']} | {lc} |")
        print()
    key = ["paper", "figure", "claim"]
    both = new.merge(old, on=key, suffixes=("", "_old"), how="outer", indicator=True)
    changed = both[(both["_merge"] != "both") | (both["verdict"] != both["verdict_old"])]
    print(f"**Changed verdicts: {len(changed)} of {len(both)}.**\n")
    print("| paper | fig. | claim | before | now | cause |\n|---|---|---|---|---|---|")
    for _, r in changed.iterrows():
        if r["_merge"] != "both":
            print(f"| {r['paper']} | {r['figure']} | {r['claim']} | {r.get('verdict_old', '—')} | {r.get('verdict', '—')} | claim {'added' if r['_merge'] == 'left_only' else 'removed'} |")
            continue
        o = {k: r[f"{k}_old"] for k in ("dclb_effect", "dclb_low", "dclb_high", "seeds")}
        load = _figure_load(new_dir, r["paper"], r["figure"])
        print(f"| {r['paper']} | {r['figure']} | {r['claim']} | {r['verdict_old']} {_effect({**r, **{k: r[k + '_old'] for k in ('dclb_effect', 'dclb_low', 'dclb_high')}})} | {r['verdict']} {_effect(r)} | {_cause(r, o, load)} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))

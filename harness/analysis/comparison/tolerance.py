"""How far a same-case rerun of the paper's setting can move a number: the tolerance behind *reproduced*.

A reproduction runs the paper's 1,100 cases at its five seeds, so case sampling does not enter: the cases are
the same. What moves a number between two runs of one setting is run-to-run noise: server batching for the
greedy arms (the seed never reaches the request, so five seeds are five repeated runs; .tex lines 341-343),
sampling for the temperature-0.7 arms, the worked example for the note-only arms. Two estimates of it; the
larger is used.

1. The paper's own rerun evidence (.tex lines 405-409). Blind Program-Solve on the covered 440 was run twice:
   39.59 against 39.73 (7B) and 57.55 against 57.59 (32B), and the per-case answers agree on about 95% (7B) and
   at least 99.8% (32B) of case-seed pairs. A per-case-seed disagreement rate d between two runs flips d*n of
   the n = cases x seeds correctness values; flips being as likely either way, the accuracy of two runs differs
   with standard deviation sqrt(d/n) (a gap of two arms: sqrt(2d/n)). At d = 5% and n = 2,200 that is 0.48 pp
   (95%: +-0.93), at d = 0.2%, 0.095 pp (+-0.19); the paper's two observed moves, 0.14 and 0.04, lie within both
   (`paper_rerun_check` recomputes this from the values file). The 32B rate stands for the 32B, the 7B rate for
   every other checkpoint (the paper gives none for Mistral and Phi; 5% is the larger).
2. The user's own run. Its seeds are repeated runs, so their spread is rerun noise measured on this very setting:
   the per-seed values of a statistic (each seed's accuracy, gap or share) have sample SD s, and two S-seed means
   (the paper's and the user's) differ with SD s*sqrt(2/S). For a statistic that is not a mean over seeds (an
   ICC, an effective sample size) the leave-one-seed-out jackknife gives its standard error se over the seeds,
   and two runs differ with SD sqrt(2)*se. For the note-only arms the seed also moves the worked example, so
   this overstates a same-seed rerun (the tolerance errs wide).

Tolerance = 1.96 * max(sd_paper, sd_seeds) + half a unit of the last digit the paper prints. A number that holds
by construction (the Gold-Solve library: no model, deterministic) has the rounding only; a count of rows has the
share's tolerance times the rows.

*consistent* uses the sampling uncertainty instead: the paper's printed 95% calculator-cluster interval where it
prints one (every gap of Table 2 and the text's intervals), else the user's own 95% cluster interval (the same
design on the same cases; the paper prints none for an accuracy).

Interval ends. A claim that an interval clears (or crosses) zero rests on the end nearest zero. That end moves
with the point estimate (rerun noise, as above) and with the bootstrap's Monte Carlo error: a percentile end from
B draws has standard error about sqrt(q(1-q)/B) / phi(z_q) * sd_boot (q = 0.025, sd_boot = (hi - lo) / 3.92), and
the paper's 10,000 draws and the user's B are independent. A claim whose paper margin is itself within that
combined tolerance of zero is fragile: a faithful rerun may land on either side, so the comparison calls it held
when the user's margin is within the tolerance of the paper's, and says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.analysis.comparison.values import number, paper_seeds, setting

Z95 = 1.959964
Q_END = 0.025
PHI_Z = math.exp(-Z95 ** 2 / 2) / math.sqrt(2 * math.pi)   # normal density at the 97.5% quantile
AGREEMENT = "text:appendix:rerun-agreement"
RERUN_ACCURACIES = (("table1:Blind Program-Solve:Qwen2.5-7B:impl", "text:appendix:covered-rerun#blind_7b", "7B"),
                    ("table1:Blind Program-Solve:Qwen2.5-32B:impl", "text:appendix:covered-rerun#blind_32b", "32B"))
PAPER_32B = "Qwen2.5-32B-Instruct-AWQ"


@dataclass(frozen=True)
class Tolerance:
    """The half-width a same-case rerun can move a number by, and where it comes from."""

    half_width: float
    sd_paper: float | None
    sd_seeds: float | None
    rounding: float
    source: str

    def text(self) -> str:
        return f"\u00b1{self.half_width:.2f} ({self.source})"


def paper_disagreement(paper_model: str | None) -> tuple[float, str]:
    """The paper's per-case-seed disagreement between two runs for a checkpoint, and where it is from."""
    if paper_model == PAPER_32B:
        ref, label = f"{AGREEMENT}#agree_32b", "32B"
    else:
        ref, label = f"{AGREEMENT}#agree_7b", "7B"
    n = number(ref)
    return 1 - n["value"] / 100, f"{label} rerun agreement {n['value']:g}%, .tex line {n['line']}"


def flip_sd(d: float, rows: int, arms: int = 1) -> float:
    """SD (pp) of the difference of two runs' mean over `rows` case-seed values of `arms` arms at flip rate d."""
    return 100 * math.sqrt(arms * d / rows) if rows > 0 else float("nan")


def seed_spread_sd(per_seed) -> float | None:
    """SD (pp) of the difference of two S-seed means, from one run's per-seed values (None below two seeds)."""
    v = np.asarray([x for x in per_seed if x is not None and not np.isnan(x)], dtype=float)
    if v.size < 2:
        return None
    return float(v.std(ddof=1) * math.sqrt(2 / v.size))


def jackknife_sd(leave_one_out) -> float | None:
    """SD of the difference of two runs of a statistic, from its leave-one-seed-out values (None below two)."""
    v = np.asarray([x for x in leave_one_out if x is not None and not np.isnan(x)], dtype=float)
    if v.size < 2:
        return None
    se = math.sqrt((v.size - 1) / v.size * float(np.sum((v - v.mean()) ** 2)))
    return math.sqrt(2) * se


def rerun(digits: int, sd_paper: float | None, sd_seeds: float | None, paper_source: str | None,
          seeds: int) -> Tolerance:
    """1.96 x the larger of the two estimates, plus the rounding of the printed value."""
    rounding = 0.5 * 10 ** -digits
    cands = [(sd, s) for sd, s in ((sd_paper, paper_source),
                                    (sd_seeds, f"your {seeds} seeds' spread")) if sd is not None and not np.isnan(sd)]
    if not cands:
        return Tolerance(rounding, sd_paper, sd_seeds, rounding, "rounding only: no rerun estimate")
    sd, why = max(cands, key=lambda c: c[0])
    parts = [f"{s} \u00b1{Z95 * x:.2f}" + (" (used)" if s == why and len(cands) > 1 else "") for x, s in cands]
    return Tolerance(Z95 * sd + rounding, sd_paper, sd_seeds, rounding,
                     "rerun noise: " + "; ".join(parts) + f"; + {rounding:g} rounding")


def binomial_allowance(pct: float, n: int) -> float:
    """1.96 binomial SDs (pp) of a share `pct` (%) over n units: how far a rerun's share of n can move (an upper
    bound when the units differ in how likely they are)."""
    p = pct / 100
    return 100 * Z95 * math.sqrt(max(p * (1 - p), 1e-12) / max(n, 1))


def for_stat(paper_model: str | None, stat, digits: int, arms: int = 1) -> Tolerance:
    """The rerun tolerance of one of the user's statistics (harness.analysis.comparison.ours.Stat: its case-seed
    rows, per-seed values and seeds) for a number the paper prints to `digits`; `arms`: 2 for a paired gap."""
    d, source = paper_disagreement(paper_model)
    return rerun(digits, flip_sd(d, stat.rows, arms) if stat.rows else None, seed_spread_sd(stat.per_seed),
                 f"the paper's {source}", len(stat.seeds))


def construction(digits: int) -> Tolerance:
    r = 0.5 * 10 ** -digits
    return Tolerance(r, None, None, r, "holds by construction (no model): rounding only")


def exact() -> Tolerance:
    return Tolerance(0.0, None, None, 0.0, "exact")


def interval_end_sd(lo: float, hi: float, draws: int) -> float:
    """Monte Carlo SD of a percentile-interval end from `draws` bootstrap draws (normal approximation)."""
    sd_boot = (hi - lo) / (2 * Z95)
    return math.sqrt(Q_END * (1 - Q_END) / draws) / PHI_Z * sd_boot


def paper_draws() -> int:
    return int(setting("bootstrap-draws")["values"]["draws"])


def paper_rerun_check() -> list[dict]:
    """The paper's own rerun (Blind Program-Solve, covered 440, two runs) against the tolerance derived from its
    agreement rates: each observed move and the 95% rerun half-width at n = 440 x 5."""
    out = []
    for first, second, label in RERUN_ACCURACIES:
        a, b = number(first), number(second)
        rows = int(a["n_cases"]) * len(paper_seeds())
        d, source = paper_disagreement(PAPER_32B if label == "32B" else None)
        half = Z95 * flip_sd(d, rows)
        out.append({"model": label, "first": a["value"], "second": b["value"], "moved": abs(a["value"] - b["value"]),
                    "half_width": half, "source": source, "lines": f"{a['line']}, {b['line']}"})
    return out

"""How far a same-case rerun of the paper's setting can move a number: the tolerance behind *reproduced*.

A reproduction runs the paper's 1,100 cases at its five seeds, so case sampling does not enter: the cases are
the same. What moves a number between two runs of one setting is run-to-run noise: server batching for the
greedy arms (the seed never reaches the request, so five seeds are five repeated runs; .tex lines 341-343),
sampling for the temperature-0.7 arms, the worked example for the note-only arms. One estimate of it decides: the
paper's own rerun evidence; the user's seed spread is reported beside it and never widens it.

1. The paper's own rerun evidence (.tex lines 405-409). Blind Program-Solve on the covered 440 was run twice:
   39.59 against 39.73 (7B) and 57.55 against 57.59 (32B), and the per-case answers agree on about 95% (7B) and
   at least 99.8% (32B) of case-seed pairs. A per-case-seed disagreement rate d between two runs flips d*n of
   the n = cases x seeds correctness values; flips being as likely either way, the accuracy of two runs differs
   with standard deviation sqrt(d/n) (a gap of two arms: sqrt(2d/n)). At d = 5% and n = 2,200 that is 0.48 pp
   (95%: +-0.93), at d = 0.2%, 0.095 pp (+-0.19); the paper's two observed moves, 0.14 and 0.04, lie within both
   (`paper_rerun_check` recomputes this from the values file). The 32B rate stands for the 32B, the 7B rate for
   every other checkpoint (the paper gives none for Mistral and Phi; 5% is the larger).
2. The user's own run: its seeds are repeated runs of one setting (for the greedy arms whose example is fixed), so
   their spread is rerun noise measured on this very setting. It is reported beside the tolerance, never added to
   it: a noisy run must not earn an easier verdict. The per-seed values of a statistic (each seed's accuracy, gap
   or share) have sample SD s; two S-seed means differ with SD s*sqrt(2/S). Under the paper's rerun noise one
   seed's value over n cases has SD sqrt(d/(2n)) (a gap: sqrt(d/n)), so (S-1) s^2 / that^2 is chi-square with S-1
   degrees of freedom; above its 99.9% point the seeds disagree more than the paper's reruns did, which is itself
   a finding ("your seeds disagree more than the paper's reruns did"): such a number is not *reproduced*, whatever
   its mean (harness.analysis.comparison.numbers). For the note-only arms the seed also moves the worked example
   and for the sampled arms it draws other samples, so their seeds are not reruns and no finding is drawn. For a
   statistic that is not a mean over seeds (an ICC, an effective sample size) the paper gives no rerun evidence:
   its tolerance is the printed rounding, the leave-one-seed-out jackknife spread reported beside it.

Tolerance = 1.96 * sd_paper + half a unit of the last digit the paper prints, rounded once to the decimals it is
shown with (two, or the paper's digits where it prints more): the number shown is the number used. A number that
holds by construction (the Gold-Solve library: no model, deterministic) has the rounding only; a count of rows has
the share's tolerance times the rows.

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
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from harness.analysis.comparison.ours import Stat
from harness.analysis.comparison.values import number, paper_seeds, setting

Z95 = 1.959964
Q_END = 0.025
PHI_Z = math.exp(-(Z95**2) / 2) / math.sqrt(2 * math.pi)  # normal density at the 97.5% quantile
AGREEMENT = "text:appendix:rerun-agreement"
RERUN_ACCURACIES = (
    ("table1:Blind Program-Solve:Qwen2.5-7B:impl", "text:appendix:covered-rerun#blind_7b", "7B"),
    ("table1:Blind Program-Solve:Qwen2.5-32B:impl", "text:appendix:covered-rerun#blind_32b", "32B"),
)
PAPER_32B = "Qwen2.5-32B-Instruct-AWQ"
EXCESS_P = 0.001  # a seed spread this unlikely under the paper's rerun noise is a finding
MIN_EXPECTED = 5  # departures a seed's cases must expect before its per-seed variance is read as normal


@dataclass(frozen=True)
class Spread:
    """The user's seed spread beside a tolerance, and whether the seeds disagree far more than the paper's reruns did.

    Under the paper's rerun noise (per-case-seed disagreement d between two runs) each seed's answer departs from
    the case's usual one with probability q, d = 2q(1-q). Two tests, either of which finds an excess (p < EXCESS_P):
    the per-seed values' variance against q(1-q)/n (chi-square with S-1 degrees of freedom; used where a seed's n
    cases expect at least MIN_EXPECTED departures, so the normal approximation holds), and the count of cells that
    depart from their case's majority against Binomial(cells, q) (exact; it holds at any n)."""

    sd_means: float  # SD (pp) of the difference of two S-seed means from the user's seeds
    sd_seed: float  # SD (pp) of the user's per-seed values
    sd_expected: float | None  # SD (pp) of one seed's value under the paper's rerun noise (None: no estimate)
    seeds: int
    reruns: bool  # whether the seeds are repeated runs of one setting (a finding can be drawn)
    q: float = 0.0  # a seed's departure probability under the paper's rerun noise
    rows_per_seed: float = 0.0  # the case rows one seed's value averages
    departures: int | None = None  # cells departing from their case's majority over the seeds (None: not counted)
    cells: int = 0

    @property
    def p_variance(self) -> float | None:
        if not self.sd_expected or self.seeds < 2 or self.rows_per_seed * self.q < MIN_EXPECTED:
            return None
        from scipy.stats import chi2  # at use: scipy.stats costs about 0.7 CPU-s to import

        return float(chi2.sf((self.seeds - 1) * (self.sd_seed / self.sd_expected) ** 2, self.seeds - 1))

    @property
    def p_departures(self) -> float | None:
        if self.departures is None or not self.cells or self.q <= 0:
            return None
        from scipy.stats import binom

        return float(binom.sf(self.departures - 1, self.cells, self.q))

    @property
    def excess(self) -> bool:
        """The seeds disagree more than the paper's reruns did (module docstring, class docstring)."""
        if not self.reruns:
            return False
        return any(p is not None and p < EXCESS_P for p in (self.p_variance, self.p_departures))

    def text(self) -> str:
        base = f"your {self.seeds} seeds' spread \u00b1{Z95 * self.sd_means:.2f} (reported, never added)"
        if not self.excess:
            return base
        found = []
        if self.p_variance is not None and self.p_variance < EXCESS_P:
            found.append(f"per-seed SD {self.sd_seed:.2f} against {self.sd_expected:.2f}")
        if self.p_departures is not None and self.p_departures < EXCESS_P:
            found.append(
                f"{self.departures:,} of {self.cells:,} case-seed cells depart from their case's other "
                f"seeds against {self.q * self.cells:.1f} expected"
            )
        return (
            base + f"; your seeds disagree more than the paper's reruns did ({'; '.join(found)}, from the "
            f"paper's rerun agreement; p < {EXCESS_P:g})"
        )


def departures(blocks: Iterable[np.ndarray]) -> tuple[int, int]:
    """(cells departing from their case's majority, cells) over [S, N] 0/1 blocks (NaN: no record): per case the
    smaller of its ones and zeros over the seeds it has."""
    dep = cells = 0
    for b in blocks:
        b = np.asarray(b, dtype=float)
        have = ~np.isnan(b)
        ones = np.nansum(b, axis=0)
        n = have.sum(axis=0)
        keep = n >= 2
        dep += int(np.minimum(ones, n - ones)[keep].sum())
        cells += int(n[keep].sum())
    return dep, cells


@dataclass(frozen=True)
class Tolerance:
    """The half-width a same-case rerun can move a number by, rounded once to `shown` decimals (the number shown is
    the number used), where it comes from, and the user's seed spread beside it."""

    half_width: float
    sd_paper: float | None
    rounding: float
    source: str
    shown: int = 2
    spread: Spread | None = None

    def text(self) -> str:
        return f"\u00b1{self.half_width:.{self.shown}f} ({self.source})"

    def units(self, value: float) -> int:
        """`value` in units of the last shown decimal: how verdicts compare a difference with the tolerance."""
        return int(round_half_up(value * 10**self.shown))


def round_half_up(x: float, digits: int = 0) -> float:
    """x rounded half away from zero to `digits` decimals (read as the decimal it prints as: 0.595 -> 0.60)."""
    q = Decimal(repr(x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return float(q)


def shown_decimals(digits: int) -> int:
    return max(int(digits), 2)


def tolerance(
    half: float, sd_paper: float | None, rounding: float, source: str, digits: int, spread: Spread | None = None
) -> Tolerance:
    """A Tolerance with its half-width rounded once to the decimals it is shown with."""
    shown = shown_decimals(digits)
    return Tolerance(round_half_up(half, shown), sd_paper, rounding, source, shown, spread)


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


def jackknife_sd(leave_one_out: Iterable[float | None]) -> float | None:
    """SD of the difference of two runs of a statistic, from its leave-one-seed-out values (None below two)."""
    v = np.asarray([x for x in leave_one_out if x is not None and not np.isnan(x)], dtype=float)
    if v.size < 2:
        return None
    se = math.sqrt((v.size - 1) / v.size * float(np.sum((v - v.mean()) ** 2)))
    return math.sqrt(2) * se


def rerun(digits: int, sd_paper: float | None, paper_source: str | None, spread: Spread | None = None) -> Tolerance:
    """1.96 x the paper's rerun SD, plus the rounding of the printed value; the user's spread beside it."""
    rounding = 0.5 * 10**-digits
    if sd_paper is None or np.isnan(sd_paper):
        return tolerance(rounding, None, rounding, "rounding only: no rerun estimate of the paper's", digits, spread)
    return tolerance(
        Z95 * sd_paper + rounding, sd_paper, rounding, f"{paper_source}, + {rounding:g} rounding", digits, spread
    )


def binomial_allowance(pct: float, n: int) -> float:
    """1.96 binomial SDs (pp) of a share `pct` (%) over n units: how far a rerun's share of n can move (an upper
    bound when the units differ in how likely they are)."""
    p = pct / 100
    return 100 * Z95 * math.sqrt(max(p * (1 - p), 1e-12) / max(n, 1))


def for_stat(paper_model: str | None, stat: Stat, digits: int, arms: int = 1, reruns: bool = True) -> Tolerance:
    """The rerun tolerance of one of the user's statistics (harness.analysis.comparison.ours.Stat: its case-seed
    rows, per-seed values and seeds) for a number the paper prints to `digits`; `arms`: 2 for a paired gap;
    `reruns`: whether the statistic's seeds are repeated runs of one setting (the spread finding applies)."""
    d, source = paper_disagreement(paper_model)
    return rerun(
        digits,
        flip_sd(d, stat.rows, arms) if stat.rows else None,
        f"the paper's {source}",
        spread_of(stat, d, arms, reruns),
    )


def spread_of(stat: Stat, d: float, arms: int, reruns: bool) -> Spread | None:
    """The user's seed spread of a statistic, against the paper's flip rate d (Spread)."""
    v = np.asarray([x for x in stat.per_seed if x is not None and not np.isnan(x)], dtype=float)
    if v.size < 2:
        return None
    q = (1 - math.sqrt(max(0.0, 1 - 2 * d))) / 2
    per_seed_rows = stat.rows / v.size if stat.rows else 0
    expected = 100 * math.sqrt(arms * q * (1 - q) / per_seed_rows) if per_seed_rows else None
    dep, cells = departures(stat.extra["cells"]) if stat.extra.get("cells") is not None else (None, 0)
    return Spread(
        float(v.std(ddof=1) * math.sqrt(2 / v.size)),
        float(v.std(ddof=1)),
        expected,
        int(v.size),
        reruns,
        q,
        per_seed_rows,
        dep,
        cells,
    )


def construction(digits: int) -> Tolerance:
    r = 0.5 * 10**-digits
    return tolerance(r, None, r, "holds by construction (no model): rounding only", digits)


def exact() -> Tolerance:
    return tolerance(0.0, None, 0.0, "exact", 0)


def no_result() -> Tolerance:
    """The tolerance column of a row with no result of the user's: none."""
    return Tolerance(float("nan"), None, 0.0, "no result", 2)


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
        out.append(
            {
                "model": label,
                "first": a["value"],
                "second": b["value"],
                "moved": abs(a["value"] - b["value"]),
                "half_width": half,
                "source": source,
                "lines": f"{a['line']}, {b['line']}",
            }
        )
    return out

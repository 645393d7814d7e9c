"""Beyond the paper: what the router tables (s20-s22, harness.analysis.tables.router) and the risk-coverage figure
(harness.analysis.figures) read from stored records: full router records, curves and declared comparisons.

* s20 (router summary): per model and router arm, coverage (answered share), accuracy on answered
  rows, full-set accuracy (abstentions counted wrong), route shares, and paired gaps against the
  matched single-program arm (Program-Solve / Blind Program-Solve) and against the Gold-first
  hybrid (Gold-Solve, else Program-Solve), each with its calculator-cluster 95% interval, on the
  analysis's shared bootstrap draws.
* s21 (risk-coverage): every point of the curve (library only, then m = k .. 1) with cluster
  bands, the program-only end (the matched single-program arm) and the AURC with its interval
  (harness.analysis.stats.risk_coverage).
* s22 (formula versions): for rows run at a non-benchmark formula version, accuracy against the
  benchmark gold and, in its own column, agreement with the "library-derived reference"; plus the
  Gold-Solve library's own change counts on the same dataset (harness.analysis.stats.version_effects).
* fig-risk-coverage: accuracy on answered rows against coverage, with bands, per model and arm.

These exist only when the results hold router arms (s20, s21, the figure) or non-benchmark
versions (s22); otherwise nothing is written and nothing is listed as omitted, so the paper's
tables and their index stay byte-identical.
"""

from __future__ import annotations

from collections.abc import Collection

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.families import Comparison
from harness.analysis.stats.risk_coverage import Curve, curve, level_rows, router_m
from harness.arms.registry import matched_arms, router_arms
from harness.run.record import Record

GOLD_FIRST = "hybrid:gold-first+program-solve"


def router_records(an: Analysis) -> list[Record]:
    """Router records of the analysed dataset (full records: the route provenance is needed)."""
    return an.records(*router_arms())


def matched_records(an: Analysis, c: Curve) -> list[Record]:
    """The full records of the single-program arm a router curve is compared with (its program-only end)."""
    return [r for r in an.records(matched_arms()[c.arm]) if r.model == c.model]


def router_comparisons(arms: Collection[str]) -> tuple[Comparison, ...]:
    out = []
    for arm in router_arms():
        if arm not in arms:
            continue
        out.append(Comparison(arm, matched_arms()[arm], "router", "same prompt family, single greedy program"))
        out.append(Comparison(arm, GOLD_FIRST, "router", "library first, then Program-Solve"))
    return tuple(out)


def curves(an: Analysis) -> list[Curve]:
    """The router curves of the analysis (one per model and router arm), computed once per analysis."""

    def compute() -> list[Curve]:
        rows = level_rows(router_records(an))
        return [
            curve(rows[key], resampler=None, draws=an.resampler.draws, seed=an.resampler.seed) for key in sorted(rows)
        ]

    return an.once("router curves", compute)


def default_m(an: Analysis, c: Curve) -> int:
    ms = {router_m(r) for r in router_records(an) if r.model == c.model and r.arm == c.arm}
    return ms.pop() if len(ms) == 1 else max(ms)


__all__ = ["GOLD_FIRST", "curves", "default_m", "matched_records", "router_comparisons", "router_records"]

"""Risk-coverage curves of the router arms, computed from their stored records (no model calls).

A router record (arms `routed-gold`, `routed-blind`) answers from the library, or from the value at
least m of its k sampled programs agree on, or abstains. Every record stores the k program outcomes
grouped into agreement clusters (largest first), so the answer the router WOULD give at any other
threshold m is known without new calls. Each (seed, case) row gets a confidence level:

    level k + 1   the library answered (route "library")
    level c       c = size of the largest agreement cluster of the k programs (1..k)
    level 0       no program returned a value (never answered at any threshold)

and a correctness: the library's answer, or the largest cluster's value, scored with the record's
scorer against the record's own gold. At threshold t the router answers every row with
level >= t. The curve's points run from "library only" (t = k + 1) through m = k, ..., 1; the
"program-only" end is a plain single-program arm's (answered share, accuracy on answered), given
separately (`single_arm_point`).

For each point: coverage = answered rows / rows; accuracy = correct answered rows / answered rows;
risk = 1 - accuracy; full-set accuracy = correct answered rows / rows (abstentions count wrong).

AURC (area under the risk-coverage curve): rows ranked by level (high first), ties in a random
order; the expected selective risk after the first i rows is E[errors among them] / i, and
AURC = (1 / rows) * sum over i = 1 .. answerable rows of that risk, i.e. the area under the
step curve over coverage [0, answerable share]. Inside a level group of n rows with e errors,
preceded by N rows with E errors, the sum is (E - N p)(H(N + n) - H(N)) + n p with p = e / n and H
the harmonic numbers, which is what `aurc` computes. Lower is better; a router whose every answer
is right has AURC 0.

Intervals: calculator-cluster bootstrap on the kit's shared `Resampler` (harness.analysis.stats.bootstrap):
every statistic of one curve is computed on the same draws of the arm's calculators (a calculator
brings all its cases and seeds), percentile 95%.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, Resampler, exact_matmul, percentile_interval
from harness.run.record import JSONValue, Record
from harness.scoring.scorers import score_value

ROUTES = ("library", "programs", "abstain")


class RiskCoverageError(ValueError):
    """Router records that cannot be turned into a curve; the message names the record."""


@dataclass
class LevelRows:
    """One (model, arm)'s rows as levels: everything a curve needs."""

    model: str
    arm: str
    k: int  # programs per case; levels run 0 .. k + 1
    case_ids: list[str]  # [N] distinct cases, grouped by calculator
    calculator_ids: np.ndarray  # [N]
    count: np.ndarray  # [k + 2, N] rows of each case at each level (seeds summed)
    correct: np.ndarray  # [k + 2, N] of those, rows whose would-be answer is correct
    routes: dict = field(default_factory=dict)  # route -> row count

    @property
    def n_rows(self) -> int:
        return int(self.count.sum())

    @property
    def cluster(self) -> np.ndarray:
        """[N] index of each case's calculator among the sorted distinct calculators."""
        return np.searchsorted(np.unique(self.calculator_ids), self.calculator_ids)


def row_level(record: Record) -> tuple[int, int, bool]:
    """(k, level, correct-if-answered) of one router record (module docstring)."""
    where = f"record {record.arm}/{record.case_id} seed {record.seed}"
    # the router's JSON provenance (harness.arms.solvers.router), read as the solver wrote it
    router: dict[str, Any] = router_detail(record)
    k = int(router["k"])
    route = router.get("route")
    if route not in ROUTES:
        raise RiskCoverageError(f"{where}: unknown route {route!r}; expected one of {ROUTES}")
    if route == "library":
        return k, k + 1, record.correct
    clusters = router.get("clusters") or []
    if not clusters:
        return k, 0, False
    top = clusters[0]
    count = int(top["count"])
    if not 1 <= count <= k:
        raise RiskCoverageError(f"{where}: top cluster count {count} outside 1..{k}")
    ok = bool(score_value(top["answer"], top["kind"], record.stated_gold(), record.scorer).correct)
    return k, count, ok


def level_rows(records: Iterable[Record]) -> dict[tuple[str, str], LevelRows]:
    """Group router records by (model, arm) into `LevelRows`."""
    grouped: dict[tuple[str, str], list[tuple[Record, tuple[int, int, bool]]]] = {}
    for rec in records:
        grouped.setdefault((rec.model, rec.arm), []).append((rec, row_level(rec)))
    out = {}
    for (model, arm), items in grouped.items():
        ks = {lv[0] for _, lv in items}
        if len(ks) != 1:
            raise RiskCoverageError(f"{model}/{arm}: records mix k values {sorted(ks)}; one curve needs one k")
        k = ks.pop()
        cases = sorted({(r.calculator_id, r.case_id) for r, _ in items}, key=lambda c: (c[0], _row_order(c[1])))
        index = {cid: i for i, (_, cid) in enumerate(cases)}
        count = np.zeros((k + 2, len(cases)), dtype=np.int64)
        correct = np.zeros_like(count)
        routes = dict.fromkeys(ROUTES, 0)
        for rec, (_, level, ok) in items:
            j = index[rec.case_id]
            count[level, j] += 1
            correct[level, j] += int(ok)
            routes[router_route(rec)] += 1
        out[(model, arm)] = LevelRows(
            model,
            arm,
            k,
            [c for _, c in cases],
            np.array([c for c, _ in cases], dtype=np.int64),
            count,
            correct,
            routes,
        )
    return out


def router_detail(rec: Record) -> dict[str, JSONValue]:
    """A router record's provenance (`detail.router`: harness.arms.solvers.router); RiskCoverageError without."""
    router = rec.detail.get("router") if rec.detail is not None else None
    if not isinstance(router, dict):
        raise RiskCoverageError(
            f"record {rec.arm}/{rec.case_id} seed {rec.seed}: no detail.router provenance (not a router record)"
        )
    return router


def router_route(rec: Record) -> str:
    return str(router_detail(rec)["route"])


def router_m(rec: Record) -> int:
    m = router_detail(rec)["m"]
    if not isinstance(m, int):
        raise RiskCoverageError(f"record {rec.arm}/{rec.case_id} seed {rec.seed}: detail.router.m is {m!r}")
    return m


def _row_order(case_id: str) -> tuple:
    tail = case_id.rsplit("-", 1)[-1]
    return (0, int(tail), case_id) if tail.isdigit() else (1, 0, case_id)


def thresholds(k: int) -> list[tuple[str, int]]:
    """(label, minimum level) of every curve point, most selective first."""
    return [("library only", k + 1)] + [(f"m={m}", m) for m in range(k, 0, -1)]


# ---- point statistics on (possibly resampled) group totals -------------------------------------------


def _harmonic(n_max: int) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n_max + 1))])


def aurc_from_groups(n: np.ndarray, e: np.ndarray, harmonic: np.ndarray | None = None) -> np.ndarray:
    """AURC from level-group totals. n, e: [G, ...] rows and errors per level group, most confident
    group first, the never-answered rows NOT included; `total` rows (answerable + never answered) is
    passed as the last group with e = 0 and is only counted in the denominator. Returns [...]."""
    n = np.asarray(n, dtype=np.float64)
    e = np.asarray(e, dtype=np.float64)
    answerable_n, never = n[:-1], n[-1]
    total = answerable_n.sum(axis=0) + never
    if harmonic is None:
        harmonic = _harmonic(int(np.max(total, initial=0)))
    before_n = np.zeros_like(total)
    before_e = np.zeros_like(total)
    area = np.zeros_like(total)
    for g in range(answerable_n.shape[0]):
        ng, eg = answerable_n[g], e[g]
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(ng > 0, eg / np.where(ng > 0, ng, 1), 0.0)
        h_hi = harmonic[(before_n + ng).astype(np.int64)]
        h_lo = harmonic[before_n.astype(np.int64)]
        area += (before_e - before_n * p) * (h_hi - h_lo) + ng * p
        before_n += ng
        before_e += eg
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(before_n > 0, area / np.where(total > 0, total, 1), np.nan)


@dataclass
class CurvePoint:
    label: str
    min_level: int
    coverage: float
    accuracy: float  # on answered rows
    full_accuracy: float  # abstentions counted wrong
    coverage_ci: tuple[float, float]
    accuracy_ci: tuple[float, float]
    full_accuracy_ci: tuple[float, float]

    @property
    def risk(self) -> float:
        return 1.0 - self.accuracy

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "min_level": self.min_level,
            "coverage": self.coverage,
            "accuracy": self.accuracy,
            "risk": self.risk,
            "full_accuracy": self.full_accuracy,
            "coverage_ci": list(self.coverage_ci),
            "accuracy_ci": list(self.accuracy_ci),
            "full_accuracy_ci": list(self.full_accuracy_ci),
        }


@dataclass
class Curve:
    model: str
    arm: str
    k: int
    n_rows: int
    n_cases: int
    n_calculators: int
    points: list[CurvePoint]
    aurc: float
    aurc_ci: tuple[float, float]
    routes: dict
    resampler: dict

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "arm": self.arm,
            "k": self.k,
            "n_rows": self.n_rows,
            "n_cases": self.n_cases,
            "n_calculators": self.n_calculators,
            "aurc": self.aurc,
            "aurc_ci": list(self.aurc_ci),
            "routes": dict(self.routes),
            "points": [p.to_dict() for p in self.points],
            "resampler": self.resampler,
        }


def _cumulative(rows: LevelRows) -> tuple[np.ndarray, np.ndarray]:
    """[k + 2, N] rows answered / answered correctly at minimum level t = index (t = 0 .. k + 1)."""
    answered = np.cumsum(rows.count[::-1], axis=0)[::-1]
    correct = np.cumsum(rows.correct[::-1], axis=0)[::-1]
    return answered, correct


def curve(
    rows: LevelRows, *, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED, resampler: Resampler | None = None
) -> Curve:
    """The risk-coverage curve of one (model, router arm) with cluster-bootstrap bands and AURC."""
    k = rows.k
    cluster = rows.cluster
    rs = resampler if resampler is not None else Resampler(cluster, draws=draws, seed=seed)
    if rs.n_cases != cluster.size or not np.array_equal(rs.cluster, cluster):
        raise RiskCoverageError(f"{rows.model}/{rows.arm}: the resampler's clusters do not match the curve's cases")
    onehot = np.zeros((cluster.size, rs.n_clusters))
    onehot[np.arange(cluster.size), cluster] = 1.0
    answered, correct = _cumulative(rows)
    present = rows.count.sum(axis=0)
    # per-calculator totals: [T, C]
    levels = [t for _, t in thresholds(k)]
    ans_c = answered[levels] @ onehot
    cor_c = correct[levels] @ onehot
    pres_c = present @ onehot
    units = np.flatnonzero(pres_c > 0)
    w = rs.subset_counts("cluster", units)  # [B, U]
    top = float(units.size)
    ans_b = exact_matmul(w, ans_c[:, units].T, top)  # [B, T]
    cor_b = exact_matmul(w, cor_c[:, units].T, top)
    pres_b = exact_matmul(w, pres_c[units][:, None], top)[:, 0]  # [B]
    with np.errstate(invalid="ignore", divide="ignore"):
        cov_b = ans_b / pres_b[:, None]
        acc_b = cor_b / ans_b
        full_b = cor_b / pres_b[:, None]
    tot_p = float(present.sum())
    points = []
    for j, (label, t) in enumerate(thresholds(k)):
        a, c = float(answered[t].sum()), float(correct[t].sum())
        cov_ci = percentile_interval(cov_b[:, j])[:, 0]
        acc_ci = _nan_percentile(acc_b[:, j])
        full_ci = percentile_interval(full_b[:, j])[:, 0]
        points.append(
            CurvePoint(
                label,
                t,
                a / tot_p,
                c / a if a else float("nan"),
                c / tot_p,
                _interval(cov_ci),
                acc_ci,
                _interval(full_ci),
            )
        )
    # AURC: groups k+1, k, ..., 1, then the never-answered rows (level 0).
    group_levels = list(range(k + 1, 0, -1))
    n_c = rows.count[group_levels] @ onehot  # [G, C]
    e_c = (rows.count - rows.correct)[group_levels] @ onehot
    never_c = rows.count[0] @ onehot
    n_groups = np.vstack([n_c, never_c[None]])
    e_groups = np.vstack([e_c, np.zeros((1, rs.n_clusters))])
    point = float(aurc_from_groups(n_groups.sum(axis=1), e_groups.sum(axis=1)))
    n_b = exact_matmul(w, n_groups[:, units].T, top).T  # [G+1, B]
    e_b = exact_matmul(w, e_groups[:, units].T, top).T
    harmonic = _harmonic(int(np.max(n_b.sum(axis=0), initial=0)))
    aurc_b = aurc_from_groups(np.rint(n_b), np.rint(e_b), harmonic)
    aurc_ci = _nan_percentile(aurc_b)
    return Curve(
        rows.model,
        rows.arm,
        k,
        rows.n_rows,
        int(cluster.size),
        int(units.size),
        points,
        point,
        aurc_ci,
        dict(rows.routes),
        rs.describe(),
    )


def _interval(ci: np.ndarray) -> tuple[float, float]:
    """A [2] percentile interval as a (low, high) pair of floats."""
    lo, hi = ci
    return (float(lo), float(hi))


def _nan_percentile(values: np.ndarray) -> tuple[float, float]:
    """Percentile interval over the draws where the statistic exists (a draw with no answered row has
    no accuracy); NaN when none does."""
    values = np.asarray(values, dtype=np.float64)
    ok = values[~np.isnan(values)]
    if ok.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = percentile_interval(ok)[:, 0]
    return (float(lo), float(hi))


def single_arm_point(records: Iterable[Record], label: str) -> dict:
    """(coverage, accuracy on answered, full-set accuracy) of a plain arm's records: the
    "program-only" end of a router curve (Program-Solve for routed-gold, Blind for routed-blind)."""
    n = answered = correct = 0
    for rec in records:
        n += 1
        if rec.outcome == "answered":
            answered += 1
            correct += int(rec.correct)
    if n == 0:
        raise RiskCoverageError(f"{label}: no records")
    return {
        "label": label,
        "coverage": answered / n,
        "accuracy": correct / answered if answered else float("nan"),
        "full_accuracy": correct / n,
        "n_rows": n,
    }


__all__ = [
    "ROUTES",
    "Curve",
    "CurvePoint",
    "LevelRows",
    "RiskCoverageError",
    "aurc_from_groups",
    "curve",
    "level_rows",
    "router_detail",
    "router_m",
    "router_route",
    "row_level",
    "single_arm_point",
    "thresholds",
]

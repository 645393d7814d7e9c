"""Risk-coverage curves of router records against independent computations on synthetic records.

The records here are synthetic (model "synthetic/router", dataset "synthetic") and can never be
mistaken for results: they exist to give a curve whose every point is known in advance.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from harness.analysis.stats.bootstrap import Resampler, percentile_interval
from harness.analysis.stats.risk_coverage import (
    RiskCoverageError,
    aurc_from_groups,
    curve,
    level_rows,
    row_level,
    single_arm_point,
    thresholds,
)
from harness.run.record import Record, StoredGold
from tests.records import record

GOLD = 10
WRONG = 99


def synthetic_router_record(
    calc: int,
    row: int,
    seed: int,
    *,
    route: str,
    k: int = 5,
    top: int = 0,
    top_right: bool = False,
    library_right: bool = True,
    arm: str = "routed-gold",
) -> Record:
    """One synthetic router record. route library: the library answered (right or not); otherwise the
    k programs' largest agreement cluster has `top` members holding the right or a wrong value."""
    clusters = []
    if route != "library" and top > 0:
        clusters = [{"answer": GOLD if top_right else WRONG, "kind": "number", "count": top, "first": 0}]
        rest = k - top
        if rest:
            clusters.append({"answer": WRONG + 1, "kind": "number", "count": min(rest, top), "first": top})
    m = 3
    if route == "library":
        answer, correct, outcome = (GOLD if library_right else WRONG), library_right, "answered"
    elif top >= m:
        answer, correct, outcome = clusters[0]["answer"], top_right, "answered"
        route = "programs"
    else:
        answer, correct, outcome, route = None, False, "abstained", "abstain"
    return record(
        key=f"{arm}|{seed}|{calc}-{row}",
        model="synthetic/router",
        arm=arm,
        seed=seed,
        dataset="synthetic",
        synthetic=True,
        case_id=f"{calc}-{row}",
        calculator_id=calc,
        output_type="integer",
        scorer="paper",
        gold={"answer": str(GOLD), "lower": str(GOLD), "upper": str(GOLD)},
        answer=answer,
        answer_kind="number" if answer is not None else None,
        outcome=outcome,
        correct=correct,
        detail={"router": {"route": route, "k": k, "m": m, "clusters": clusters}},
    )


# calculator -> list of (route, top, top_right, library_right) per row; one seed
DESIGN = {
    1: [("library", 0, False, True)] * 3 + [("library", 0, False, False)],  # 4 library rows, 1 wrong
    2: [("p", 5, True, True), ("p", 5, False, True), ("p", 4, True, True), ("p", 3, True, True)],
    3: [("p", 3, False, True), ("p", 2, True, True), ("p", 1, True, True), ("p", 0, False, True)],
    4: [("p", 2, False, True), ("p", 1, False, True)],
}


def design_records(seeds=(42,)) -> list[dict]:
    out = []
    for seed in seeds:
        for calc, rows in DESIGN.items():
            for i, (route, top, top_right, lib_right) in enumerate(rows, start=1):
                out.append(
                    synthetic_router_record(
                        calc,
                        i,
                        seed,
                        route="library" if route == "library" else "p",
                        top=top,
                        top_right=top_right,
                        library_right=lib_right,
                    )
                )
    return out


def brute_point(records, min_level):
    """Coverage, accuracy and full accuracy by plain loops over (level, correct) pairs."""
    levels = [row_level(r)[1:] for r in records]
    answered = [ok for lv, ok in levels if lv >= min_level]
    return (
        len(answered) / len(levels),
        (sum(answered) / len(answered)) if answered else math.nan,
        sum(answered) / len(levels),
    )


def brute_aurc(pairs):
    """AURC by averaging the discrete area over EVERY order of the rows that respects the levels."""
    pairs = sorted(pairs, key=lambda p: -p[0])
    groups = [list(g) for _, g in itertools.groupby(pairs, key=lambda p: p[0])]
    total = len(pairs)
    answerable = [g for g in groups if g[0][0] > 0]
    areas = []
    for orders in itertools.product(*(itertools.permutations(g) for g in answerable)):
        seq = [p for grp in orders for p in grp]
        errors, area = 0, 0.0
        for i, (_, ok) in enumerate(seq, start=1):
            errors += 0 if ok else 1
            area += errors / i
        areas.append(area / total)
    return sum(areas) / len(areas)


def test_known_curve_points_by_hand():
    rows = level_rows(design_records())[("synthetic/router", "routed-gold")]
    c = curve(rows, draws=200, seed=1)
    got = {p.label: (p.coverage, p.accuracy, p.full_accuracy) for p in c.points}
    # 14 rows. Library: 4 rows, 3 right. Levels of program rows: 5,5,4,3 | 3,2,1,0 | 2,1 with
    # would-be correctness R,W,R,R | W,R,R,- | W,W.
    expected = {
        "library only": (4 / 14, 3 / 4, 3 / 14),
        "m=5": (6 / 14, 4 / 6, 4 / 14),
        "m=4": (7 / 14, 5 / 7, 5 / 14),
        "m=3": (9 / 14, 6 / 9, 6 / 14),
        "m=2": (11 / 14, 7 / 11, 7 / 14),
        "m=1": (13 / 14, 8 / 13, 8 / 14),
    }
    assert list(got) == [label for label, _ in thresholds(5)]
    for label, want in expected.items():
        assert got[label] == pytest.approx(want, abs=1e-12), label
    assert c.routes == {"library": 4, "programs": 5, "abstain": 5}
    assert c.n_rows == 14 and c.n_cases == 14 and c.n_calculators == 4


def test_aurc_matches_exhaustive_tie_orders():
    recs = design_records()
    small = [r for r in recs if r.calculator_id in (1, 3, 4)]  # 10 rows, ties of size <= 4
    pairs = [row_level(r)[1:] for r in small]
    rows = level_rows(small)[("synthetic/router", "routed-gold")]
    c = curve(rows, draws=50, seed=3)
    assert c.aurc == pytest.approx(brute_aurc(pairs), abs=1e-12)


def test_aurc_hand_value():
    # two right library rows, one wrong program row at level 5, one never answered: (0/1 + 0/2 + 1/3) / 4
    n = np.array([2, 1, 0, 0, 0, 0, 1])  # levels 6..1, then never answered
    e = np.array([0, 1, 0, 0, 0, 0, 0])
    assert float(aurc_from_groups(n, e)) == pytest.approx(1 / 12, abs=1e-15)
    # all right -> 0; nothing answerable -> NaN
    assert float(aurc_from_groups(np.array([3, 0]), np.array([0, 0]))) == 0.0
    assert math.isnan(float(aurc_from_groups(np.array([0, 2]), np.array([0, 0]))))


def test_bands_match_an_independent_resampling_loop():
    recs = design_records(seeds=(42, 43))
    rows = level_rows(recs)[("synthetic/router", "routed-gold")]
    draws = 300
    rs = Resampler(rows.cluster, draws=draws, seed=11)
    c = curve(rows, resampler=rs)
    # Independent: per draw, repeat each calculator's rows by its multiplicity and recount by loops.
    calcs = sorted(DESIGN)
    by_calc = {calc: [row_level(r)[1:] for r in recs if r.calculator_id == calc] for calc in calcs}
    w = rs.subset_counts("cluster", np.arange(len(calcs)))
    cov = {label: [] for label, _ in thresholds(5)}
    acc = {label: [] for label, _ in thresholds(5)}
    aurcs = []
    for b in range(draws):
        pairs = [p for j, calc in enumerate(calcs) for _ in range(int(w[b, j])) for p in by_calc[calc]]
        for label, t in thresholds(5):
            ans = [ok for lv, ok in pairs if lv >= t]
            cov[label].append(len(ans) / len(pairs))
            acc[label].append(sum(ans) / len(ans) if ans else math.nan)
        aurcs.append(_loop_aurc(pairs))
    for p in c.points:
        assert p.coverage_ci == pytest.approx(tuple(percentile_interval(np.array(cov[p.label]))[:, 0]), abs=1e-12)
        ok = np.array([a for a in acc[p.label] if not math.isnan(a)])
        assert p.accuracy_ci == pytest.approx(tuple(percentile_interval(ok)[:, 0]), abs=1e-12)
        assert p.coverage_ci[0] <= p.coverage <= p.coverage_ci[1]
    assert c.aurc_ci == pytest.approx(tuple(percentile_interval(np.array(aurcs))[:, 0]), abs=1e-12)
    assert c.aurc_ci[0] <= c.aurc <= c.aurc_ci[1]


def _loop_aurc(pairs):
    """Expected area rank by rank (random order inside a level), by an explicit loop."""
    pairs = sorted(pairs, key=lambda p: -p[0])
    total = len(pairs)
    area, i = 0.0, 0
    errors_before = 0
    for level, grp in itertools.groupby(pairs, key=lambda p: p[0]):
        grp = list(grp)
        if level == 0:
            break
        p_err = sum(1 for _, ok in grp if not ok) / len(grp)
        for j in range(1, len(grp) + 1):
            area += (errors_before + j * p_err) / (i + j)
        i += len(grp)
        errors_before += sum(1 for _, ok in grp if not ok)
    return area / total


def test_top_cluster_is_rescored_against_the_record_gold():
    rec = synthetic_router_record(2, 1, 42, route="p", top=2, top_right=True)
    assert row_level(rec) == (5, 2, True)
    rec = dataclasses.replace(rec, gold=StoredGold("11", "11", "11"))
    assert row_level(rec) == (5, 2, False)


def test_bad_records_are_named():
    rec = synthetic_router_record(2, 1, 42, route="p", top=2)
    assert rec.detail is not None
    rec = dataclasses.replace(rec, detail={k: v for k, v in rec.detail.items() if k != "router"})  # type: ignore[arg-type]
    with pytest.raises(RiskCoverageError, match="routed-gold/2-1 seed 42: no detail.router"):
        row_level(rec)
    a = synthetic_router_record(2, 1, 42, route="p", top=2)
    b = synthetic_router_record(2, 2, 42, route="p", top=2, k=7)
    with pytest.raises(RiskCoverageError, match="mix k values"):
        level_rows([a, b])


def test_single_arm_point_counts_abstentions():
    recs = [
        record(outcome="answered", correct=True),
        record(outcome="answered", correct=False),
        record(outcome="raised_error", correct=False),
        record(outcome="answered", correct=True),
    ]
    pt = single_arm_point(recs, "program-solve")
    assert (pt["coverage"], pt["accuracy"], pt["full_accuracy"]) == (0.75, 2 / 3, 0.5)

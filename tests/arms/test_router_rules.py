"""The router's agreement clusters and program decision."""

from __future__ import annotations

import pytest

from harness.arms.solvers.router import (
    ROUTE_ABSTAIN,
    ROUTE_PROGRAMS,
    agreement_clusters,
    agrees,
    check_k_m,
    decide_programs,
)


def test_decimal_agreement_uses_the_benchmark_tolerance():
    assert agrees(104.9, "number", 100.0, "number", "decimal")
    assert not agrees(105.1, "number", 100.0, "number", "decimal")
    assert not agrees(101, "number", 100, "number", "integer")
    assert agrees(7.0, "number", 7, "number", "integer")
    assert agrees("2020-01-02", "date", "2020-01-02", "date", "date")
    assert not agrees([40, 1], "weeks_days", [40, 2], "weeks_days", "weeks_days")
    assert not agrees(3, "number", "2020-01-02", "date", "date")


def test_clusters_are_sorted_by_size_then_first_seen():
    vals = [(0, 10.0, "number"), (1, 50.0, "number"), (2, 10.3, "number"), (3, 50.1, "number"), (4, 80.0, "number")]
    cl = agreement_clusters(vals, "decimal")
    assert [(c.answer, c.count, c.first, c.members) for c in cl] == [
        (10.0, 2, 0, [0, 2]),
        (50.0, 2, 1, [1, 3]),
        (80.0, 1, 4, [4]),
    ]
    # integers: 10 and 10.3 do not agree
    cl = agreement_clusters(vals, "integer")
    assert [c.count for c in cl] == [1, 1, 1, 1, 1]


def test_decision_needs_m_of_k():
    vals = [(0, 7, "number"), (1, 7, "number"), (2, 9, "number"), (3, 7, "number")]
    cl = agreement_clusters(vals, "integer")
    d = decide_programs(cl, k=5, m=3)
    assert (d.route, d.answer, d.agreeing, d.chosen) == (ROUTE_PROGRAMS, 7, 3, 0)
    d = decide_programs(cl, k=5, m=4)
    assert d.route == ROUTE_ABSTAIN and d.answer is None and d.agreeing == 3
    assert "at least 4 of 5" in d.reason and "largest agreement 3" in d.reason
    d = decide_programs([], k=5, m=3)
    assert d.route == ROUTE_ABSTAIN and d.agreeing == 0 and "none of the 5" in d.reason


def test_k_m_bounds():
    check_k_m(5, 3)
    with pytest.raises(ValueError, match="between 1 and k=5"):
        check_k_m(5, 6)
    with pytest.raises(ValueError, match="at least 1"):
        check_k_m(0, 1)

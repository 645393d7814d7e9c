"""The rehearsal's per-arm rates (bench/rehearsal.py): busy seconds share each moment among the arms in flight, so
they add up to the time anything ran under either request order, equal an arm's wall when the arms run one after
another (the figure the targets always judged), and a case-major run no longer divides each arm's requests by a
wall that spans the whole run. Generated interval sets (hypothesis), not only the examples written down."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.rehearsal import arm_busy_s, request_rates

ARMS = ("program-solve", "blind", "open-book", "note-only")  # two program arms, two reply arms


def union_s(spans) -> float:
    """Seconds covered by at least one span."""
    total, end = 0.0, None
    for b, e in sorted(spans):
        if end is None or b > end:
            total += e - b
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


spans = st.lists(
    st.tuples(st.floats(0, 1000, allow_nan=False), st.floats(0, 50, allow_nan=False)).map(
        lambda t: (t[0], t[0] + t[1])
    ),
    min_size=1,
    max_size=25,
)
interval_sets = st.dictionaries(st.sampled_from(ARMS), spans, min_size=1)


@settings(max_examples=300, deadline=None)
@given(interval_sets)
def test_busy_seconds_add_up_to_the_time_anything_ran(intervals):
    busy = arm_busy_s(intervals)
    assert set(busy) == set(intervals) and all(v >= 0 for v in busy.values())
    everything = [s for v in intervals.values() for s in v]
    assert sum(busy.values()) == pytest.approx(union_s(everything), abs=1e-6 * len(everything) + 1e-2)
    for arm, v in intervals.items():  # never more than the arm's own wall
        assert busy[arm] <= union_s(v) + 1e-2


@settings(max_examples=200, deadline=None)
@given(st.lists(spans, min_size=1, max_size=len(ARMS)))
def test_arms_run_one_after_another_get_their_own_walls(per_arm):
    """Arm-major: each arm's spans shifted past the previous arm's end; its busy seconds are its wall."""
    intervals, offset = {}, 0.0
    for arm, arm_spans in zip(ARMS, per_arm):
        shifted = [(b + offset, e + offset) for b, e in arm_spans]
        intervals[arm] = shifted
        offset = max(e for _, e in shifted) + 1.0
    busy = arm_busy_s(intervals)
    for arm, v in intervals.items():
        assert busy[arm] == pytest.approx(union_s(v), abs=1e-2)


def test_case_major_shares_the_common_wall_by_cases_in_flight():
    # 100 s, both arms in flight throughout; program-solve holds 3 of the 4 case slots
    intervals = {"program-solve": [(0.0, 100.0)] * 3, "open-book": [(0.0, 100.0)]}
    assert arm_busy_s(intervals) == {"program-solve": 75.0, "open-book": 25.0}


def test_the_rates_divide_by_busy_seconds_and_keep_the_overlapping_walls_beside():
    counts = {"requests": {"program": 600, "other": 100}, "programs": 500}
    busy = {"program-solve": 40.0, "blind": 20.0, "open-book": 10.0}
    walls = {"program-solve": 70.0, "blind": 70.0, "open-book": 70.0}  # case-major: every wall is the run
    rates = request_rates(counts, busy, walls)
    assert rates["program_requests_per_s"] == 10.0 and rates["other_requests_per_s"] == 10.0
    assert rates["executor_programs_per_s"] == round(500 / 60, 1)
    assert (rates["program_arms_busy_s"], rates["program_arms_wall_s"]) == (60.0, 140.0)
    assert (rates["other_arms_busy_s"], rates["other_arms_wall_s"]) == (10.0, 70.0)
    assert request_rates(counts, {}, {})["program_requests_per_s"] is None

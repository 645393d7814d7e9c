"""The CPU demo's case rule on the real bundled slice: the shortest note of each calculator,
calculators round-robin over the categories (checked against a computation from the CSV itself)."""

from __future__ import annotations

import csv

from harness.data.dataset import load_dataset
from harness.run.case_selection import spread_across_calculators
from tests.conftest import ROOT


def test_spread_picks_shortest_note_per_calculator_round_robin_over_categories():
    with open(ROOT / "harness" / "data" / "test_slice.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    words = lambda r: len(r["Patient Note"].split())  # noqa: E731
    case_id = lambda r: f"{r['Calculator ID']}-{r['Row Number']}"  # noqa: E731
    shortest = {}
    for r in rows:
        cid = r["Calculator ID"]
        if cid not in shortest or (words(r), case_id(r)) < (words(shortest[cid]), case_id(shortest[cid])):
            shortest[cid] = r
    ordered = sorted(shortest.values(), key=lambda r: (words(r), case_id(r)))
    categories = list(dict.fromkeys(r["Category"] for r in ordered))
    queues = {c: [r for r in ordered if r["Category"] == c] for c in categories}
    expected = []
    while len(expected) < 8:
        for c in categories:
            if queues[c] and len(expected) < 8:
                expected.append(case_id(queues[c].pop(0)))

    picked = spread_across_calculators(load_dataset("bundled-test").cases, 8)
    assert [c.case_id for c in picked] == expected
    assert len({c.calculator_id for c in picked}) == 8
    assert {c.category for c in picked} == set(categories)  # every category of the slice (7) appears
    everyone = spread_across_calculators(load_dataset("bundled-test").cases)
    assert len(everyone) == len(shortest) == 55

"""Case selection rules for small (CPU) runs, stated so a reader can reproduce the pick.

`spread_across_calculators(cases, limit)`: the shortest note (fewest words; ties by case id) of each
calculator, calculators taken round-robin over the benchmark's categories (lab, physical, risk,
severity, diagnosis, date, dosage). Categories are visited in the order of their shortest note, and
within a category calculators in the order of their shortest note. So `limit` cases come from
`limit` different calculators whenever the set has that many, and from every category once before
any category gives a second. This is the CPU demo's rule; it replaces "the N shortest notes", which
on the bundled slice are all date and gestational-age templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _words(case: Any) -> int:
    return len(case.note.split())


def spread_across_calculators(cases: Sequence[Any], limit: int | None = None) -> list[Any]:
    """Shortest-note case of each calculator, round-robin over categories (see the module docstring)."""
    shortest: dict[int, Any] = {}
    for case in cases:
        best = shortest.get(case.calculator_id)
        if best is None or (_words(case), case.case_id) < (_words(best), best.case_id):
            shortest[case.calculator_id] = case
    by_category: dict[str, list[Any]] = {}
    for case in sorted(shortest.values(), key=lambda c: (_words(c), c.case_id)):
        by_category.setdefault(case.category, []).append(case)
    queues = list(by_category.values())  # dict order = order of each category's shortest note
    picked: list[Any] = []
    while any(queues) and (limit is None or len(picked) < limit):
        for queue in queues:
            if queue and (limit is None or len(picked) < limit):
                picked.append(queue.pop(0))
    return picked

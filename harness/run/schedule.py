"""The order a run issues its (arm, seed, case) items in: which item takes the next free case slot.

A run's items are its (arm, seed) units' (case, record key) pairs (harness.run.runner.planned_units). The order is
no part of any record: a record is a function of its (arm, seed, case), the configuration and the server's replies,
and each unit still writes its own results file. What the order decides is which requests are on the model server
together, and so what vLLM's prefix cache can reuse: a case's note is sent by up to 18 arms x 5 seeds, and a greedy
arm's five seeds send the same request.

    arm-major    the kit's order until issue 36: arms one after another (an arm starts when the previous one has
                 finished); within an arm the seeds' items queue seed after seed, each seed's cases in that seed's
                 order (case_order). A case's requests under one arm come back a seed's whole pass later.
    case-major   one queue: case after case (the first seed's case order), and within a case every arm that runs it,
                 in the run's arm order, seed after seed. All requests about one note reach the server within about
                 one concurrency window.

`phases(units, order)` is the run's units and items as phases, the items in issue order; a phase starts when the
previous one has finished. DEFAULT_ORDER is the order `harness run` and `make reproduce` use unless told otherwise,
chosen by
measurement: `python -m bench gpu-hours` (docs/bench-gpu-hours.json) counts the real vLLM engine's prefix-cache
hits under both orders.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, cast, get_args

ARM_MAJOR: Final = "arm-major"
CASE_MAJOR: Final = "case-major"
Order = Literal["arm-major", "case-major"]  # the manifests' type of an order: the two above
ORDERS: tuple[str, ...] = get_args(Order)
assert ORDERS == (ARM_MAJOR, CASE_MAJOR)
DEFAULT_ORDER: Order = CASE_MAJOR  # docs/bench-gpu-hours.json: fewer prompt tokens computed on the real engine


def case_rank(seed: int, case_id: str) -> str:
    """A case's place in a seed's case order (ascending)."""
    return hashlib.sha256(f"{seed}:{case_id}".encode()).hexdigest()


def case_order(cases: Iterable[Any], seed: int) -> list[Any]:
    """The seed's case order: ascending sha256("{seed}:{case_id}")."""
    return sorted(cases, key=lambda c: case_rank(seed, c.case_id))


def file_order(order: str, seeds: Sequence[int]) -> Callable[[int, str], str]:
    """The order a run sends the cases of one results file (one arm at one seed) in, as a key of (seed, case id):
    arm-major, the file's own seed's case order; case-major, the run's first seed's (every arm and seed of a case
    go out together). With one case in flight the file holds its records in this order; `harness merge` writes a
    merged file in it, so a sharded run's files equal the one-box run's."""
    check_order(order)
    if order == CASE_MAJOR:
        first = int(seeds[0])
        return lambda seed, case_id: case_rank(first, case_id)
    return case_rank


@dataclass(frozen=True)
class Item:
    """One (arm, seed, case) of a run: `unit` indexes the run's units (planned_units order)."""

    unit: int
    case: Any  # a harness.data.dataset.Case
    key: str


@dataclass(frozen=True)
class Phase:
    """Units that run together (indices into the run's units, in their order) and their items in issue order."""

    units: tuple[int, ...]
    items: tuple[Item, ...]


def check_order(order: str) -> Order:
    if order not in ORDERS:
        raise ValueError(f"unknown request order {order!r}: one of {', '.join(ORDERS)}")
    return cast(Order, order)


class ScheduledUnit(Protocol):
    """What the schedule reads of a run's unit (harness.run.runner.Unit): its arm, seed and (case, key) items."""

    @property
    def arm(self) -> object: ...

    @property
    def seed(self) -> int: ...

    @property
    def todo(self) -> Sequence[tuple[Any, str]]: ...


def phases(units: Sequence[ScheduledUnit], order: str) -> list[Phase]:
    """`units` (as harness.run.runner.planned_units gives them: arm by arm, seed by seed, each unit's items in its
    seed's case order) as phases run one after another (module docstring)."""
    check_order(order)
    items = [[Item(i, case, key) for case, key in unit.todo] for i, unit in enumerate(units)]
    if order == ARM_MAJOR:  # one phase per arm, its seeds' items seed after seed
        groups: list[list[int]] = []
        for i, unit in enumerate(units):
            if i == 0 or unit.arm is not units[i - 1].arm:
                groups.append([])
            groups[-1].append(i)
        return [Phase(tuple(g), tuple(it for i in g for it in items[i])) for g in groups]
    if not units:
        return []
    every_case = {it.case.case_id: it.case for unit_items in items for it in unit_items}
    rank = {c.case_id: n for n, c in enumerate(case_order(every_case.values(), units[0].seed))}
    # a stable sort by case keeps the units' own order (arm, then seed) inside each case
    ordered = sorted((it for unit_items in items for it in unit_items), key=lambda it: rank[it.case.case_id])
    return [Phase(tuple(range(len(units))), tuple(ordered))]

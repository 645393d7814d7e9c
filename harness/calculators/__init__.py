"""The hand-written calculator library used by the Extract-Solve and Gold-Solve arms.

``LIBRARY`` maps MedCalc-Bench Calculator IDs to the 22 calculators the arms may call; every other
calculator makes those arms abstain. ``IMPLEMENTED`` holds every hand-written calculator (the 22 plus
the other ten non-score lab/physical/date calculators, written and tested the same way but kept out
of the arms so coverage matches the paper's 22 x 20 = 440 cases). Which 22 and why: docs/LIBRARY.md.

    from harness.calculators import LIBRARY, Calculator, LibraryAbstain, solve_gold
    calc = LIBRARY[2]
    calc.compute(**calc.from_entities(case.entities))   # == solve_gold(case)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.core import units
from harness.core.units import EXACT, Convention

from . import dates, lab, physical
from .base import Calculator, LibraryAbstain, Variable, parse_date, parse_sex
from .versions import coefficient_calculator, provenance, version_of

__all__ = [
    "IMPLEMENTED",
    "LIBRARY",
    "LIBRARY_IDS",
    "Calculator",
    "LibraryAbstain",
    "Variable",
    "get_calculator",
    "parse_date",
    "parse_sex",
    "solve_gold",
    "solve_gold_versioned",
    "units",
    "versioned_calculator",
]

IMPLEMENTED: dict[int, Calculator] = {
    c.calculator_id: c
    for c in sorted((*lab.CALCULATORS, *physical.CALCULATORS, *dates.CALCULATORS), key=lambda c: c.calculator_id)
}

# The first 22 Calculator IDs among MedCalc-Bench's lab/physical/date calculators that are not
# scores (MELD Na, ID 23, and the Framingham Risk Score, ID 46, are left out). See docs/LIBRARY.md.
LIBRARY_IDS: tuple[int, ...] = (2, 3, 5, 6, 7, 9, 10, 11, 13, 19, 22, 26, 30, 31, 38, 39, 40, 44, 56, 57, 58, 59)

LIBRARY: dict[int, Calculator] = {i: IMPLEMENTED[i] for i in LIBRARY_IDS}

assert len(LIBRARY) == 22


def get_calculator(calculator_id: int, *, library: dict[int, Calculator] | None = None) -> Calculator:
    """The library's calculator for an ID, or ``LibraryAbstain`` when it is not one of the library's."""
    lib = LIBRARY if library is None else library
    try:
        return lib[int(calculator_id)]
    except (KeyError, TypeError, ValueError):
        raise LibraryAbstain(
            f"calculator {calculator_id} is not in the library ({len(lib)} calculators: {sorted(lib)})",
            calculator_id=calculator_id,
        ) from None


def solve_gold(case: Any, *, convention: Convention | str = EXACT, library: dict[int, Calculator] | None = None) -> Any:
    """Gold-Solve: the library function on the case's gold variables.

    ``case`` needs ``calculator_id`` and ``entities`` (a dict, as ``harness.data.dataset.Case`` has).
    ``convention``: a ``harness.core.units.Convention`` or its name, "exact" (Verified) or "medcalc-v1.0" (v1.0
    files); ``harness.data.conventions.resolve_convention`` says which applies to a dataset.
    Returns a float, a ``datetime.date`` or a ``(weeks, days)`` tuple; raises ``LibraryAbstain`` for
    calculators outside the library or when a gold variable is missing or unconvertible."""
    calc = get_calculator(case.calculator_id, library=library)
    return calc.compute(**calc.from_entities(case.entities, convention=convention))


def versioned_calculator(
    calculator_id: int, version: str | None, *, library: Mapping[int, Calculator] | None = None
) -> tuple[Calculator, dict]:
    """(Calculator, provenance) for a library calculator at a version. The benchmark version (or None)
    of a library calculator is the library's own calculator, unchanged. Raises LibraryAbstain for a
    calculator outside ``library`` (default: the arms' 22)."""
    lib = LIBRARY if library is None else library
    cid = int(calculator_id)
    if cid not in lib:
        raise LibraryAbstain(f"calculator {cid} is not in the library ({len(lib)} calculators)", calculator_id=cid)
    bench = version_of(cid, None)
    if version is None or version == bench:
        return lib[cid], provenance(lib[cid], cid, bench)
    calc = coefficient_calculator(cid, version)
    return calc, provenance(calc, cid, version)


def solve_gold_versioned(
    case: Any,
    versions: Mapping[int, str] | None = None,
    *,
    convention: Convention | str = EXACT,
    library: Mapping[int, Calculator] | None = None,
) -> tuple[Any, dict]:
    """Gold-Solve at the chosen versions: (value, provenance). Same abstentions as ``solve_gold``."""
    cid = int(case.calculator_id)
    calc, prov = versioned_calculator(cid, version_of(cid, versions), library=library)
    return calc.compute(**calc.from_entities(case.entities, convention=convention)), prov

"""What the library-calling arms ask the model for: a library calculator's inputs as (key, description) pairs,
and the calculator an arm calls for a case at its formula version."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.calculators import LIBRARY, Calculator, versioned_calculator

if TYPE_CHECKING:
    from harness.arms.spec import Arm


def library_variables(calc: Calculator) -> list[tuple[str, str]]:
    """(key, description) pairs of a library calculator's inputs: the description, with the unit when the
    description does not already name it."""
    out = []
    for v in calc.variables:
        desc = v.description or v.name
        out.append((v.name, f"{desc} ({v.unit})" if v.unit and v.unit not in desc else desc))
    return out


def calculator_for(arm: Arm, calculator_id: int) -> Calculator | None:
    """The library calculator an arm calls for a case (at the arm's formula version), None outside the library."""
    calc = LIBRARY.get(calculator_id)
    if calc is not None and arm.formula_versions:
        calc, _ = versioned_calculator(calculator_id, arm.version_for(calculator_id))
    return calc

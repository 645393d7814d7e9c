"""Which cases an arm runs on, and the formula-version fields of its records: what the run stage asks of an arm
about calculators, answered here so the run stage knows nothing of the library or the formula catalogue.

    arm_cases(arm, cases, all_cases)     the covered cases (the library's calculators) for `covered_only`
                                         arms unless all_cases; every case otherwise
    formula_version_fields(arm, case, answer, kind, scorer, convention)
                                         `formula_version` and, off the benchmark version, `reference`
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.arms.spec import Arm
from harness.calculators import LIBRARY
from harness.calculators.versions import benchmark_version, library_reference
from harness.core.units import EXACT, Convention
from harness.data.dataset import Case
from harness.scoring.scorers import Gold, score_value


def covered_cases(cases: Iterable[Case]) -> list[Case]:
    """Cases of the library's calculators (the paper's covered 440 on Verified)."""
    return [c for c in cases if c.calculator_id in LIBRARY]


def arm_cases(arm: Arm, cases: list[Case], all_cases: bool = False) -> list[Case]:
    """The cases an arm runs on: the covered ones for vote/repair levers (`covered_only`) unless `all_cases`."""
    return covered_cases(cases) if arm.covered_only and not all_cases else list(cases)


def formula_version_fields(
    arm: Arm, case: Case, answer: Any, kind: str | None, scorer: str, convention: Convention = EXACT
) -> dict:
    """`formula_version` for arms that use formulas or the library (the version in force for the case's
    calculator, None when unversioned); and, when that is not the benchmark's version, `reference`: the
    "library-derived reference" from the gold variables and the answer's verdict against it. Benchmark gold
    and `correct` are untouched: the reference is never scored as gold."""
    if not arm.uses_formulas:
        return {}
    version = arm.version_for(case.calculator_id)
    out: dict = {"formula_version": version}
    if version is None or version == benchmark_version(case.calculator_id):
        return out
    ref = library_reference(case, version, convention=convention)
    verdict = None
    if ref["value"] is not None and answer is not None and kind is not None:  # an answer always has its kind
        gold = Gold(output_type=case.output_type, gold_answer=repr(float(ref["value"])), case_id=case.case_id)
        verdict = bool(score_value(answer, kind, gold, scorer).correct)
    out["reference"] = {**ref, "correct": verdict, "scorer": scorer}
    return out


__all__ = ["arm_cases", "covered_cases", "formula_version_fields"]

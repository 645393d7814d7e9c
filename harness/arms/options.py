"""Run options that change an arm, checked here (the CLI only reports the errors): formula versions, the router's
k, m and temperature, and the unit convention an arm's config records.

    apply_options(arms, formula_versions=("9=ckd-epi-2021",), k=7) -> (arms, notes)
    ArmOptionError.option names the command-line option at fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.arms.spec import Arm
from harness.calculators.versions import FormulaVersionError, parse_formula_versions


class ArmOptionError(ValueError):
    """An option that does not apply to the chosen arms, or an invalid value; `option` names it."""

    def __init__(self, message: str, option: str):
        super().__init__(message)
        self.option = option


def reads_gold_variables(arm: Arm) -> bool:
    """Whether the arm converts the benchmark's gold variables (Gold-Solve, the gold router route)."""
    return arm.solver.reads_gold_variables(arm)


def with_convention(arm: Arm, convention: str) -> Arm:
    """The arm configured for a run under unit convention ``convention`` (its name): recorded in the arm's config
    when the arm's answer depends on it (`Solver.uses_convention`), None otherwise."""
    return arm.replace(convention=convention if arm.solver.uses_convention else None)


def with_options(
    arm: Arm,
    *,
    formula_versions: dict[int, str] | None = None,
    k: int | None = None,
    m: int | None = None,
    temperature: float | None = None,
) -> Arm:
    """The arm with formula versions (arms that use formulas only) and, for the router arms, k, m and the
    sampling temperature replaced (`Solver.option_changes`). Raises ValueError naming the problem."""
    changes: dict = {}
    if formula_versions and arm.uses_formulas:
        changes["formula_versions"] = tuple(sorted((int(c), str(v)) for c, v in formula_versions.items()))
    changes.update(arm.solver.option_changes(arm, k=k, m=m, temperature=temperature))
    return arm.replace(**changes) if changes else arm


def apply_options(
    arms: Sequence[Arm],
    formula_versions: Iterable[str] = (),
    k: int | None = None,
    m: int | None = None,
    temperature: float | None = None,
) -> tuple[list[Arm], list[str]]:
    """The arms with --formula-version CALC_ID=VERSION and --router-k/-m/-temperature applied, and notes to show
    the user. ArmOptionError (naming the option) for a bad value or an option none of the arms takes."""
    notes: list[str] = []
    try:
        chosen = parse_formula_versions(tuple(formula_versions))
    except FormulaVersionError as exc:
        raise ArmOptionError(str(exc), "--formula-version") from None
    if chosen:
        using = [a.name for a in arms if a.uses_formulas]
        if not using:
            raise ArmOptionError(
                f"none of the arms {', '.join(a.name for a in arms)} supplies formula text or calls the library",
                "--formula-version",
            )
        notes.append(f"formula versions {chosen} apply to: {', '.join(using)}")
    routers = [a for a in arms if a.solver.agreement_options]
    if (k is not None or m is not None or temperature is not None) and not routers:
        from harness.arms.registry import router_arms

        raise ArmOptionError(f"no router arm selected ({', '.join(router_arms())})", "--router-k/-m")
    out = []
    for a in arms:
        try:
            if a.solver.agreement_options:
                out.append(with_options(a, formula_versions=chosen, k=k, m=m, temperature=temperature))
            else:
                out.append(with_options(a, formula_versions=chosen))
        except ValueError as exc:
            raise ArmOptionError(str(exc), "--router-k/--router-m/--router-temperature") from None
    return out, notes


__all__ = ["ArmOptionError", "apply_options", "reads_gold_variables", "with_convention", "with_options"]

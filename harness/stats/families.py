"""Declared paired comparisons and the Holm families they belong to.

A comparison is solver minus reference on the cases both arms ran (optionally restricted to a
calculator set). Holm's correction is applied to the case-level tests (McNemar, permutation)
within one (model, family); cluster intervals are never adjusted. The list is fixed before any
result is read, as the paper declares its families.
"""
from __future__ import annotations

from dataclasses import dataclass

# Display names of the arms (paper wording).
ARM_LABELS = {
    "note-only": "Note only",
    "note-only-gold": "Note only with gold variables",
    "note-only-250-nogold": "Note only, 250 words, no gold variables",
    "page-no-formula": "Page without formula",
    "open-book": "Open-book arithmetic",
    "extract-lib": "Extract-Solve library",
    "gold-lib": "Gold-Solve library",
    "extract-lib-recalled": "Extract-Solve library, recalled",
    "program-solve": "Program-Solve",
    "program-solve-syntax": "Program-Solve + syntax",
    "blind": "Blind Program-Solve",
    "blind-vote": "Blind + vote",
    "blind-repair": "Blind + repair",
    "blind-repair-vote": "Blind + repair + vote",
    "formulate-tree": "Formulate-Solve tree",
    "routed-gold": "Routed, formula given",
    "routed-blind": "Routed, blind",
}
SHORT_LABELS = {
    "program-solve": "Prog.",
    "program-solve-syntax": "Prog. + syntax",
    "open-book": "Arith.",
    "gold-lib": "Gold lib.",
    "extract-lib": "Extract lib.",
    "extract-lib-recalled": "Recalled lib.",
    "blind": "Blind",
    "blind-vote": "Blind + vote",
    "blind-repair": "Blind + repair",
    "blind-repair-vote": "Blind + repair + vote",
    "note-only": "Note only",
    "note-only-gold": "Note only + gold",
    "note-only-250-nogold": "Note only 250",
    "page-no-formula": "Page w/o formula",
    "formulate-tree": "Tree",
    "routed-gold": "Routed (gold)",
    "routed-blind": "Routed (blind)",
}


def arm_label(arm: str, short: bool = False) -> str:
    if short and arm in SHORT_LABELS:
        return SHORT_LABELS[arm]
    if arm in ARM_LABELS:
        return ARM_LABELS[arm]
    if arm.endswith("-250") and arm[:-4] in ARM_LABELS:
        base = SHORT_LABELS.get(arm[:-4], ARM_LABELS[arm[:-4]]) if short else ARM_LABELS[arm[:-4]]
        return f"{base}, 250 words"
    if arm.startswith("hybrid:"):
        from harness.stats.hybrids import hybrid_label

        return hybrid_label(arm)
    return arm


@dataclass(frozen=True)
class Comparison:
    solver: str
    reference: str
    family: str
    access: str = ""  # what the two arms share (Table 2's "Access" column)
    subset: str = "all"  # "all" | "impl" (the library's calculators) | "not_replaced" | "no_issue"

    @property
    def label(self) -> str:
        return f"{arm_label(self.solver, short=True)} \u2212 {arm_label(self.reference, short=True)}"


# Table 2 upper block and the paper's primary family.
PRIMARY = (
    Comparison("program-solve", "open-book", "primary", "formula, gold variables, whole note"),
    Comparison("program-solve", "gold-lib", "primary", "gold variables"),
    Comparison("blind", "extract-lib", "primary", "both extract"),
)
SYNTAX = (
    Comparison("program-solve-syntax", "open-book", "syntax", "formula, gold variables, whole note"),
    Comparison("program-solve-syntax", "gold-lib", "syntax", "gold variables"),
    Comparison("program-solve-syntax", "program-solve", "syntax", "syntax lines only"),
)
SECONDARY = (
    Comparison("program-solve", "extract-lib", "secondary", "not input-matched"),
    Comparison("program-solve", "extract-lib-recalled", "secondary", "not input-matched"),
    Comparison("blind", "extract-lib-recalled", "secondary", "both recall"),
    Comparison("program-solve", "blind", "secondary", "formula and variables removed"),
    Comparison("open-book", "page-no-formula", "secondary", "formula text"),
    Comparison("page-no-formula", "note-only", "secondary", "page and variables"),
    Comparison("extract-lib", "gold-lib", "secondary", "extraction"),
)
LEVERS = (
    Comparison("blind-vote", "blind", "levers", "vote", "impl"),
    Comparison("blind-repair", "blind", "levers", "repair", "impl"),
    Comparison("blind-repair-vote", "blind", "levers", "repair + vote", "impl"),
)
BUDGET_VS_VARIABLES = (
    Comparison("note-only-250-nogold", "note-only", "budget-variables", "budget 250 vs 120, no variables"),
    Comparison("note-only-gold", "note-only", "budget-variables", "gold variables, 120 words"),
    Comparison("open-book", "note-only-250-nogold", "budget-variables", "whole note + variables + formula"),
)

HEADLINE = PRIMARY + SYNTAX[:1]  # the four gaps of Table s10


def budget_comparisons(arms: list[str]) -> tuple[Comparison, ...]:
    """Note-budget ablation (s4): every arm X with an X-250 run, whole note minus 250 words."""
    return tuple(Comparison(a[:-4], a, "note-budget", "whole note vs 250 words")
                 for a in arms if a.endswith("-250") and a[:-4] in arms)


def declared_comparisons(arms: list[str]) -> tuple[Comparison, ...]:
    """Every declared comparison (s5), in table order; arms absent from a model are skipped later."""
    from harness.stats.hybrids import hybrid_comparisons

    return PRIMARY + SYNTAX + SECONDARY + LEVERS + budget_comparisons(arms) + BUDGET_VS_VARIABLES + \
        hybrid_comparisons()

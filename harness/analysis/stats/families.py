"""Declared paired comparisons and the Holm families they belong to.

A comparison is solver minus reference on the cases both arms ran (optionally restricted to a
calculator set). Holm's correction is applied to the case-level tests (McNemar, permutation)
within one (model, family); cluster intervals are never adjusted. The list is fixed before any
result is read, as the paper declares its families.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.stats.labels import HYBRIDS, LIBRARIES, arm_label, hybrid_name
from harness.arms.registry import ARMS, budget_variants


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


def _words(arm: str) -> str:
    """An arm's note budget as its spec holds it (harness.arms.registry): "whole note" or "N words"."""
    n = ARMS[arm].note_words
    return "whole note" if n is None else f"{n} words"


BUDGET_VS_VARIABLES = (
    Comparison(
        "note-only-250-nogold",
        "note-only",
        "budget-variables",
        f"budget {ARMS['note-only-250-nogold'].note_words} vs {ARMS['note-only'].note_words}, no variables",
    ),
    Comparison("note-only-gold", "note-only", "budget-variables", f"gold variables, {_words('note-only-gold')}"),
    Comparison("open-book", "note-only-250-nogold", "budget-variables", "whole note + variables + formula"),
)

HEADLINE = PRIMARY + SYNTAX[:1]  # the four gaps of Table s10


def budget_comparisons(arms: list[str]) -> tuple[Comparison, ...]:
    """Note-budget ablation (s4): every arm that ran beside the arm capping its note (harness.arms.registry
    budget_variants: the same spec but for the note budget), the longer read minus the capped one; a pair another
    family declares (BUDGET_VS_VARIABLES) is not declared twice."""
    declared = {(c.solver, c.reference) for c in BUDGET_VS_VARIABLES} | {
        (c.reference, c.solver) for c in BUDGET_VS_VARIABLES
    }
    variants = budget_variants()
    return tuple(
        Comparison(variants[a], a, "note-budget", f"{_words(variants[a])} vs {_words(a)}")
        for a in arms
        if a in variants and variants[a] in arms and (variants[a], a) not in declared
    )


def declared_comparisons(arms: list[str]) -> tuple[Comparison, ...]:
    """Every declared comparison (s5), in table order; arms absent from a model are skipped later."""
    return PRIMARY + SYNTAX + SECONDARY + LEVERS + budget_comparisons(arms) + BUDGET_VS_VARIABLES + hybrid_comparisons()


def hybrid_comparisons() -> tuple[Comparison, ...]:
    """Declared hybrid comparisons: each hybrid minus its fallback alone (s13) and, per library,
    the Program-Solve fallback minus the Open-book fallback (s18)."""
    out = [Comparison(name, fb, "hybrids", "library first, then the fallback") for name, _, fb in HYBRIDS]
    out += [
        Comparison(
            hybrid_name(lib, "program-solve"),
            hybrid_name(lib, "open-book"),
            "fallbacks",
            "same library rows, fallback differs",
        )
        for lib in LIBRARIES
    ]
    return tuple(out)

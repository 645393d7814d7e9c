"""Declared paired comparisons and the Holm families they belong to: each declared by its solver arm's registry entry
(harness.arms.spec.PaperRole.gaps), the note-budget and hybrid families derived from the registry.

A comparison is solver minus reference on the cases both arms ran (optionally restricted to a
calculator set). Holm's correction is applied to the case-level tests (McNemar, permutation)
within one (model, family); cluster intervals are never adjusted. The list is fixed before any
result is read, as the paper declares its families.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.stats.labels import FALLBACKS, HYBRIDS, LIBRARIES, arm_label, hybrid_name
from harness.arms.registry import ARMS, budget_variants, declared_gaps, shown_gaps, words
from harness.arms.spec import Gap


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


def _comparison(solver: str, gap: Gap) -> Comparison:
    """The comparison a registry entry's gap declares (its arm is the solver)."""
    return Comparison(solver, gap.reference, gap.family, gap.access, gap.subset)


def declared(family: str) -> tuple[Comparison, ...]:
    """The comparisons of one Holm family, as the registered arms declare them (harness.arms.spec.PaperRole.gaps:
    the solver's entry names its reference, family, access and rank), in table order. Table 2's upper block is
    "primary"; "syntax", "secondary", "levers" and "budget-variables" (Table s16) follow."""
    return tuple(_comparison(solver, g) for solver, g in declared_gaps() if g.family == family)


def headline() -> tuple[Comparison, ...]:
    """The headline gaps (Table s10, the results summary): the declared gaps marked `headline`, in table order."""
    return tuple(_comparison(solver, g) for solver, g in declared_gaps() if g.headline)


def shown_in(table: str) -> tuple[Comparison, ...]:
    """The declared comparisons a table shows beyond its family's (harness.arms.spec.Gap.tables: "s3", "s7", "s8",
    "table1-other", "about"), in table order."""
    return tuple(_comparison(solver, g) for solver, g in shown_gaps(table))


def _words(arm: str) -> str:
    """An arm's note budget as its spec holds it (harness.arms.registry): "whole note" or "N words"."""
    return words(ARMS[arm])


def budget_comparisons(arms: list[str]) -> tuple[Comparison, ...]:
    """Note-budget ablation (s4): every arm that ran beside the arm capping its note (harness.arms.registry
    budget_variants: the same spec but for the note budget), the longer read minus the capped one; a pair another
    family declares ("budget-variables") is not declared twice."""
    budget_vs_variables = declared("budget-variables")
    declared_pairs = {(c.solver, c.reference) for c in budget_vs_variables} | {
        (c.reference, c.solver) for c in budget_vs_variables
    }
    variants = budget_variants()
    return tuple(
        Comparison(variants[a], a, "note-budget", f"{_words(variants[a])} vs {_words(a)}")
        for a in arms
        if a in variants and variants[a] in arms and (variants[a], a) not in declared_pairs
    )


def declared_comparisons(arms: list[str]) -> tuple[Comparison, ...]:
    """Every declared comparison (s5), in table order; arms absent from a model are skipped later."""
    return (
        declared("primary")
        + declared("syntax")
        + declared("secondary")
        + declared("levers")
        + budget_comparisons(arms)
        + declared("budget-variables")
        + hybrid_comparisons()
    )


def fallback_comparisons() -> tuple[tuple[str, Comparison], ...]:
    """(library, comparison) per library of the hybrids: its hybrid with the first fallback minus its hybrid with the
    second, by their rank (harness.arms.spec.HybridRole: Program-Solve's fallback minus Open-book's; s18)."""
    if len(FALLBACKS) < 2:
        return ()
    first, second = FALLBACKS[:2]
    return tuple(
        (
            lib,
            Comparison(
                hybrid_name(lib, first), hybrid_name(lib, second), "fallbacks", "same library rows, fallback differs"
            ),
        )
        for lib in LIBRARIES
    )


def hybrid_comparisons() -> tuple[Comparison, ...]:
    """Declared hybrid comparisons: each hybrid minus its fallback alone (s13) and, per library, the first fallback
    minus the second (s18: fallback_comparisons)."""
    out = [Comparison(name, fb, "hybrids", "library first, then the fallback") for name, _, fb in HYBRIDS]
    out += [c for _, c in fallback_comparisons()]
    return tuple(out)

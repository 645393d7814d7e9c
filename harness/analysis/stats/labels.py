"""Display names of arms and of the library-first hybrids (paper wording), and the hybrids' names."""
from __future__ import annotations

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
        return hybrid_label(arm)
    return arm


LIBRARIES = {"gold": "gold-lib", "extract": "extract-lib"}
FALLBACKS = ("program-solve", "open-book")


def hybrid_name(library: str, fallback: str) -> str:
    return f"hybrid:{library}-first+{fallback}"


HYBRIDS = tuple((hybrid_name(lib, fb), LIBRARIES[lib], fb) for lib in LIBRARIES for fb in FALLBACKS)


def hybrid_label(name: str) -> str:
    lib, fb = name.removeprefix("hybrid:").split("+", 1)
    return f"{lib.replace('-first', '').capitalize()}-first, {arm_label(fb, short=True)} fallback"

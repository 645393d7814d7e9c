"""Calculator sets the statistics need, read lazily from the library and the formula catalogue.

* `library_calculators()`: ids of the calculators the hand-written library implements (the paper's
  "Impl." 22), from `harness.calculators.LIBRARY`.
* `audit_calculators(group)`: ids by the formula catalogue's audit flags
  (`harness.calculators.catalogue.CATALOGUE[id].audit_group` in "replaced" | "other_concern" | "no_issue");
  "not_replaced" is every catalogued calculator outside "replaced".
Both raise LookupError naming a malformed entry: the library and the catalogue are part of the kit, so the
analysis stops rather than omitting the affected columns.
"""

from __future__ import annotations

from harness.calculators import LIBRARY
from harness.calculators.catalogue import AUDIT_GROUPS, CATALOGUE

AUDIT_LABELS = {
    "replaced": "Replaced by a guideline",
    "other_concern": "Other concern",
    "no_issue": "No issue identified",
    "not_replaced": "Not replaced",
    "all": "All",
}


def library_calculators() -> set[int]:
    """Calculator ids the library implements (keys of harness.calculators.LIBRARY)."""
    try:
        return {int(k) for k in LIBRARY}
    except (TypeError, ValueError):
        raise LookupError("harness.calculators.LIBRARY keys are not calculator ids") from None


def audit_groups() -> dict[int, str]:
    """calculator id -> audit group from harness.calculators.catalogue.CATALOGUE."""
    out = {}
    for cid, entry in CATALOGUE.items():
        group = entry.audit_group
        if group not in AUDIT_GROUPS:
            raise LookupError(
                f"harness.calculators.catalogue.CATALOGUE[{cid}] has audit_group {group!r}, "
                f"expected one of {', '.join(AUDIT_GROUPS)}"
            )
        out[int(cid)] = group
    return out


def audit_calculators(subset: str) -> set[int]:
    groups = audit_groups()
    if subset == "not_replaced":
        return {c for c, g in groups.items() if g != "replaced"}
    if subset in AUDIT_GROUPS:
        return {c for c, g in groups.items() if g == subset}
    raise LookupError(f"unknown calculator subset {subset!r}")

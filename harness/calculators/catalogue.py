"""The formula catalogue: one entry per MedCalc-Bench calculator (all 55).

Each :class:`FormulaEntry` carries the formula text the formula-given arms (Open-book arithmetic,
Program-Solve) show the model, its source with guideline version and date, the paper's audit
flags (Table s9: a version, use or coefficient concern; four calculators replaced by a current
guideline) and its completeness-audit status (Tables s17/s17b: complete, omitted a constant / unit /
branch / convention, or could not reproduce the benchmark's number, with the repair made).

The data live in ``catalogue_physical.toml`` and ``catalogue_scores.toml`` next to this file;
:func:`literal_compute` applies a text literally to a case's gold entities (see ``literal.py``) and
``harness formulas check`` measures how often that reproduces the gold answers.

Provenance of the audit fields: the paper's TeX source available to this kit states the counts
(16 concerns, 4 replaced, 12 other, 39 no issue; 10 could-not-reproduce, 18 omitted, 27 complete)
and names the replaced group (race-free CKD-EPI 2021, MELD 3.0, PREVENT, Sampson LDL), but the
bodies of Tables s9, s17 and s17b are elided. The per-calculator assignments outside the replaced
group are therefore this kit's own literature-based reading, made to match those counts, and every
entry says so in ``provenance``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .literal import LITERAL, literal_compute

__all__ = [
    "AUDIT_GROUPS",
    "CATALOGUE",
    "CATALOGUE_FILES",
    "COMPLETENESS",
    "CONCERN_TYPES",
    "FormulaEntry",
    "literal_compute",
    "load_catalogue",
]

CATALOGUE_FILES = (
    Path(__file__).with_name("catalogue_physical.toml"),
    Path(__file__).with_name("catalogue_scores.toml"),
)
CONCERN_TYPES = ("version", "use", "coefficient")
AUDIT_GROUPS = ("replaced", "other_concern", "no_issue")
COMPLETENESS = ("complete", "omitted", "could_not_reproduce")

PROVENANCE_REPLACED = "paper (Introduction and Limitations name the replaced group)"
PROVENANCE_RECONSTRUCTED = (
    "kit reconstruction: the paper's table body is elided in the available source; "
    "assignment made from the cited literature to match the paper's counts"
)


@dataclass(frozen=True)
class FormulaEntry:
    """One calculator's formula text, citation and audit status."""

    calculator_id: int
    name: str
    text: str
    source: str
    guideline_version: str
    guideline_date: str
    flags: Mapping[str, Any]
    audit_group: str
    completeness: str
    repair: str = ""
    history: str = ""
    provenance: Mapping[str, str] = field(default_factory=dict)

    @property
    def concern(self) -> str | None:
        return self.flags.get("concern")

    @property
    def replaced_by_guideline(self) -> bool:
        return bool(self.flags.get("replaced_by_guideline"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "calculator_id": self.calculator_id,
            "name": self.name,
            "text": self.text,
            "source": self.source,
            "guideline_version": self.guideline_version,
            "guideline_date": self.guideline_date,
            "flags": dict(self.flags),
            "audit_group": self.audit_group,
            "completeness": self.completeness,
            "repair": self.repair,
            "history": self.history,
            "provenance": dict(self.provenance),
        }


def _entry(raw: dict[str, Any]) -> FormulaEntry:
    cid = int(raw["id"])
    concern = raw.get("concern", "none")
    if concern not in CONCERN_TYPES and concern != "none":
        raise ValueError(f"calculator {cid}: unknown concern {concern!r}")
    replaced = bool(raw.get("replaced_by_guideline", False))
    if replaced and concern == "none":
        raise ValueError(f"calculator {cid}: replaced_by_guideline needs a concern type")
    completeness = raw["completeness"]
    if completeness not in COMPLETENESS:
        raise ValueError(f"calculator {cid}: unknown completeness {completeness!r}")
    if completeness != "complete" and not raw.get("repair"):
        raise ValueError(f"calculator {cid}: {completeness} needs a repair note")
    flags = MappingProxyType(
        {
            "concern": None if concern == "none" else concern,
            "replaced_by_guideline": replaced,
            "replacing_guideline": raw.get("replacing_guideline") if replaced else None,
            "note": raw.get("concern_note", ""),
        }
    )
    group = "replaced" if replaced else ("other_concern" if concern != "none" else "no_issue")
    provenance = MappingProxyType(
        {
            "text": "written from the benchmark's Ground Truth Explanations and the cited source",
            "audit_group": PROVENANCE_REPLACED if replaced else PROVENANCE_RECONSTRUCTED,
            "completeness": PROVENANCE_RECONSTRUCTED,
        }
    )
    return FormulaEntry(
        calculator_id=cid,
        name=raw["name"],
        text=raw["text"].strip(),
        source=raw["source"],
        guideline_version=raw["guideline_version"],
        guideline_date=str(raw["guideline_date"]),
        flags=flags,
        audit_group=group,
        completeness=completeness,
        repair=raw.get("repair", ""),
        history=raw.get("history", ""),
        provenance=provenance,
    )


def load_catalogue(paths: tuple[Path, ...] = CATALOGUE_FILES) -> dict[int, FormulaEntry]:
    """Read and validate the catalogue files; calculator IDs must be unique."""
    out: dict[int, FormulaEntry] = {}
    for path in paths:
        with open(path, "rb") as fh:
            for raw in tomllib.load(fh)["calculator"]:
                entry = _entry(raw)
                if entry.calculator_id in out:
                    raise ValueError(f"{path.name}: duplicate calculator {entry.calculator_id}")
                out[entry.calculator_id] = entry
    missing = set(out) - set(LITERAL) | set(LITERAL) - set(out)
    if missing:
        raise ValueError(f"catalogue and literal implementations disagree on IDs: {sorted(missing)}")
    return dict(sorted(out.items()))


CATALOGUE: dict[int, FormulaEntry] = load_catalogue()

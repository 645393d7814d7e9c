"""What a table is to the kit: a `TableSpec` (its id, the group it belongs to, its builder, whether the paper has
it) in the one table registry, `TABLES` (harness.analysis.tables).

A builder turns one analysis (harness.analysis.results_analysis.Analysis) into a `Table`
(harness.analysis.table_format) or raises `Omit` saying why it cannot (an arm or seed that did not run, no
manifests). A paper table that is omitted is listed in the index with its reason; a table beyond the paper (the
router tables) is shown only when the results determine it. A group's tables are one module of this package, by
what they show in the paper, never by what they read:

    ladder   the accuracy ladders: Table 1 (and its lower block), s1, s2, the program outcomes (s6, s12), seed agreement
    gaps     the paired gaps: Table 2, s3, s4, s5, s10, s13, s16, s18, and what recall loses (s7, s8)
    ledger   the reproducibility ledger from the run manifests: s14, s14b
    audit    the audits: the calculators and formula texts (s9, s17, s17b), accuracy by audit group (s11), the
             failure audit and its annotation sheet (s15, s15b)
    router   beyond the paper: router arms (s20, s21) and formula versions (s22)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from harness.analysis.results_analysis import Analysis
from harness.analysis.table_format import Table

GROUPS = ("ladder", "gaps", "ledger", "audit", "router")


@dataclass(frozen=True)
class Sheet:
    """A file a table writes beside itself for a person to fill (the failure audit's annotation sheet)."""

    name: str
    text: Callable[[Analysis], str]
    index_note: str  # the index's line about it


@dataclass(frozen=True)
class TableSpec:
    """One table of the registry (module docstring)."""

    name: str  # its id: "table1", "s14b"
    group: str  # one of GROUPS
    build: Callable[[Analysis], Table]
    paper: bool = True  # the paper has it: its omission is listed with the reason
    sheet: Sheet | None = None

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"table {self.name}: group {self.group!r} is not one of {', '.join(GROUPS)}")


_ID = re.compile(r"^(table|s)(\d+)(.*)$")


def paper_order(name: str) -> tuple:
    """The paper's order of table ids: table1, table1-other, table2, then s1, s2, ..., s14, s14b, s15, ..."""
    m = _ID.match(name)
    if not m:
        raise ValueError(f"table id {name!r} is not tableN or sN (with a suffix)")
    return (m.group(1) != "table", int(m.group(2)), m.group(3))

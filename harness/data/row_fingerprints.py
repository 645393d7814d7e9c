"""Known benchmark rows by content: a per-row fingerprint of every row of the MedCalc-Bench v1.0 test split and of
the Verified rows the kit has, so a subset, a reordering or a re-save of a known split is recognised row by row
(harness/data/conventions.py then gives it that split's unit convention).

A row's fingerprint is the first 16 hex digits of the sha256 of its Calculator ID, Patient Note, Question and
gold answer, each in a canonical form: line ends as "\\n" and outer whitespace stripped for the texts, the
parsed gold written canonically (a number as Python's repr of its float, so "4" and "4.0" agree; a date as
YYYY-MM-DD, so "1/9/2007" and "01/09/2007" agree; a gestational age as "(W, D)"). Row Number and the limits
are left out, so a renumbered row is still recognised. Two rows that differ in gold (a Verified correction)
differ in fingerprint; a row whose content is the same in v1.0 and Verified is known to both.

The shipped table, harness/data/row_fingerprints.json, holds fingerprints only, not the rows' text (the
rows are CC BY-SA 4.0, attribution in harness/data/ATTRIBUTION.md). It is written by
`scripts/make_row_fingerprints.py` from the pinned v1.0 test_data.csv and the bundled Verified one-shot
split. The Verified test split is not in it (the hub was unreachable when the kit was built): once pinned
and fetched (`harness data fetch`), its rows are fingerprinted from the downloaded file when first needed.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.paths import BUNDLED_DATA_DIR
from harness.data.dataset import load_dataset
from harness.data.errors import DatasetError
from harness.data.pins import pinned_sha256, verified_path

__all__ = ["FINGERPRINTS_FILE", "KnownRows", "fingerprints_of", "known_rows", "row_fingerprint"]

FINGERPRINTS_FILE = BUNDLED_DATA_DIR / "row_fingerprints.json"
_HEX = 16


def _text(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").strip()


def _gold(value: Any) -> str:
    if isinstance(value, tuple):
        return f"({int(value[0])}, {int(value[1])})"
    if isinstance(value, dt.date):
        return value.isoformat()
    return repr(float(value))


def row_fingerprint(case: Any) -> str:
    """The fingerprint of one row (a harness.data.dataset.Case): module docstring."""
    parts = (str(int(case.calculator_id)), _text(case.note), _text(case.question), _gold(case.gold_value))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:_HEX]


def fingerprints_of(cases: Iterable[Any]) -> list[str]:
    return [row_fingerprint(c) for c in cases]


@dataclass(frozen=True)
class KnownRows:
    """One known set of rows: its label, unit convention, where it comes from, and its fingerprints."""

    label: str
    convention: str
    source: str
    fingerprints: frozenset[str]


@functools.lru_cache(maxsize=2)
def _shipped(path: Path = FINGERPRINTS_FILE) -> tuple[KnownRows, ...]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return tuple(
        KnownRows(s["label"], s["convention"], s["source"], frozenset(s["fingerprints"])) for s in data["sets"]
    )


@functools.lru_cache(maxsize=4)
def _verified_rows(path: str, sha256: str) -> KnownRows:
    ds = load_dataset(path, verify=False)
    return KnownRows(
        "MedCalc-Bench Verified test split (pinned, fetched)",
        "exact",
        f"{path} (sha256 {sha256[:12]}...)",
        frozenset(fingerprints_of(ds.cases)),
    )


def known_rows() -> list[KnownRows]:
    """The shipped sets, plus the Verified test split when it is pinned and downloaded."""
    sets = list(_shipped())
    sha = pinned_sha256("verified")
    if sha:
        try:
            sets.append(_verified_rows(str(verified_path()), sha))
        except DatasetError:  # pinned but not downloaded (or not loadable: `--dataset verified` says why)
            pass
    return sets

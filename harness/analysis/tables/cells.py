"""What several table groups share: the accuracy and gap cells, the note on arms that did not run, and the results
root and stored records of the tables that read records."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.families import arm_label
from harness.analysis.stats.paired import accuracy
from harness.analysis.table_format import Omit, fmt, fmt_ci, fmt_signed
from harness.run.record import Record


def acc_cell(an: Analysis, model: str, arm: str, cases: np.ndarray | None = None, sd: bool = False) -> str:
    """Mean accuracy over seeds (optionally with seed SD); superscript: `n=N` cases covered when fewer, `1 seed`
    when the arm ran at one seed of several (each says what it counts: a bare "1" read as one case or one seed)."""
    acc = accuracy(an.data, model, arm, cases)
    if acc is None:
        return "\u2013"
    text = fmt(acc["mean"])
    if sd and acc["seeds"] > 1:
        text += f" ({fmt(acc['sd'])})"
    full = int(np.sum(cases)) if cases is not None else an.data.n_cases
    marks = []
    if acc["cases"] != full:
        marks.append(f"n={acc['cases']}")
    if acc["seeds"] == 1 and len(an.data.seeds) > 1:
        marks.append("1 seed")
    return text + (f"^{{{'; '.join(marks)}}}" if marks else "")


def gap_cell(row: dict | None) -> str:
    if row is None:
        return "\u2013"
    return f"{fmt_signed(row['gap'])} {fmt_ci(row['cluster_lo'], row['cluster_hi'])}"


def omitted_note(an: Analysis, arms: Iterable[str]) -> list[str]:
    missing = [a for a in arms if not any(an.data.has(m, a) for m in an.data.models)]
    return [f"Omitted, no results: {', '.join(arm_label(a) for a in missing)}."] if missing else []


def results_root(an: Analysis) -> Path:
    """The results root the analysis was read from (Omit when it was not: no records or manifests to read)."""
    if an.results_dir is None:
        raise Omit("the analysis was not read from a results root (no records or manifests to read)")
    return an.results_dir


def stored_records(an: Analysis, *arms: str) -> list[Record]:
    """The stored records of `arms` for the analysed cases (only those arms' files, read once per analysis)."""
    results_root(an)
    return an.records(*arms)

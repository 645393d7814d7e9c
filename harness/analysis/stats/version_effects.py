"""What changes when a current guideline's formula version is chosen: Gold-Solve on every versioned
calculator, benchmark version against each other version, from the gold variables (no model).

For each case of a versioned calculator the benchmark version's library value is compared with the
scorer against the benchmark gold (as Gold-Solve is), and each other version's value - the
"library-derived reference" - is reported in its own column: never scored as if it were gold. A
case "changes" when the two versions' values differ by more than the benchmark's own tolerance
(outside +-5% of the benchmark-version value for decimal outputs; any difference for integers),
i.e. when choosing the guideline version would turn a benchmark-correct Gold-Solve answer into one
the benchmark scores wrong. "differs" counts any numeric difference at the benchmark's 3-decimal
rounding.
"""

from __future__ import annotations

from typing import Any

from harness.arms.solvers.router import agrees
from harness.calculators import LIBRARY, LibraryAbstain
from harness.calculators.versions import (
    REFERENCE_LABEL,
    VERSIONS,
    benchmark_version,
    coefficient_calculator,
    library_reference,
)
from harness.core.units import Convention
from harness.data.conventions import resolve_convention
from harness.data.dataset import Dataset
from harness.scoring.scorers import score_value


def case_rows(dataset: Dataset, convention: Convention | str | None = None) -> list[dict]:
    """One row per (case of a versioned calculator, non-benchmark version); ``convention``: a unit convention
    (name or ``Convention``), else the dataset's own by content (``harness.data.conventions``)."""
    conv = resolve_convention(dataset, convention).convention
    rows = []
    for case in dataset.cases:
        cid = case.calculator_id
        if cid not in VERSIONS:
            continue
        bench = benchmark_version(cid)
        assert bench is not None  # a versioned calculator has its benchmark version
        calc = coefficient_calculator(cid, bench)
        try:
            bench_value = calc.compute(**calc.from_entities(case.entities, convention=conv))
            bench_reason = None
        except LibraryAbstain as exc:
            bench_value, bench_reason = None, str(exc)
        bench_correct = bool(score_value(bench_value, "number", case).correct) if bench_value is not None else None
        for version, fv in VERSIONS[cid].items():
            if fv.benchmark:
                continue
            ref = library_reference(case, version, convention=conv)
            value = ref["value"]
            changes = differs = None
            if value is not None and bench_value is not None:
                differs = round(float(value), 3) != round(float(bench_value), 3)
                changes = not agrees(value, "number", bench_value, "number", case.output_type)
            rows.append(
                {
                    "dataset": dataset.name,
                    "case_id": case.case_id,
                    "calculator_id": cid,
                    "calculator_name": case.calculator_name,
                    "in_gold_solve": cid in LIBRARY,
                    "benchmark_version": bench,
                    "benchmark_gold": case.gold_answer,
                    "benchmark_value": bench_value,
                    "benchmark_correct": bench_correct,
                    "benchmark_reason": bench_reason,
                    "version": version,
                    "reference_label": REFERENCE_LABEL,
                    "reference_value": value,
                    "reference_reason": ref["reason"],
                    "differs": differs,
                    "changes": changes,
                }
            )
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """Per (dataset, calculator, version): cases, Gold-Solve answers, reference available, differs, changes."""
    out: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        key = (r["dataset"], r["calculator_id"], r["version"])
        s = out.setdefault(
            key,
            {
                "dataset": r["dataset"],
                "calculator_id": r["calculator_id"],
                "calculator_name": r["calculator_name"],
                "benchmark_version": r["benchmark_version"],
                "version": r["version"],
                "in_gold_solve": r["in_gold_solve"],
                "cases": 0,
                "benchmark_correct": 0,
                "reference_available": 0,
                "differs": 0,
                "changes": 0,
                "gold_solve_changes": 0,
                "unavailable_reasons": set(),
            },
        )
        s["cases"] += 1
        s["benchmark_correct"] += int(bool(r["benchmark_correct"]))
        if r["reference_value"] is not None:
            s["reference_available"] += 1
        else:
            s["unavailable_reasons"].add(_short_reason(r["reference_reason"]))
        s["differs"] += int(bool(r["differs"]))
        s["changes"] += int(bool(r["changes"]))
        s["gold_solve_changes"] += int(bool(r["changes"]) and r["in_gold_solve"])
    result = []
    for s in out.values():
        s["unavailable_reasons"] = "; ".join(sorted(x for x in s["unavailable_reasons"] if x))
        result.append(s)
    return sorted(result, key=lambda s: (s["dataset"], s["calculator_id"], s["version"]))


def _short_reason(reason: str | None) -> str:
    if not reason:
        return ""
    if "missing from the gold entities" in reason:
        names = reason.split("variable", 1)[1].split("missing", 1)[0].strip().lstrip("s").strip(" []'\"")
        return f"gold variables lack {names.replace(chr(39), '')}"
    return reason.split(": ", 1)[-1][:80]


__all__ = ["case_rows", "summarise"]

"""Beyond the paper: the router arms (s20: coverage, accuracy and gaps; s21: risk-coverage) from their full records
(harness.analysis.router_report), and formula versions as explicit inputs (s22). Built only when the results hold
router arms or rows at a non-benchmark formula version; the paper's index does not list them otherwise."""

from __future__ import annotations

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.router_report import GOLD_FIRST, curves, default_m, matched_records, router_comparisons
from harness.analysis.stats.arrays import StatRecord
from harness.analysis.stats.families import arm_label
from harness.analysis.stats.labels import model_label
from harness.analysis.stats.paired import accuracy, paired_gaps
from harness.analysis.stats.risk_coverage import single_arm_point
from harness.analysis.stats.version_effects import case_rows, summarise
from harness.analysis.table_format import SECTION, Omit, Table, fmt, fmt_ci
from harness.analysis.tables.cells import gap_cell
from harness.analysis.tables.spec import TableSpec
from harness.arms.registry import matched_arms
from harness.data.dataset import load_dataset
from harness.data.errors import DatasetError
from harness.run.record import LibraryReference


def table_s20(an: Analysis) -> Table:
    crvs = curves(an)
    if not crvs:
        raise Omit("no router arm ran")
    gaps = paired_gaps(an.data, router_comparisons(an.data.arms), an.resampler).rows
    gap = {(g["model"], g["solver"], g["reference"]): g for g in gaps}
    rows = []
    for c in crvs:
        point = next(p for p in c.points if p.label == f"m={default_m(an, c)}")
        acc = accuracy(an.data, c.model, c.arm)
        total = sum(c.routes.values())
        shares = " / ".join(f"{100 * c.routes[r] / total:.1f}" for r in ("library", "programs", "abstain"))
        rows.append(
            [
                model_label(c.model),
                arm_label(c.arm),
                fmt(100 * point.coverage),
                fmt(100 * point.accuracy),
                fmt(acc["mean"]) if acc else "\u2013",
                shares,
                gap_cell(gap.get((c.model, c.arm, matched_arms()[c.arm]))),
                gap_cell(gap.get((c.model, c.arm, GOLD_FIRST))),
            ]
        )
    notes = [
        "Coverage: % of case-seed rows answered; Acc. answered: % correct among them; Full acc.: abstentions "
        "count wrong (mean over seeds). Routes: % library / programs / abstain.",
        "Gaps (pp, full-set accuracy, router minus reference) on the cases and seeds both have, "
        "calculator-cluster 95% interval on the analysis's shared draws. Matched arm: Program-Solve for "
        "routed-gold, Blind Program-Solve for routed-blind. Gold-first: Gold-Solve, else Program-Solve.",
        "Beyond the paper: the paper recommends this configuration but never runs it.",
    ]
    return Table(
        "s20",
        "Beyond the paper: router arms (library, else m of k programs, else abstain)",
        [
            "Model",
            "Arm",
            "Coverage",
            "Acc. answered",
            "Full acc.",
            "Routes L/P/A",
            "Gap vs matched",
            "Gap vs Gold-first",
        ],
        rows,
        notes,
        "ll" + "r" * 6,
    )


def table_s21(an: Analysis) -> Table:
    crvs = curves(an)
    if not crvs:
        raise Omit("no router arm ran")
    rows = []
    for c in crvs:
        rows.append(
            [
                SECTION,
                f"{model_label(c.model)}, {arm_label(c.arm)}: k = {c.k}, {c.n_rows} rows, "
                f"{c.n_calculators} calculators; AURC {fmt(c.aurc, 4)} {fmt_ci(*c.aurc_ci)}",
            ]
        )
        for p in c.points:
            rows.append(
                [
                    p.label,
                    fmt(100 * p.coverage),
                    fmt_ci(*(100 * np.array(p.coverage_ci))),
                    fmt(100 * p.accuracy),
                    fmt_ci(*(100 * np.array(p.accuracy_ci))),
                    fmt(100 * p.full_accuracy),
                ]
            )
        matched = matched_records(an, c)
        if matched:
            e = single_arm_point(matched, matched_arms()[c.arm])
            rows.append(
                [
                    f"program only ({arm_label(matched_arms()[c.arm], short=True)})",
                    fmt(100 * e["coverage"]),
                    "\u2013",
                    fmt(100 * e["accuracy"]),
                    "\u2013",
                    fmt(100 * e["full_accuracy"]),
                ]
            )
    notes = [
        "Computed from the stored k program outcomes of every router record, without new model calls. "
        "At threshold m the router answers a row from the library, or when at least m of its k programs "
        "agree; 'library only' answers library rows alone. Program only: the matched single-program arm.",
        "Coverage and accuracy on answered rows (%) with calculator-cluster 95% bands; AURC: area under the "
        "risk (1 - accuracy) against coverage curve, rows ranked by agreement (ties in random order), "
        "lower is better.",
    ]
    return Table(
        "s21",
        "Beyond the paper: risk-coverage of the router arms",
        ["Point", "Coverage", "95% band", "Acc. answered", "95% band", "Full acc."],
        rows,
        notes,
        "lrrrrr",
    )


def table_s22(an: Analysis) -> Table:
    versioned = an.data.versioned
    if not versioned:
        raise Omit("no row ran at a non-benchmark formula version")
    rows = [
        [SECTION, "Rows run at a non-benchmark version: benchmark gold and library-derived reference, separate columns"]
    ]
    groups: dict[tuple[str, str, int, str], list[tuple[StatRecord, LibraryReference]]] = {}
    for r in versioned:
        if r.reference is not None:
            groups.setdefault((r.model, r.arm, r.calculator_id, r.reference["version"]), []).append((r, r.reference))
    for (model, arm, cid, version), rs in sorted(groups.items()):
        ref_ok = [ref["correct"] for _, ref in rs if ref["correct"] is not None]
        rows.append(
            [
                model_label(model),
                arm_label(arm, short=True),
                str(cid),
                version,
                str(len(rs)),
                fmt(100 * float(np.mean([x.correct for x, _ in rs]))),
                fmt(100 * float(np.mean(ref_ok))) if ref_ok else "n/a",
                str(sum(1 for _, ref in rs if ref["value"] is None)),
            ]
        )
    dataset_name = versioned[0].dataset
    summary: list[dict] = []
    if dataset_name is None:  # a record without its dataset's name: nothing to load (never a file named "None")
        note = "Gold-Solve change counts omitted: the records name no dataset."
    else:
        try:
            summary, note = summarise(case_rows(load_dataset(dataset_name))), ""
        except (DatasetError, OSError) as exc:  # a genuinely absent dataset (not on this machine) drops this block
            note = f"Gold-Solve change counts omitted: dataset {dataset_name!r} not loadable ({exc})."
    if summary:
        rows.append([SECTION, f"Gold-Solve library on {dataset_name}: answers that change when the version is chosen"])
        for s in summary:
            where = "" if s["in_gold_solve"] else " (outside Gold-Solve's 22)"
            rows.append(
                [
                    "library",
                    "Gold lib.",
                    str(s["calculator_id"]),
                    s["version"],
                    str(s["cases"]),
                    f"{s['benchmark_correct']} correct at {s['benchmark_version']}{where}",
                    f"{s['changes']} change, {s['differs']} differ" if s["reference_available"] else "n/a",
                    str(s["cases"] - s["reference_available"]),
                ]
            )
    notes = [
        "Benchmark acc.: % correct against the benchmark's gold (which exists only for the benchmark's "
        "version). Reference agr.: % of answers within the benchmark's tolerance of the library-derived "
        "reference (the chosen version's library function on the gold variables); never benchmark gold.",
        "Gold-Solve block: 'change' = the chosen version's value lies outside the benchmark tolerance (+-5% "
        "decimals, exact integers) of the benchmark version's value; 'differ' = any difference at 3 decimals. "
        "No ref.: rows whose gold variables lack an input the version needs (e.g. albumin and sex for MELD 3.0, "
        "eGFR for PREVENT).",
    ]
    if note:
        notes.append(note)
    return Table(
        "s22",
        "Beyond the paper: formula versions as explicit inputs",
        ["Model", "Arm", "Calc.", "Version", "Rows", "Benchmark acc.", "Reference agr.", "No ref."],
        rows,
        notes,
        "llllrrrr",
    )


SPECS = (
    TableSpec("s20", "router", table_s20, paper=False),
    TableSpec("s21", "router", table_s21, paper=False),
    TableSpec("s22", "router", table_s22, paper=False),
)

"""The paired gaps: Table 2, the syntax-lines and note-budget ablations (s3, s4), every declared gap (s5), the headline
gaps by audit set (s10), the library-first hybrids (s13, s18), note budget against variable access (s16), and what
recall loses: the calculators the blind arm loses on every seed (s7) and one case with both programs (s8)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.catalog import AUDIT_LABELS
from harness.analysis.stats.families import (
    Comparison,
    arm_label,
    budget_comparisons,
    declared,
    fallback_comparisons,
    headline,
    shown_in,
)
from harness.analysis.stats.hybrids import HYBRIDS, library_share
from harness.analysis.stats.labels import model_label
from harness.analysis.table_format import MINUS, SECTION, Omit, Table, fmt, fmt_ci, fmt_p, fmt_signed
from harness.analysis.tables.cells import gap_cell, stored_records
from harness.analysis.tables.spec import TableSpec
from harness.arms.registry import ARMS
from harness.run.record import Record

S7_MIN_PAIRS = 10
S7_TOP = 6
S8_RULE = (2, 42, "Qwen/Qwen2.5-7B-Instruct")  # Cockcroft-Gault, seed 42, the 7B model


def _per_model_gap_table(
    an: Analysis, name: str, title: str, blocks: Sequence[tuple[str, Sequence[Comparison]]], notes: list[str]
) -> Table:
    d = an.data
    cols = ["Comparison", "Access"] + [model_label(m) for m in d.models]
    rows = []
    for heading, comps in blocks:
        got = [c for c in comps if any(an.gap(m, c.solver, c.reference, c.subset) for m in d.models)]
        if not got:
            continue
        if heading:
            rows.append([SECTION, heading])
        for c in got:
            rows.append([c.label, c.access] + [gap_cell(an.gap(m, c.solver, c.reference, c.subset)) for m in d.models])
    if not rows:
        raise Omit("no declared comparison has both arms")
    return Table(name, title, cols, rows, notes, "ll" + "r" * len(d.models))


def table2(an: Analysis) -> Table:
    notes = [
        "Paired gaps (pp), solver minus reference, on the cases and seeds both arms ran; 95% "
        f"calculator-cluster bootstrap percentile intervals ({an.resampler.draws:,} draws, seed "
        f"{an.resampler.seed}), unadjusted for multiplicity.",
        an.seeds_note(),
    ]
    return _per_model_gap_table(
        an,
        "table2",
        "Paired gaps with calculator-cluster intervals",
        [("", declared("primary")), ("Exploratory, prompt selected on the test split", declared("syntax")[:2])],
        notes,
    )


def table_s3(an: Analysis) -> Table:
    """The comparisons declared for s3 (harness.arms.spec.Gap.tables); a model's row when one of the syntax
    family's has both arms."""
    d = an.data
    comps = shown_in("s3")
    rows = []
    for m in d.models:
        cells = [an.gap(m, c.solver, c.reference) for c in comps]
        if all(g is None for c, g in zip(comps, cells) if c.family == "syntax"):
            continue
        rows.append([model_label(m)] + [gap_cell(c) for c in cells])
    if not rows:
        raise Omit("Program-Solve + syntax did not run")
    cols = ["Model"] + [c.label for c in comps]
    return Table(
        "s3",
        "Syntax-lines ablation",
        cols,
        rows,
        ["Paired gaps (pp) with calculator-cluster 95% intervals, on the cases both arms ran."],
    )


def _read(arm: str) -> str:
    """How much of the note an arm reads, from its spec: "whole note" or "N words"."""
    n = ARMS[arm].note_words if arm in ARMS else None
    return "whole note" if n is None else f"{n} words"


def table_s4(an: Analysis) -> Table:
    d = an.data
    rows = []
    for c in budget_comparisons(d.arms):
        for m in d.models:
            g = an.gap(m, c.solver, c.reference)
            if g is None:
                continue
            rows.append(
                [
                    model_label(m),
                    arm_label(c.solver),
                    _read(c.solver),
                    fmt(g["solver_acc"]),
                    _read(c.reference),
                    fmt(g["reference_acc"]),
                    gap_cell(g),
                ]
            )
    if not rows:
        raise Omit("no note-budget variant ran beside the arm it caps")
    return Table(
        "s4",
        "Note-budget ablation (each arm against itself with a shorter note)",
        ["Model", "Arm", "Reads", "Acc.", "Capped at", "Capped acc.", "Gap"],
        rows,
        [
            "Accuracy (%) on the paired cases and seeds; gap: the arm as it reads minus the arm capped (pp), "
            "calculator-cluster 95% interval. Note budgets as each arm's spec holds them "
            "(harness/arms/registry.py)."
        ],
        "ll" + "r" * 5,
    )


def table_s5(an: Analysis) -> Table:
    rows = []
    for g in an.gaps:
        if g["family"].startswith("audit-"):
            continue
        rows.append(
            [
                model_label(g["model"]),
                g["family"],
                g["comparison"],
                str(g["n_cases"]),
                str(len(g["seeds"])),
                fmt_signed(g["gap"]),
                fmt_ci(g["case_lo"], g["case_hi"]),
                fmt_ci(g["cluster_lo"], g["cluster_hi"]),
                f"{g['mcnemar_b']}/{g['mcnemar_c']}",
                f"{fmt_p(g['mcnemar_p'])} ({fmt_p(g['mcnemar_p_holm'])})",
                f"{fmt_p(g['perm_p_case'])} ({fmt_p(g['perm_p_case_holm'])})",
                f"{fmt_p(g['perm_p_calc'])} ({fmt_p(g['perm_p_calc_holm'])})",
                fmt(g["icc"]),
                fmt(g["design_effect"], 1),
                fmt(g["effective_n"], 0),
            ]
        )
    if not rows:
        raise Omit("no declared comparison has both arms")
    cols = [
        "Model",
        "Family",
        "Comparison",
        "Cases",
        "Seeds",
        "Gap",
        "Case CI",
        "Cluster CI",
        "b/c",
        "McNemar p (Holm)",
        "Perm. p case (Holm)",
        "Perm. p calc. (Holm)",
        "ICC",
        "DE",
        "ESS",
    ]
    r = an.resampler
    notes = [
        f"Solver minus reference (pp). Case and calculator-cluster bootstrap, {r.draws:,} draws, seed {r.seed}, "
        "percentile 95% intervals, one resample matrix for every gap. McNemar: exact, on the per-case outcome "
        "'correct on a strict majority of the paired seeds' (b: solver only, c: reference only). Permutation: "
        "sign flips of seed-averaged per-case differences (case) or per-calculator sums (calc.), exact when at "
        "most 16 differences are non-zero. Holm within model and family. ICC(1) of the per-case differences "
        "within calculators; DE = 1 + (m - 1) ICC; ESS = cases / DE."
    ]
    return Table("s5", "Every paired gap", cols, rows, notes + an.notes, "lll" + "r" * 12)


def table_s10(an: Analysis) -> Table:
    d = an.data
    subsets = ("all", "not_replaced", "no_issue")
    sizes = {
        s: len(
            [
                c
                for c in d.calculators
                if s == "all"
                or (an.audit.get(c) != "replaced" if s == "not_replaced" else an.audit.get(c) == "no_issue")
            ]
        )
        for s in subsets
    }
    cols = ["Model", "Comparison"] + [f"{AUDIT_LABELS[s]} ({sizes[s]} calc.)" for s in subsets]
    rows = []
    for m in d.models:
        for c in headline():
            cells = [an.gap(m, c.solver, c.reference, s) for s in subsets]
            if all(x is None for x in cells):
                continue
            rows.append([model_label(m), c.label] + [gap_cell(x) for x in cells])
    if not rows:
        raise Omit("none of the headline comparisons has both arms")
    return Table(
        "s10",
        "Exploratory: headline gaps by audit calculator set",
        cols,
        rows,
        ["Paired gaps (pp) with calculator-cluster 95% intervals; calculator counts are those present in the results."],
    )


def table_s13(an: Analysis) -> Table:
    d = an.data
    rows = []
    for name, _lib, fb in HYBRIDS:
        for m in d.models:
            g = an.gap(m, name, fb)
            if g is None:
                continue
            rows.append(
                [
                    model_label(m),
                    arm_label(name),
                    fmt(g["solver_acc"]),
                    arm_label(fb, short=True),
                    fmt(g["reference_acc"]),
                    gap_cell(g),
                ]
            )
    if not rows:
        raise Omit("no hybrid: a library arm and a fallback arm never ran together")
    return Table(
        "s13",
        "Library-first hybrid baselines",
        ["Model", "Baseline", "Acc.", "Reference", "Ref. acc.", "Gap"],
        rows,
        [
            "Assembled per case and seed; gap is baseline minus the fallback arm alone (pp), "
            "calculator-cluster 95% interval."
        ],
    )


def table_s16(an: Analysis) -> Table:
    rows = []
    for m in an.data.models:
        for c in declared("budget-variables"):
            g = an.gap(m, c.solver, c.reference)
            if g is not None:
                rows.append(
                    [
                        model_label(m),
                        arm_label(c.solver),
                        arm_label(c.reference),
                        fmt(g["solver_acc"]),
                        fmt(g["reference_acc"]),
                        gap_cell(g),
                    ]
                )
    if not rows:
        raise Omit("the note-budget / variable-access arms did not run in pairs")
    return Table(
        "s16",
        "Note budget and variable access",
        ["Model", "Left", "Right", "Left acc.", "Right acc.", "Gap"],
        rows,
        ["Gap is left minus right (pp) with calculator-cluster 95% interval."],
    )


def table_s18(an: Analysis) -> Table:
    rows = []
    for lib, c in fallback_comparisons():
        prog, arith = c.solver, c.reference
        for m in an.data.models:
            g = an.gap(m, prog, arith)
            if g is None:
                continue
            share = 100 * library_share(an.data, m, prog)
            rows.append(
                [
                    model_label(m),
                    f"{lib.capitalize()}-first",
                    fmt(share),
                    fmt(g["solver_acc"]),
                    fmt(g["reference_acc"]),
                    gap_cell(g),
                ]
            )
    if not rows:
        raise Omit("no library-first baseline has both fallbacks")
    return Table(
        "s18",
        "Library-first baselines by fallback",
        ["Model", "Baseline", "Library share", "Prog. fallback", "Arith. fallback", "Gap"],
        rows,
        [
            f"Gap: Program-Solve fallback {MINUS} Open-book fallback on the same cases and seeds (pp), "
            "calculator-cluster 95% interval. Library share: % of case-seed rows the library answers."
        ],
    )


# ---- s7, s8: what recall loses ------------------------------------------------------------------------
def _recall_pair(table: str) -> tuple[str, str] | None:
    """(formula given, formula recalled): the comparison declared for s7 or s8 (harness.arms.spec.Gap.tables)."""
    comps = shown_in(table)
    return (comps[0].solver, comps[0].reference) if comps else None


class RecallLoss(TypedDict):
    """One calculator the blind arm loses on every seed (recall_losses): the pairs lost and both arms' accuracy."""

    calculator_id: int
    name: str
    pairs: int
    evaluated: int
    solver: float
    reference: float


def recall_losses(an: Analysis, min_pairs: int = S7_MIN_PAIRS, top: int = S7_TOP) -> dict[str, list[RecallLoss]]:
    """model -> calculators the blind arm loses on every seed: pairs (seed, case) with Program-Solve
    correct and Blind not, >= min_pairs pairs and >= 1 pair at every seed both arms ran; top by pairs (the two arms:
    the comparison declared for s7, solver and reference)."""
    d = an.data
    out: dict[str, list[RecallLoss]] = {}
    pair = _recall_pair("s7")
    if pair is None:
        return out
    given, recalled = pair
    for m in d.models:
        if not (d.has(m, given) and d.has(m, recalled)):
            continue
        ps, bl = d.block(m, given), d.block(m, recalled)
        seeds = d.seed_mask(m, given) & d.seed_mask(m, recalled)
        both = ~np.isnan(ps) & ~np.isnan(bl)
        lost = both & (ps == 1) & (bl == 0)
        rows: list[RecallLoss] = []
        for k, cid in enumerate(d.calculators):
            cases = d.cluster == k
            per_seed = lost[:, cases].sum(axis=1)
            pairs = int(per_seed[seeds].sum())
            if pairs < min_pairs or not np.all(per_seed[seeds] >= 1):
                continue
            n = int(both[seeds][:, cases].sum())
            rows.append(
                {
                    "calculator_id": cid,
                    "name": d.calculator_names.get(cid, str(cid)),
                    "pairs": pairs,
                    "evaluated": n,
                    "solver": 100 * float(np.nansum(ps[seeds][:, cases]) / max(n, 1)),
                    "reference": 100 * float(np.nansum(bl[seeds][:, cases]) / max(n, 1)),
                }
            )
        rows.sort(key=lambda r: (-r["pairs"], r["calculator_id"]))
        out[m] = rows[:top]
    return out


def table_s7(an: Analysis, min_pairs: int = S7_MIN_PAIRS, top: int = S7_TOP) -> Table:
    losses = recall_losses(an, min_pairs, top)
    if not losses:
        raise Omit("Program-Solve and Blind Program-Solve did not both run for any model")
    rows = []
    for m, items in losses.items():
        if not items:
            rows.append([model_label(m), f"(no calculator reaches {min_pairs} pairs lost at every seed)", "", "", ""])
        for r in items:
            rows.append(
                [
                    model_label(m),
                    f"{r['name']} ({r['calculator_id']})",
                    str(r["pairs"]),
                    fmt(r["solver"]),
                    fmt(r["reference"]),
                ]
            )
    return Table(
        "s7",
        "What recall loses: calculators the blind arm loses on every seed",
        ["Model", "Calculator", "Pairs", "Prog. acc.", "Blind acc."],
        rows,
        [
            f"Pairs: case-seed pairs where Program-Solve (formula and gold variables given) is correct and "
            f"Blind Program-Solve is not; listed when at least {min_pairs} pairs and at least one at every "
            f"seed both arms ran; top {top} per model. Accuracy (%) on those calculators' case-seed rows."
        ],
        "llrrr",
    )


def worked_case(an: Analysis) -> tuple[Record, Record, str] | None:
    """(program-solve record, blind record, rule used). Rule: Cockcroft-Gault, seed 42, Qwen2.5-7B;
    fallback: among (model, seed, case) with both programs written, prefer Program-Solve correct and
    Blind not, then Program-Solve correct, then any; first by model, seed, case id (the two arms: the comparison
    declared for s8, solver and reference)."""
    pair = _recall_pair("s8")
    if pair is None:
        return None
    given, recalled = pair
    recs = stored_records(an, given, recalled)
    idx = {(r.model, r.arm, r.seed, r.case_id): r for r in recs if r.arm in pair}
    calc, seed, model = S8_RULE
    for (m, arm, s, case), r in sorted(idx.items()):
        if (m, s, arm) == (model, seed, given) and r.calculator_id == calc:
            other = idx.get((m, recalled, s, case))
            if other is not None:
                return r, other, f"the paper's case: calculator {calc}, seed {seed}, {model}"
    pairs = []
    for (m, arm, s, case), r in idx.items():
        other = idx.get((m, recalled, s, case))
        if arm == given and other is not None and r.program and other.program:
            rank = 0 if (r.correct and not other.correct) else 1 if r.correct else 2
            pairs.append((rank, m, s, case, r, other))
    if not pairs:
        return None
    rank, m, s, case, r, other = min(pairs, key=lambda p: p[:4])
    why = ["Program-Solve correct and Blind not", "Program-Solve correct", "no pair with Program-Solve correct"][rank]
    return (
        r,
        other,
        (
            f"fallback (the paper's case, calculator {calc} at seed {seed} for {model}, is not in these "
            f"results): first model, seed and case with both programs written and {why}"
        ),
    )


def _answer_text(rec: Record) -> str:
    ans = rec.answer
    return "none" if ans is None else json.dumps(ans)


def _program_text(rec: Record) -> str:
    """A single-program arm's program ('' when it wrote none)."""
    return rec.program if isinstance(rec.program, str) else ""


def table_s8(an: Analysis) -> Table:
    found = worked_case(an)
    if found is None:
        raise Omit("no case has both a Program-Solve and a Blind Program-Solve program")
    ps, bl, rule = found
    a = _program_lines(_program_text(ps))
    b = _program_lines(_program_text(bl))
    rows = [
        [x.replace("\t", "    "), y.replace("\t", "    ")]
        for x, y in zip(a + [""] * (len(b) - len(a)), b + [""] * (len(a) - len(b)))
    ]
    rows.append([SECTION, "Outcome"])
    rows.append(
        [
            f"returned {_answer_text(ps)}: {ps.outcome}, {'correct' if ps.correct else 'wrong'}",
            f"returned {_answer_text(bl)}: {bl.outcome}, {'correct' if bl.correct else 'wrong'}",
        ]
    )
    gold = ps.gold.answer if ps.gold is not None else "?"
    return Table(
        "s8",
        f"One case, formula given against formula recalled: {ps.calculator_name or ''} "
        f"(case {ps.case_id}), seed {ps.seed}, {model_label(ps.model)}, gold {gold}",
        ["Formula given (Program-Solve)", "Formula recalled (Blind Program-Solve)"],
        rows,
        [
            f"Chosen by rule: {rule}.",
            "Both programs as the model wrote them (one line per row; a line "
            f"repeated over and over is shown once with its count, and a program longer than "
            f"{S8_MAX_LINES} lines is cut, as a small model's degenerate output can be: the record holds it "
            "whole); the outcome row gives the executor's return value and the scorer's verdict.",
        ],
        "ll",
    )


S8_MAX_LINES = 40  # a program shown in s8; a degenerate one (thousands of lines) would fill the report


def _program_lines(program: str) -> list[str]:
    """A program's lines for s8: runs of a repeated line (or of a repeated group of up to 4 lines) collapsed to
    one copy and a count, at most S8_MAX_LINES lines, the cut said."""
    lines = [x.replace("\t", "    ") for x in program.rstrip("\n").split("\n")]
    out: list[str] = []
    i = 0
    while i < len(lines):
        for width in range(1, 5):
            group = lines[i : i + width]
            reps = 1
            while lines[i + reps * width : i + (reps + 1) * width] == group:
                reps += 1
            if reps >= 3 and len(group) == width:
                out += group + [
                    f"[... the {'line' if width == 1 else f'{width} lines'} above repeated {reps - 1} more times]"
                ]
                i += reps * width
                break
        else:
            out.append(lines[i])
            i += 1
    if len(out) > S8_MAX_LINES:
        out = out[: S8_MAX_LINES - 1] + [f"[... {len(out) - S8_MAX_LINES + 1} more lines not shown]"]
    return out


SPECS = (
    TableSpec("table2", "gaps", table2),
    TableSpec("s3", "gaps", table_s3),
    TableSpec("s4", "gaps", table_s4),
    TableSpec("s5", "gaps", table_s5),
    TableSpec("s7", "gaps", table_s7),
    TableSpec("s8", "gaps", table_s8),
    TableSpec("s10", "gaps", table_s10),
    TableSpec("s13", "gaps", table_s13),
    TableSpec("s16", "gaps", table_s16),
    TableSpec("s18", "gaps", table_s18),
)

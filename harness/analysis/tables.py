"""The paper's tables, formatted from one analysis (harness.analysis.results_analysis): Table 1, Table 2 and
the supplementary tables s1-s6, s10-s13, s16, s18, s19 that the correctness arrays determine, plus the
record-reading tables of harness.analysis.tables_supplementary and the router / formula-version tables.

Each `table_*` builder turns the analysis into a `Table` (harness.analysis.table_format) or raises `Omit`
with the reason it cannot (missing arms or seeds); `build_all` writes every table as Markdown, LaTeX
(booktabs) and CSV plus an `index.md` naming what was omitted and why. The same results and seed give
byte-identical files (`make verify` relies on it).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from harness.analysis import tables_supplementary as sup
from harness.analysis.results_analysis import Analysis, analyse
from harness.analysis.router_report import (GOLD_FIRST, curves, default_m, matched_records,
                                            router_comparisons, router_records)
from harness.analysis.stats.arrays import OUTCOME_CODE
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.analysis.stats.catalog import AUDIT_GROUPS, AUDIT_LABELS
from harness.analysis.stats.families import BUDGET_VS_VARIABLES, HEADLINE, PRIMARY, SYNTAX, arm_label, budget_comparisons
from harness.analysis.stats.hybrids import HYBRIDS, LIBRARIES, hybrid_name, library_share
from harness.analysis.stats.labels import model_label, synthetic_notice
from harness.analysis.stats.paired import accuracy, paired_gaps
from harness.analysis.stats.risk_coverage import single_arm_point
from harness.analysis.stats.version_effects import case_rows, summarise
from harness.analysis.table_format import (MINUS, SECTION, Omit, Table, fmt, fmt_ci, fmt_p, fmt_signed,
                                           tex_escape)
from harness.arms.registry import ladder, matched_arms, model_free_arms, program_table_arms
from harness.core.outcomes import RowOutcome
from harness.data.dataset import load_dataset
from harness.data.errors import DatasetError

# Table 1 rows: arm -> (formula, variables, executes), as the paper states them.
LEVER_ARMS = ("blind", "blind-vote", "blind-repair", "blind-repair-vote")
AUDIT_ARMS = ("open-book", "program-solve", "blind")

__all__ = ["build_all", "build_tables", "write_tables", "extension_tables", "PAPER_TABLES", "BUILDERS"]


# ---- builders -----------------------------------------------------------------------------------
def _acc_cell(an: Analysis, model: str, arm: str, cases=None, sd: bool = False) -> str:
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


def _gap_cell(row: dict | None) -> str:
    if row is None:
        return "\u2013"
    return f"{fmt_signed(row['gap'])} {fmt_ci(row['cluster_lo'], row['cluster_hi'])}"


def table1(an: Analysis) -> Table:
    d = an.data
    cells = ladder()
    arms = [a for a in cells if any(d.has(m, a) for m in d.models)]
    if not arms:
        raise Omit("none of the ladder arms ran")
    impl = an.impl_mask()
    cols = ["Arm", "Formula", "Variables", "Executes"]
    models = upper_block_models(an)
    for m in models:
        cols.append(f"{model_label(m)} Impl. n={int(impl.sum())}")
        cols.append(f"{model_label(m)} Full n={d.n_cases}")
    rows = []
    for arm in arms:
        row = [arm_label(arm), *cells[arm]]
        for m in models:
            row.append(_acc_cell(an, m, arm, impl))
            row.append(_acc_cell(an, m, arm))
        rows.append(row)
    notes = [f"Accuracy (%), mean over seeds ({an.seeds_note()}). Impl.: cases of the library's calculators; "
             "Full: every case in the results. Superscript n=N: the arm covers only N cases of the column; "
             "1 seed: it ran at one seed of several.", *_omitted(an, cells)]
    return Table("table1", "Accuracy ladder (Impl. and Full)", cols, rows, notes, "llll" + "r" * (len(cols) - 4))


def upper_block_models(an: Analysis) -> list[str]:
    """Table 1's upper block: the paper's main checkpoints when the results hold one, else every model
    (the other checkpoints then go to the lower block, table1-other)."""
    if any(m in sup.MAIN_CHECKPOINTS for m in an.data.models):
        others = set(sup.other_checkpoints(an))
        return [m for m in an.data.models if m not in others]
    return list(an.data.models)


def _omitted(an: Analysis, arms) -> list[str]:
    missing = [a for a in arms if not any(an.data.has(m, a) for m in an.data.models)]
    return [f"Omitted, no results: {', '.join(arm_label(a) for a in missing)}."] if missing else []


def _per_model_gap_table(an: Analysis, name, title, blocks, notes) -> Table:
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
            rows.append([c.label, c.access] + [_gap_cell(an.gap(m, c.solver, c.reference, c.subset)) for m in d.models])
    if not rows:
        raise Omit("no declared comparison has both arms")
    return Table(name, title, cols, rows, notes, "ll" + "r" * len(d.models))


def table2(an: Analysis) -> Table:
    notes = ["Paired gaps (pp), solver minus reference, on the cases and seeds both arms ran; 95% "
             f"calculator-cluster bootstrap percentile intervals ({an.resampler.draws:,} draws, seed "
             f"{an.resampler.seed}), unadjusted for multiplicity.", an.seeds_note()]
    return _per_model_gap_table(an, "table2", "Paired gaps with calculator-cluster intervals",
                                [("", PRIMARY), ("Exploratory, prompt selected on the test split", SYNTAX[:2])], notes)


def table_s1(an: Analysis) -> Table:
    d = an.data
    arms = [a for a in d.arms if not a.startswith("hybrid:") and any(d.has(m, a) for m in d.models)]
    cols = ["Arm"] + [model_label(m) for m in d.models]
    rows = [[arm_label(a)] + [_acc_cell(an, m, a, sd=True) for m in d.models] for a in arms]
    return Table("s1", "Full ladders, every arm that ran", cols, rows,
                 [f"Accuracy (%), mean over seeds, seed SD in parentheses; superscripts: n=N when the arm covers "
                  f"N cases of all {d.n_cases}, 1 seed when it ran at one seed of several. {an.seeds_note()}."])


def table_s2(an: Analysis) -> Table:
    d = an.data
    arms = [a for a in LEVER_ARMS if any(d.has(m, a) for m in d.models)]
    if len(arms) < 2:
        raise Omit("fewer than two blind-lever arms ran")
    impl = an.impl_mask()
    notes = ["Accuracy (%), mean over seeds, seed SD in parentheses."]
    cols = ["Arm"] + [model_label(m) for m in d.models]
    rows = [[arm_label(a)] + [_acc_cell(an, m, a, impl, sd=True) for m in d.models] for a in arms]
    return Table("s2", "Blind Program-Solve levers on the covered subset", cols, rows, notes + _omitted(an, LEVER_ARMS))


def table_s3(an: Analysis) -> Table:
    d = an.data
    pairs = [("program-solve", "open-book"), ("program-solve-syntax", "open-book"), ("program-solve-syntax", "program-solve")]
    rows = []
    for m in d.models:
        cells = [an.gap(m, s, r) for s, r in pairs]
        if cells[1] is None and cells[2] is None:
            continue
        rows.append([model_label(m)] + [_gap_cell(c) for c in cells])
    if not rows:
        raise Omit("Program-Solve + syntax did not run")
    cols = ["Model", f"Prog. {MINUS} Arith.", f"Prog. + syntax {MINUS} Arith.", f"Prog. + syntax {MINUS} Prog."]
    return Table("s3", "Syntax-lines ablation", cols, rows,
                 ["Paired gaps (pp) with calculator-cluster 95% intervals, on the cases both arms ran."])


def table_s4(an: Analysis) -> Table:
    d = an.data
    rows = []
    for c in budget_comparisons(d.arms):
        for m in d.models:
            g = an.gap(m, c.solver, c.reference)
            if g is None:
                continue
            rows.append([model_label(m), arm_label(c.solver), fmt(g["solver_acc"]), fmt(g["reference_acc"]), _gap_cell(g)])
    if not rows:
        raise Omit("no *-250 note-budget arm ran beside its whole-note arm")
    return Table("s4", "Note-budget ablation (whole note vs 250 words)", ["Model", "Arm", "Whole note", "250 words", "Gap"],
                 rows, ["Accuracy (%) on the paired cases and seeds; gap whole minus 250 words with cluster interval."])


def table_s5(an: Analysis) -> Table:
    rows = []
    for g in an.gaps:
        if g["family"].startswith("audit-"):
            continue
        rows.append([
            model_label(g["model"]), g["family"], g["comparison"], str(g["n_cases"]), str(len(g["seeds"])),
            fmt_signed(g["gap"]), fmt_ci(g["case_lo"], g["case_hi"]), fmt_ci(g["cluster_lo"], g["cluster_hi"]),
            f"{g['mcnemar_b']}/{g['mcnemar_c']}", f"{fmt_p(g['mcnemar_p'])} ({fmt_p(g['mcnemar_p_holm'])})",
            f"{fmt_p(g['perm_p_case'])} ({fmt_p(g['perm_p_case_holm'])})",
            f"{fmt_p(g['perm_p_calc'])} ({fmt_p(g['perm_p_calc_holm'])})",
            fmt(g["icc"]), fmt(g["design_effect"], 1), fmt(g["effective_n"], 0),
        ])
    if not rows:
        raise Omit("no declared comparison has both arms")
    cols = ["Model", "Family", "Comparison", "Cases", "Seeds", "Gap", "Case CI", "Cluster CI", "b/c",
            "McNemar p (Holm)", "Perm. p case (Holm)", "Perm. p calc. (Holm)", "ICC", "DE", "ESS"]
    r = an.resampler
    notes = [f"Solver minus reference (pp). Case and calculator-cluster bootstrap, {r.draws:,} draws, seed {r.seed}, "
             "percentile 95% intervals, one resample matrix for every gap. McNemar: exact, on the per-case outcome "
             "'correct on a strict majority of the paired seeds' (b: solver only, c: reference only). Permutation: "
             "sign flips of seed-averaged per-case differences (case) or per-calculator sums (calc.), exact when at "
             "most 16 differences are non-zero. Holm within model and family. ICC(1) of the per-case differences "
             "within calculators; DE = 1 + (m - 1) ICC; ESS = cases / DE."]
    return Table("s5", "Every paired gap", cols, rows, notes + an.notes, "lll" + "r" * 12)


def table_s6(an: Analysis) -> Table:
    d = an.data
    code = OUTCOME_CODE
    dates = np.array([t in ("date", "weeks_days") for t in d.output_types])
    rows = []
    for m in d.models:
        for a in program_table_arms():
            if not d.has(m, a):
                continue
            oc = d.outcome_block(m, a)
            c = d.block(m, a)
            have = oc >= 0
            n = int(have.sum())
            counts = [int(np.sum(oc == code[k])) for k in (RowOutcome.ANSWERED, RowOutcome.NO_PROGRAM,
                                                              RowOutcome.SANDBOX_REJECTION, RowOutcome.RAISED_ERROR,
                                                              RowOutcome.WRONG_RETURN_KIND,
                                                              RowOutcome.UNREADABLE_VALUE, RowOutcome.ABSTAINED)]
            att = oc == code[RowOutcome.ANSWERED]
            acc = 100 * np.nansum(c) / n
            att_acc = 100 * np.nansum(np.where(att, c, 0)) / att.sum() if att.any() else float("nan")
            dmask = have & dates[None, :]
            dacc = 100 * np.nansum(np.where(dmask, c, 0)) / dmask.sum() if dmask.any() else float("nan")
            rows.append([model_label(m), arm_label(a), str(n), *map(str, counts), fmt(acc), fmt(att_acc), fmt(dacc)])
    if not rows:
        raise Omit("no program arm ran")
    cols = ["Model", "Arm", "Rows", "Answered", "No program", "Sandbox rej.", "Raised error", "Wrong kind",
            "Unreadable", "Abstained", "Acc.", "Att.", "Dates"]
    return Table("s6", "Outcome taxonomy of the program arms", cols, rows,
                 ["Case-seed rows pooled over the seeds run. Att.: accuracy on answered rows; Dates: accuracy on "
                  "date and gestational-age cases (n/a when none)."], "ll" + "r" * 11)


def table_s10(an: Analysis) -> Table:
    d = an.data
    subsets = ("all", "not_replaced", "no_issue")
    sizes = {s: len([c for c in d.calculators if s == "all" or (
        an.audit.get(c) != "replaced" if s == "not_replaced" else an.audit.get(c) == "no_issue")]) for s in subsets}
    cols = ["Model", "Comparison"] + [f"{AUDIT_LABELS[s]} ({sizes[s]} calc.)" for s in subsets]
    rows = []
    for m in d.models:
        for c in HEADLINE:
            cells = [an.gap(m, c.solver, c.reference, s) for s in subsets]
            if all(x is None for x in cells):
                continue
            rows.append([model_label(m), c.label] + [_gap_cell(x) for x in cells])
    if not rows:
        raise Omit("none of the headline comparisons has both arms")
    return Table("s10", "Exploratory: headline gaps by audit calculator set", cols, rows,
                 ["Paired gaps (pp) with calculator-cluster 95% intervals; calculator counts are those present in the results."])


def table_s11(an: Analysis) -> Table:
    d = an.data
    masks = {g: d.case_mask([c for c, grp in an.audit.items() if grp == g]) for g in AUDIT_GROUPS}
    cols = ["Model", "Arm"] + [f"{AUDIT_LABELS[g]} ({len(set(d.calculator_ids[masks[g]].tolist()))} calc.)" for g in AUDIT_GROUPS]
    rows = [[model_label(m), arm_label(a)] + [_acc_cell(an, m, a, masks[g]) if masks[g].any() else "\u2013" for g in AUDIT_GROUPS]
            for m in d.models for a in AUDIT_ARMS if d.has(m, a)]
    if not rows:
        raise Omit("none of Open-book arithmetic, Program-Solve, Blind Program-Solve ran")
    return Table("s11", "Exploratory: accuracy by audit group", cols, rows, ["Accuracy (%), mean over seeds."])


def _breakdown(oc: np.ndarray, c: np.ndarray, mask: np.ndarray) -> dict:
    code = OUTCOME_CODE
    sel = (oc >= 0) & mask[None, :]
    n = sel.sum()
    if n == 0:
        return {}
    pct = lambda x: 100 * float(np.sum(x & sel)) / n  # noqa: E731
    right = pct(c == 1)
    none_out = pct(np.isin(oc, [code[RowOutcome.NO_PROGRAM], code[RowOutcome.ABSTAINED]]))
    exec_fail = pct(np.isin(oc, [code[RowOutcome.SANDBOX_REJECTION], code[RowOutcome.RAISED_ERROR], code[RowOutcome.WRONG_RETURN_KIND]]))
    unread = pct(oc == code[RowOutcome.UNREADABLE_VALUE])
    return {"right": right, "wrong": pct((oc == code[RowOutcome.ANSWERED]) & (c == 0)), "none": none_out + exec_fail + unread,
            "no_output": none_out, "exec": exec_fail, "unread": unread}


def table_s12(an: Analysis) -> Table:
    d = an.data
    impl = an.impl_mask()
    rows = []
    for m in d.models:
        for a in [x for x in d.arms if not x.startswith("hybrid:")]:
            if not d.has(m, a):
                continue
            oc, c = d.outcome_block(m, a), d.block(m, a)
            full = _breakdown(oc, c, np.ones(d.n_cases, bool))
            row = [model_label(m), arm_label(a)]
            for mask in (impl, ~impl):
                b = _breakdown(oc, c, mask)
                row += [fmt(b.get(k, np.nan)) for k in ("right", "wrong", "none")]
            row += [fmt(full[k]) for k in ("right", "wrong", "no_output", "exec", "unread")]
            rows.append(row)
    cols = ["Model", "Arm", "Supp. right", "Supp. wrong", "Supp. none", "Unsupp. right", "Unsupp. wrong",
            "Unsupp. none", "Full right", "Full wrong", "No output", "Executor failure", "Unreadable"]
    notes = ["Percent of case-seed rows, seeds pooled. Supported: the library's calculators. No output: no program "
             "or abstained; executor failure: sandbox rejection, raised error or wrong return kind."]
    return Table("s12", "Outcome breakdown by library support", cols, rows, notes, "ll" + "r" * (len(cols) - 2))


def table_s13(an: Analysis) -> Table:
    d = an.data
    rows = []
    for name, lib, fb in HYBRIDS:
        for m in d.models:
            g = an.gap(m, name, fb)
            if g is None:
                continue
            rows.append([model_label(m), arm_label(name), fmt(g["solver_acc"]), arm_label(fb, short=True),
                         fmt(g["reference_acc"]), _gap_cell(g)])
    if not rows:
        raise Omit("no hybrid: a library arm and a fallback arm never ran together")
    return Table("s13", "Library-first hybrid baselines", ["Model", "Baseline", "Acc.", "Reference", "Ref. acc.", "Gap"],
                 rows, ["Assembled per case and seed; gap is baseline minus the fallback arm alone (pp), "
                        "calculator-cluster 95% interval."])


def table_s16(an: Analysis) -> Table:
    rows = []
    for m in an.data.models:
        for c in BUDGET_VS_VARIABLES:
            g = an.gap(m, c.solver, c.reference)
            if g is not None:
                rows.append([model_label(m), arm_label(c.solver), arm_label(c.reference), fmt(g["solver_acc"]),
                             fmt(g["reference_acc"]), _gap_cell(g)])
    if not rows:
        raise Omit("the note-budget / variable-access arms did not run in pairs")
    return Table("s16", "Note budget and variable access", ["Model", "Left", "Right", "Left acc.", "Right acc.", "Gap"],
                 rows, ["Gap is left minus right (pp) with calculator-cluster 95% interval."])


def table_s18(an: Analysis) -> Table:
    rows = []
    for lib in LIBRARIES:
        prog, arith = hybrid_name(lib, "program-solve"), hybrid_name(lib, "open-book")
        for m in an.data.models:
            g = an.gap(m, prog, arith)
            if g is None:
                continue
            share = 100 * library_share(an.data, m, prog)
            rows.append([model_label(m), f"{lib.capitalize()}-first", fmt(share), fmt(g["solver_acc"]),
                         fmt(g["reference_acc"]), _gap_cell(g)])
    if not rows:
        raise Omit("no library-first baseline has both fallbacks")
    return Table("s18", "Library-first baselines by fallback", ["Model", "Baseline", "Library share", "Prog. fallback",
                                                               "Arith. fallback", "Gap"], rows,
                 [f"Gap: Program-Solve fallback {MINUS} Open-book fallback on the same cases and seeds (pp), "
                  "calculator-cluster 95% interval. Library share: % of case-seed rows the library answers."])


def seed_agreement(block: np.ndarray) -> dict | None:
    """Agreement over seeds for a [S, N] correctness block (seeds with no rows dropped)."""
    block = block[~np.all(np.isnan(block), axis=1)]
    if block.shape[0] < 2:
        return None
    cases = ~np.isnan(block).any(axis=0)
    if not cases.any():
        return None
    b = block[:, cases]
    s = b.shape[0]
    pair = [np.mean(b[i] == b[j]) for i in range(s) for j in range(i + 1, s)]
    return {"seeds": s, "cases": int(cases.sum()), "agree": 100 * float(np.mean(np.all(b == b[0], axis=0))),
            "pairwise": 100 * float(np.mean(pair)), "right": 100 * float(np.mean(np.all(b == 1, axis=0))),
            "wrong": 100 * float(np.mean(np.all(b == 0, axis=0)))}


def table_s19(an: Analysis) -> Table:
    d = an.data
    rows = []
    for m in d.models:
        for a in d.arms:
            if a.startswith("hybrid:") or a in model_free_arms():
                continue
            if not d.has(m, a):
                continue
            s = seed_agreement(d.block(m, a))
            if s:
                rows.append([model_label(m), arm_label(a), str(s["seeds"]), str(s["cases"]), fmt(s["agree"], 1),
                             fmt(s["pairwise"], 1), fmt(s["right"], 1), fmt(s["wrong"], 1)])
    if not rows:
        raise Omit("no arm ran more than one seed")
    return Table("s19", "Seed agreement", ["Model", "Arm", "Seeds", "Cases", "Agree", "Pairwise", "Right", "Wrong"], rows,
                 ["Agree: % of cases all seeds score alike; Pairwise: mean over seed pairs; Right, Wrong: unanimous "
                  "cases. Cases present at every seed only."])


# ---- beyond the paper: router arms and formula versions (harness.analysis.router_report) ------------
def table_s20_router(an: Analysis, crvs: list) -> Table | None:
    if not crvs:
        return None
    gaps = paired_gaps(an.data, router_comparisons(an.data.arms), an.resampler).rows
    gap = {(g["model"], g["solver"], g["reference"]): g for g in gaps}
    rows = []
    for c in crvs:
        point = next(p for p in c.points if p.label == f"m={default_m(an, c)}")
        acc = accuracy(an.data, c.model, c.arm)
        total = sum(c.routes.values())
        shares = " / ".join(f"{100 * c.routes[r] / total:.1f}" for r in ("library", "programs", "abstain"))
        rows.append([model_label(c.model), arm_label(c.arm), fmt(100 * point.coverage), fmt(100 * point.accuracy),
                     fmt(acc["mean"]) if acc else "\u2013", shares,
                     _gap_cell(gap.get((c.model, c.arm, matched_arms()[c.arm]))),
                     _gap_cell(gap.get((c.model, c.arm, GOLD_FIRST)))])
    notes = ["Coverage: % of case-seed rows answered; Acc. answered: % correct among them; Full acc.: abstentions "
             "count wrong (mean over seeds). Routes: % library / programs / abstain.",
             "Gaps (pp, full-set accuracy, router minus reference) on the cases and seeds both have, "
             "calculator-cluster 95% interval on the analysis's shared draws. Matched arm: Program-Solve for "
             "routed-gold, Blind Program-Solve for routed-blind. Gold-first: Gold-Solve, else Program-Solve.",
             "Beyond the paper: the paper recommends this configuration but never runs it."]
    return Table("s20", "Beyond the paper: router arms (library, else m of k programs, else abstain)",
                 ["Model", "Arm", "Coverage", "Acc. answered", "Full acc.", "Routes L/P/A", "Gap vs matched",
                  "Gap vs Gold-first"], rows, notes, "ll" + "r" * 6)


def table_s21_risk_coverage(an: Analysis, crvs: list) -> Table | None:
    if not crvs:
        return None
    rows = []
    for c in crvs:
        rows.append([SECTION, f"{model_label(c.model)}, {arm_label(c.arm)}: k = {c.k}, {c.n_rows} rows, "
                              f"{c.n_calculators} calculators; AURC {fmt(c.aurc, 4)} {fmt_ci(*c.aurc_ci)}"])
        for p in c.points:
            rows.append([p.label, fmt(100 * p.coverage), fmt_ci(*(100 * np.array(p.coverage_ci))),
                         fmt(100 * p.accuracy), fmt_ci(*(100 * np.array(p.accuracy_ci))), fmt(100 * p.full_accuracy)])
        matched = matched_records(an, c)
        if matched:
            e = single_arm_point(matched, matched_arms()[c.arm])
            rows.append([f"program only ({arm_label(matched_arms()[c.arm], short=True)})", fmt(100 * e["coverage"]),
                         "\u2013", fmt(100 * e["accuracy"]), "\u2013", fmt(100 * e["full_accuracy"])])
    notes = ["Computed from the stored k program outcomes of every router record, without new model calls. "
             "At threshold m the router answers a row from the library, or when at least m of its k programs "
             "agree; 'library only' answers library rows alone. Program only: the matched single-program arm.",
             "Coverage and accuracy on answered rows (%) with calculator-cluster 95% bands; AURC: area under the "
             "risk (1 - accuracy) against coverage curve, rows ranked by agreement (ties in random order), "
             "lower is better."]
    return Table("s21", "Beyond the paper: risk-coverage of the router arms",
                 ["Point", "Coverage", "95% band", "Acc. answered", "95% band", "Full acc."], rows, notes, "lrrrrr")


def table_s22_formula_versions(an: Analysis) -> Table | None:
    versioned = an.data.versioned
    if not versioned:
        return None
    rows = [[SECTION, "Rows run at a non-benchmark version: benchmark gold and library-derived reference, "
                      "separate columns"]]
    groups: dict[tuple, list[dict]] = {}
    for r in versioned:
        groups.setdefault((r["model"], r["arm"], r["calculator_id"], r["reference"]["version"]), []).append(r)
    for (model, arm, cid, version), rs in sorted(groups.items()):
        ref_ok = [x["reference"]["correct"] for x in rs if x["reference"]["correct"] is not None]
        rows.append([model_label(model), arm_label(arm, short=True), str(cid), version, str(len(rs)),
                     fmt(100 * np.mean([bool(x["correct"]) for x in rs])),
                     fmt(100 * np.mean(ref_ok)) if ref_ok else "n/a",
                     str(sum(1 for x in rs if x["reference"]["value"] is None))])
    dataset_name = versioned[0].get("dataset")
    try:
        ds = load_dataset(dataset_name)
        summary = summarise(case_rows(ds))
    except (DatasetError, OSError) as exc:  # a genuinely absent dataset (not on this machine) drops this block
        summary, note = [], f"Gold-Solve change counts omitted: dataset {dataset_name!r} not loadable ({exc})."
    else:
        note = ""
    if summary:
        rows.append([SECTION, f"Gold-Solve library on {dataset_name}: answers that change when the version is chosen"])
        for s in summary:
            where = "" if s["in_gold_solve"] else " (outside Gold-Solve's 22)"
            rows.append(["library", "Gold lib.", str(s["calculator_id"]), s["version"], str(s["cases"]),
                         f"{s['benchmark_correct']} correct at {s['benchmark_version']}{where}",
                         f"{s['changes']} change, {s['differs']} differ" if s["reference_available"]
                         else "n/a", str(s["cases"] - s["reference_available"])])
    notes = ["Benchmark acc.: % correct against the benchmark's gold (which exists only for the benchmark's "
             "version). Reference agr.: % of answers within the benchmark's tolerance of the library-derived "
             "reference (the chosen version's library function on the gold variables); never benchmark gold.",
             "Gold-Solve block: 'change' = the chosen version's value lies outside the benchmark tolerance (+-5% "
             "decimals, exact integers) of the benchmark version's value; 'differ' = any difference at 3 decimals. "
             "No ref.: rows whose gold variables lack an input the version needs (e.g. albumin and sex for MELD 3.0, "
             "eGFR for PREVENT)."]
    if note:
        notes.append(note)
    return Table("s22", "Beyond the paper: formula versions as explicit inputs",
                 ["Model", "Arm", "Calc.", "Version", "Rows", "Benchmark acc.", "Reference agr.", "No ref."],
                 rows, notes, "llllrrrr")


def extension_tables(an: Analysis) -> list[Table]:
    """The router and formula-version tables these results determine (possibly none)."""
    crvs = curves(an) if router_records(an) else []
    return [t for t in (table_s20_router(an, crvs), table_s21_risk_coverage(an, crvs), table_s22_formula_versions(an)) if t is not None]


def _paper_order() -> dict:
    own = {"table1": table1, "table2": table2, "s1": table_s1, "s2": table_s2, "s3": table_s3, "s4": table_s4,
           "s5": table_s5, "s6": table_s6, "s10": table_s10, "s11": table_s11, "s12": table_s12, "s13": table_s13,
           "s16": table_s16, "s18": table_s18, "s19": table_s19}
    allb = {**own, **sup.BUILDERS}
    return {k: allb[k] for k in PAPER_TABLES}


# Every table id of the paper, in its order (the index lists each: built, or omitted with the reason).
PAPER_TABLES = ("table1", "table1-other", "table2", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10",
                "s11", "s12", "s13", "s14", "s14b", "s15", "s15b", "s16", "s17", "s17b", "s18", "s19")
BUILDERS = _paper_order()


def build_tables(an: Analysis) -> tuple[list[Table], dict[str, str]]:
    """Every table the analysis determines, and {name: reason} for the ones it does not."""
    tables, omitted = [], {}
    for name, builder in BUILDERS.items():
        try:
            tables.append(builder(an))
        except Omit as exc:
            omitted[name] = str(exc)
    tables += extension_tables(an)   # beyond the paper: only when the results hold router arms or versions
    notice = synthetic_notice(an.data.models)
    if notice:                       # said first, in every table: the title and the first note
        tables = [dataclasses.replace(t, title=f"SYNTHETIC - {t.title}", notes=[notice, *t.notes]) for t in tables]
    return tables, omitted


def write_tables(tables: list[Table], omitted: dict[str, str], out_dir, an: Analysis | None = None) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for t in tables:
        for ext, text in (("md", t.to_markdown()), ("tex", t.to_latex()), ("csv", t.to_csv())):
            p = out / f"{t.name}.{ext}"
            p.write_text(text, encoding="utf-8")
            paths.append(p)
    index = ["# Tables", ""]
    notice = synthetic_notice(an.data.models) if an is not None else None
    if notice:
        index += [f"**{notice}**", ""]
    if an is not None:
        r = an.resampler.describe()
        index += [f"Derived from per-case results by `harness tables`: {an.data.n_cases} cases, "
                  f"{len(an.data.calculators)} calculators, models {', '.join(model_label(m) for m in an.data.models)}. "
                  f"Bootstrap: {r['draws']:,} draws, seed {r['seed']}, {r['interval']} ({r['quantile_method']}).", ""]
    index += [f"- [{t.name}]({t.name}.md): {t.title}" for t in tables]
    if omitted:
        index += ["", "Omitted:"] + [f"- {k}: {v}" for k, v in omitted.items()]
    if an is not None and any(t.name == "s15" for t in tables):
        p = out / sup.SHEET_NAME
        p.write_text(sup.annotation_sheet(an), encoding="utf-8")
        paths.append(p)
        index += ["", f"Failure-audit annotation sheet (s15, s15b): [{sup.SHEET_NAME}]({sup.SHEET_NAME}); fill it "
                  f"and save it as <results>/{sup.ANNOTATION_FILE.as_posix()}."]
    p = out / "index.md"
    p.write_text("\n".join(index) + "\n", encoding="utf-8")
    paths.append(p)
    return paths


def build_all(results_dir, out_dir, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
              dataset: str | None = None) -> list[Path]:
    """Re-derive every table from `results_dir` into `out_dir` (Markdown, LaTeX, CSV); return the paths.

    Same results, draws and seed give byte-identical files."""
    an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset)
    tables, omitted = build_tables(an)
    return write_tables(tables, omitted, out_dir, an)

"""The accuracy ladders: Table 1 (upper block: the paper's main checkpoints; lower block, table1-other: other
checkpoints), s1 (every arm that ran), s2 (Blind Program-Solve's levers), the outcomes of the program arms (s6, s12)
and seed agreement (s19)."""

from __future__ import annotations

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.arrays import OUTCOME_CODE
from harness.analysis.stats.families import arm_label, declared, shown_in
from harness.analysis.stats.labels import model_label
from harness.analysis.table_format import Omit, Table, fmt
from harness.analysis.tables.cells import acc_cell, omitted_note
from harness.analysis.tables.spec import TableSpec
from harness.arms.registry import arm_sort_key, ladder, model_free_arms, program_table_arms
from harness.core.outcomes import RowOutcome

# The paper's two main checkpoints (Table 1, upper block). Every other model with both arms of the comparison
# declared for the lower block (Program-Solve and Open-book arithmetic) goes to the lower block.
MAIN_CHECKPOINTS = ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-32B-Instruct")


def _is_main(model: str) -> bool:
    return model in MAIN_CHECKPOINTS


# ---- Table 1 -----------------------------------------------------------------------------------------
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
            row.append(acc_cell(an, m, arm, impl))
            row.append(acc_cell(an, m, arm))
        rows.append(row)
    notes = [
        f"Accuracy (%), mean over seeds ({an.seeds_note()}). Impl.: cases of the library's calculators; "
        "Full: every case in the results. Superscript n=N: the arm covers only N cases of the column; "
        "1 seed: it ran at one seed of several.",
        *omitted_note(an, cells),
    ]
    return Table("table1", "Accuracy ladder (Impl. and Full)", cols, rows, notes, "llll" + "r" * (len(cols) - 4))


def upper_block_models(an: Analysis) -> list[str]:
    """Table 1's upper block: the paper's main checkpoints when the results hold one, else every model
    (the other checkpoints then go to the lower block, table1-other)."""
    if any(m in MAIN_CHECKPOINTS for m in an.data.models):
        others = set(other_checkpoints(an))
        return [m for m in an.data.models if m not in others]
    return list(an.data.models)


def lever_arms() -> tuple[str, ...]:
    """s2's arms: those of the "levers" family's declared comparisons (Blind Program-Solve and its levers), in arm
    order."""
    arms = {a for c in declared("levers") for a in (c.solver, c.reference)}
    return tuple(sorted(arms, key=arm_sort_key))


def lower_block_pair() -> tuple[str, str] | None:
    """(code, arithmetic): the comparison declared for Table 1's lower block (harness.arms.spec.Gap.tables)."""
    comps = shown_in("table1-other")
    return (comps[0].solver, comps[0].reference) if comps else None


def other_checkpoints(an: Analysis) -> list[str]:
    """Models of the lower block: not one of the paper's two main checkpoints, with both arms."""
    d = an.data
    pair = lower_block_pair()
    if pair is None:
        return []
    return [m for m in d.models if not _is_main(m) and d.has(m, pair[0]) and d.has(m, pair[1])]


def _full_acc(an: Analysis, model: str, arm: str) -> float:
    block = an.data.block(model, arm)
    per_seed = np.nanmean(block[an.data.seed_mask(model, arm)], axis=1)
    return 100.0 * float(np.mean(per_seed))


def table1_other(an: Analysis) -> Table:
    models = other_checkpoints(an)
    if not models:
        raise Omit(
            "no model outside the paper's main checkpoints (Qwen2.5-7B, Qwen2.5-32B) ran both "
            "Program-Solve and Open-book arithmetic"
        )
    code_arm, arith_arm = lower_block_pair() or ("", "")
    rows = []
    for m in models:
        code, arith = _full_acc(an, m, code_arm), _full_acc(an, m, arith_arm)
        rows.append([m.rsplit("/", 1)[-1], fmt(code), fmt(arith), f"{code - arith:+.2f}"])
    return Table(
        "table1-other",
        "Accuracy ladder, lower block: other checkpoints",
        ["Other checkpoints", "Code, full", "Arithmetic, full", "Gap (pp)"],
        rows,
        [
            "Accuracy (%) on the cases each arm ran, mean over seeds. Code: Program-Solve; Arithmetic: "
            "Open-book arithmetic; gap: code minus arithmetic. Lower block of Table 1: every model other "
            f"than {' and '.join(MAIN_CHECKPOINTS)}."
        ],
        "lrrr",
    )


# ---- s1, s2, s6, s12, s19 ----------------------------------------------------------------------------
def table_s1(an: Analysis) -> Table:
    d = an.data
    arms = [a for a in d.arms if not a.startswith("hybrid:") and any(d.has(m, a) for m in d.models)]
    cols = ["Arm"] + [model_label(m) for m in d.models]
    rows = [[arm_label(a)] + [acc_cell(an, m, a, sd=True) for m in d.models] for a in arms]
    return Table(
        "s1",
        "Full ladders, every arm that ran",
        cols,
        rows,
        [
            f"Accuracy (%), mean over seeds, seed SD in parentheses; superscripts: n=N when the arm covers "
            f"N cases of all {d.n_cases}, 1 seed when it ran at one seed of several. {an.seeds_note()}."
        ],
    )


def table_s2(an: Analysis) -> Table:
    d = an.data
    levers = lever_arms()
    arms = [a for a in levers if any(d.has(m, a) for m in d.models)]
    if len(arms) < 2:
        raise Omit("fewer than two blind-lever arms ran")
    impl = an.impl_mask()
    notes = ["Accuracy (%), mean over seeds, seed SD in parentheses."]
    cols = ["Arm"] + [model_label(m) for m in d.models]
    rows = [[arm_label(a)] + [acc_cell(an, m, a, impl, sd=True) for m in d.models] for a in arms]
    return Table("s2", "Blind Program-Solve levers on the covered subset", cols, rows, notes + omitted_note(an, levers))


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
            counts = [
                int(np.sum(oc == code[k]))
                for k in (
                    RowOutcome.ANSWERED,
                    RowOutcome.NO_PROGRAM,
                    RowOutcome.SANDBOX_REJECTION,
                    RowOutcome.RAISED_ERROR,
                    RowOutcome.WRONG_RETURN_KIND,
                    RowOutcome.UNREADABLE_VALUE,
                    RowOutcome.ABSTAINED,
                )
            ]
            att = oc == code[RowOutcome.ANSWERED]
            acc = 100 * np.nansum(c) / n
            att_acc = 100 * np.nansum(np.where(att, c, 0)) / att.sum() if att.any() else float("nan")
            dmask = have & dates[None, :]
            dacc = 100 * np.nansum(np.where(dmask, c, 0)) / dmask.sum() if dmask.any() else float("nan")
            rows.append([model_label(m), arm_label(a), str(n), *map(str, counts), fmt(acc), fmt(att_acc), fmt(dacc)])
    if not rows:
        raise Omit("no program arm ran")
    cols = [
        "Model",
        "Arm",
        "Rows",
        "Answered",
        "No program",
        "Sandbox rej.",
        "Raised error",
        "Wrong kind",
        "Unreadable",
        "Abstained",
        "Acc.",
        "Att.",
        "Dates",
    ]
    return Table(
        "s6",
        "Outcome taxonomy of the program arms",
        cols,
        rows,
        [
            "Case-seed rows pooled over the seeds run. Att.: accuracy on answered rows; Dates: accuracy on "
            "date and gestational-age cases (n/a when none)."
        ],
        "ll" + "r" * 11,
    )


def _breakdown(oc: np.ndarray, c: np.ndarray, mask: np.ndarray) -> dict:
    code = OUTCOME_CODE
    sel = (oc >= 0) & mask[None, :]
    n = sel.sum()
    if n == 0:
        return {}
    pct = lambda x: 100 * float(np.sum(x & sel)) / n  # noqa: E731
    right = pct(c == 1)
    none_out = pct(np.isin(oc, [code[RowOutcome.NO_PROGRAM], code[RowOutcome.ABSTAINED]]))
    exec_fail = pct(
        np.isin(
            oc, [code[RowOutcome.SANDBOX_REJECTION], code[RowOutcome.RAISED_ERROR], code[RowOutcome.WRONG_RETURN_KIND]]
        )
    )
    unread = pct(oc == code[RowOutcome.UNREADABLE_VALUE])
    return {
        "right": right,
        "wrong": pct((oc == code[RowOutcome.ANSWERED]) & (c == 0)),
        "none": none_out + exec_fail + unread,
        "no_output": none_out,
        "exec": exec_fail,
        "unread": unread,
    }


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
    cols = [
        "Model",
        "Arm",
        "Supp. right",
        "Supp. wrong",
        "Supp. none",
        "Unsupp. right",
        "Unsupp. wrong",
        "Unsupp. none",
        "Full right",
        "Full wrong",
        "No output",
        "Executor failure",
        "Unreadable",
    ]
    notes = [
        "Percent of case-seed rows, seeds pooled. Supported: the library's calculators. No output: no program "
        "or abstained; executor failure: sandbox rejection, raised error or wrong return kind."
    ]
    return Table("s12", "Outcome breakdown by library support", cols, rows, notes, "ll" + "r" * (len(cols) - 2))


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
    return {
        "seeds": s,
        "cases": int(cases.sum()),
        "agree": 100 * float(np.mean(np.all(b == b[0], axis=0))),
        "pairwise": 100 * float(np.mean(pair)),
        "right": 100 * float(np.mean(np.all(b == 1, axis=0))),
        "wrong": 100 * float(np.mean(np.all(b == 0, axis=0))),
    }


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
                rows.append(
                    [
                        model_label(m),
                        arm_label(a),
                        str(s["seeds"]),
                        str(s["cases"]),
                        fmt(s["agree"], 1),
                        fmt(s["pairwise"], 1),
                        fmt(s["right"], 1),
                        fmt(s["wrong"], 1),
                    ]
                )
    if not rows:
        raise Omit("no arm ran more than one seed")
    return Table(
        "s19",
        "Seed agreement",
        ["Model", "Arm", "Seeds", "Cases", "Agree", "Pairwise", "Right", "Wrong"],
        rows,
        [
            "Agree: % of cases all seeds score alike; Pairwise: mean over seed pairs; Right, Wrong: unanimous "
            "cases. Cases present at every seed only."
        ],
    )


SPECS = (
    TableSpec("table1", "ladder", table1),
    TableSpec("table1-other", "ladder", table1_other),
    TableSpec("s1", "ladder", table_s1),
    TableSpec("s2", "ladder", table_s2),
    TableSpec("s6", "ladder", table_s6),
    TableSpec("s12", "ladder", table_s12),
    TableSpec("s19", "ladder", table_s19),
)

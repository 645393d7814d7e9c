"""The per-case check: the user's correctness case by case against the paper's own per-case files.

The paper compared two runs this way (.tex lines 405-409: "the per-case answers agree on about 95% (7B) and at
least 99.8% (32B) of case-seed pairs"), and says its per-case results are committed with its code. With those
files at hand (`harness compare --paper-cases DIR`) every (model, arm) both sides have is matched case-seed pair
by case-seed pair.

Format. Every `*.csv` under DIR is one per-case table; a case is named as the benchmark names it, by its
`Row Number` and `Calculator ID` columns (MedCalc-Bench's own column names; the kit's case id is
`<Calculator ID>-<Row Number>`), and each row also has `Model` (the checkpoint, e.g. Qwen/Qwen2.5-7B-Instruct),
`Arm` (the kit's arm name or the paper's, e.g. "Program-Solve"), `Seed` and `Correct` (1/0 or true/false).
Column names are matched ignoring case and surrounding spaces; other columns are ignored. Anything else (a
missing column, an unknown arm, a non-integer row number, a duplicate row) is an error naming the file and line.

Yardstick. A faithful rerun agrees with the paper per case about as often as two repeated runs of one setting
agree: the paper's own rerun agreement for the checkpoint (95% at 7B, 99.8% at 32B; 7B's for the others), less a
binomial allowance for the number of pairs. At or above it: reproduced; below: discrepancy. The user's own seeds'
pairwise agreement is reported beside it and never lowers it (a run whose seeds disagree must not earn an easier
verdict: harness.analysis.comparison.tolerance).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from harness.analysis.comparison import ours as stats
from harness.analysis.comparison import tolerance as tol
from harness.analysis.comparison.context import Context, same_model
from harness.analysis.comparison.values import number
from harness.arms.registry import ARMS

COLUMNS = ("Row Number", "Calculator ID", "Model", "Arm", "Seed", "Correct")
TRUE, FALSE = {"1", "true", "yes"}, {"0", "false", "no"}


class PaperCasesError(ValueError):
    """A per-case file the comparison cannot read; the message names the file (and line)."""


def _arm(name: str) -> str | None:
    if name in ARMS:
        return ARMS[name].name
    low = name.strip().lower()
    for slug, arm in ARMS.items():
        if arm.title.lower() == low or (arm.display.label or "").lower() == low:
            return slug
    return None


def read_paper_cases(directory: str | os.PathLike[str]) -> dict[tuple[str, str], dict[tuple[int, str], bool]]:
    """(model, arm) -> {(seed, case id): correct} from every *.csv under `directory`."""
    root = Path(directory)
    files = sorted(root.rglob("*.csv")) if root.is_dir() else []
    if not files:
        raise PaperCasesError(f"{root}: no per-case files (*.csv) found")
    out: dict[tuple[str, str], dict[tuple[int, str], bool]] = {}
    for path in files:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = {(h or "").strip().lower(): h for h in reader.fieldnames or []}
            missing = [c for c in COLUMNS if c.lower() not in header]
            if missing:
                raise PaperCasesError(
                    f"{path}: missing column(s) {', '.join(missing)}; a per-case file names each "
                    f"case by the benchmark's Row Number and Calculator ID and gives "
                    f"{', '.join(COLUMNS[2:])}"
                )
            col = {c: header[c.lower()] for c in COLUMNS}
            for line, row in enumerate(reader, start=2):
                where = f"{path}:{line}"
                try:
                    case = f"{int(row[col['Calculator ID']])}-{int(row[col['Row Number']])}"
                    seed = int(row[col["Seed"]])
                except (TypeError, ValueError):
                    raise PaperCasesError(f"{where}: Row Number, Calculator ID and Seed must be integers") from None
                arm = _arm(row[col["Arm"]] or "")
                if arm is None:
                    raise PaperCasesError(
                        f"{where}: unknown arm {row[col['Arm']]!r} (the kit's arm names or the paper's titles)"
                    )
                flag = (row[col["Correct"]] or "").strip().lower()
                if flag not in TRUE | FALSE:
                    raise PaperCasesError(f"{where}: Correct must be 1/0 or true/false, not {row[col['Correct']]!r}")
                cell = out.setdefault((row[col["Model"]].strip(), arm), {})
                if (seed, case) in cell:
                    raise PaperCasesError(
                        f"{where}: duplicate row for {row[col['Model']]} {arm} seed {seed} case {case}"
                    )
                cell[(seed, case)] = flag in TRUE
    return out


def per_case_rows(ctx: Context, paper_cases: dict) -> list[dict]:
    """One row per (paper model, arm) of the per-case files: pairs matched, agreement, yardstick, verdict."""
    d = ctx.an.data
    index = {c: i for i, c in enumerate(d.case_ids)}
    rows = []
    for (paper_model, arm), cells in sorted(paper_cases.items()):
        models = [m for m in d.models if same_model(m, paper_model.rsplit("/", 1)[-1]) and d.has(m, arm)]
        if not models:
            rows.append(
                {
                    "paper_model": paper_model,
                    "arm": arm,
                    "model": "",
                    "paper_pairs": len(cells),
                    "matched": 0,
                    "agree": None,
                    "yardstick": None,
                    "verdict": "no result",
                    "why": "these results have no run of this model and arm",
                }
            )
            continue
        m = models[0]
        block = d.block(m, arm)
        hits = []
        for (seed, case), ok in cells.items():
            if seed in d.seeds and case in index:
                mine = block[d.seeds.index(seed), index[case]]
                if not np.isnan(mine):
                    hits.append(bool(mine) == ok)
        matched = len(hits)
        agree = 100 * sum(hits) / matched if matched else None
        pm_name = paper_model.rsplit("/", 1)[-1]
        d_paper, source = tol.paper_disagreement(pm_name)
        own = stats.pairwise_agreement(ctx.an, m, arm, "full")
        yard = 100 * (1 - d_paper)
        yard_source = f"the paper's {source}" + (
            f"; your seeds' pairwise agreement {own.value:.2f}% beside it, never lowering it" if own is not None else ""
        )
        allow = tol.round_half_up(tol.binomial_allowance(yard, matched), 2)
        agree = None if agree is None else tol.round_half_up(agree, 2)  # as shown: the number used
        reasons = ctx.reasons(m, pm_name, (arm,))
        if matched < len(cells):
            reasons.append(
                f"{len(cells) - matched:,} of the paper's {len(cells):,} case-seed pairs are not in your results"
            )
        if agree is None:
            verdict, why = "no result", "no case-seed pair in common"
        elif reasons:
            verdict, why = "not comparable", "; ".join(reasons)
        elif agree >= yard - allow:
            verdict, why = "reproduced", f"agreement {agree:.2f}% at or above {yard:.2f}% - {allow:.2f}"
        else:
            verdict, why = (
                "discrepancy",
                f"agreement {agree:.2f}% below {yard:.2f}% - {allow:.2f}: the cases differ "
                "more than two runs of one setting do",
            )
        rows.append(
            {
                "paper_model": paper_model,
                "arm": arm,
                "model": m,
                "paper_pairs": len(cells),
                "matched": matched,
                "agree": agree,
                "yardstick": yard,
                "yardstick_source": yard_source,
                "verdict": verdict,
                "why": why,
            }
        )
    return rows


def not_possible_text() -> str:
    n7, n32 = number("text:appendix:rerun-agreement#agree_7b"), number("text:appendix:rerun-agreement#agree_32b")
    return (
        "The stronger per-case check was not possible: no per-case files of the paper were given "
        "(`harness compare --paper-cases DIR`, CSV files with the benchmark's Row Number and Calculator ID and "
        "Model, Arm, Seed, Correct). The verdicts above compare aggregates only; the paper's own rerun test "
        f"compared per-case answers (agreement about {n7['value']:g}% at 7B and at least {n32['value']:g}% "
        f"at 32B, .tex line {n7['line']})."
    )

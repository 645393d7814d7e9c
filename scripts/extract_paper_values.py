#!/usr/bin/env python3
"""Extract the paper's numbers from its LaTeX source into harness/analysis/paper_values.json.

    python scripts/extract_paper_values.py [--tex PATH] [--out PATH] [--check]

Nothing is typed by hand: Table 1 (both blocks) and Table 2 are parsed cell by cell from their `tabular`
rows (row label = first column, column label = the header rows); the numbers the text states are found by
the anchored patterns of TEXT_NUMBERS below, each of which must match exactly once. Every value carries the
line of the .tex it comes from and the raw cell text, and says how a cell that is not a plain number is
read (a signed gap with its interval, a \\textbf or \\rev wrapper, a percent sign, a spelt-out number).

The paper's claims (CLAIMS: a gap's interval clears or crosses zero, an ordering, a range over arms or models,
a bound, a p-value) are data too: each is anchored to the sentence that makes it (its .tex line), says in plain
words what the paper says, names the statistic the user's run must give and the paper's own numbers behind it
(`evidence`); every printed interval not under an explicit claim gets one (it clears zero or it crosses it). The supplementary
tables' bodies are not in the available source (their environments hold only a caption and a bare `%`
or the elision comment): each is listed under `left_out` with its line and that reason.

`--check` re-extracts and exits 1 when the committed file differs (what the kit's test does, with the .tex
beside the clone). The kit reads the committed JSON at run time (harness.analysis.paper_values), never the .tex.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the paper's source beside the clone (a worktree elsewhere names it with MATHSOLVER_PAPER_TEX)
DEFAULT_TEX = Path(
    os.environ.get("MATHSOLVER_PAPER_TEX") or ROOT.parent / "shared" / "paper" / "deterministic-math-solver.tex"
)
DEFAULT_OUT = ROOT / "harness" / "analysis" / "paper_values.json"

NUM = r"[-+\u2212]?\d+(?:\.\d+)?"
WRAPPER = r"\\(rev|textbf)\{"


class ExtractError(Exception):
    pass


# ---- LaTeX cell text -> plain text ------------------------------------------------------------------
def _unwrap(text: str, macro: str) -> str:
    """`\\macro{x}` -> `x` (nested braces kept balanced), for every occurrence."""
    out, i, key = [], 0, "\\" + macro + "{"
    while True:
        j = text.find(key, i)
        if j < 0:
            return "".join(out) + text[i:]
        out.append(text[i:j])
        depth, k = 1, j + len(key)
        while k < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        out.append(_unwrap(text[j + len(key) : k - 1], macro))
        i = k


def plain(cell: str) -> str:
    t = cell
    for macro in ("rev", "textbf", "emph", "shortstack"):
        t = _unwrap(t, macro)
    t = t.replace("{,}", ",").replace("\\\\", " ").replace("\\quad", "").replace("$-$", "\u2212")
    t = t.replace("$", "").replace("\\%", "%").replace("\\,", " ")
    return " ".join(t.split()).strip()


WORD_NUMBERS = {"four": 4.0}  # numbers the prose spells out ("four of them replaced")


def number(text: str) -> float:
    if text in WORD_NUMBERS:
        return WORD_NUMBERS[text]
    return float(text.replace("\u2212", "-").replace(",", ""))


# ---- tables -----------------------------------------------------------------------------------------
def table_span(lines: list[str], label: str) -> tuple[int, int]:
    """0-based (begin, end) line indices of the table environment holding `\\label{label}`."""
    at = [i for i, line in enumerate(lines) if f"\\label{{{label}}}" in line]
    if len(at) != 1:
        raise ExtractError(f"\\label{{{label}}}: found {len(at)} times, expected once")
    begin = max(i for i in range(at[0]) if "\\begin{table}" in lines[i])
    end = min(i for i in range(at[0], len(lines)) if "\\end{table}" in lines[i])
    return begin, end


def tabular_blocks(lines: list[str], begin: int, end: int) -> list[list[tuple[int, list[str]]]]:
    """Each tabular in the span as its rows: (0-based line, cells), rule lines dropped."""
    blocks, cur = [], None
    for i in range(begin, end + 1):
        s = lines[i].strip()
        if s.startswith("\\begin{tabular"):
            cur = []
        elif s.startswith("\\end{tabular"):
            blocks.append(cur)
            cur = None
        elif cur is not None and "&" in s and s.endswith("\\\\"):
            cur.append((i, [c.strip() for c in s[:-2].split("&")]))
        elif cur is not None and s.startswith("\\multicolumn{4}{l}"):
            cur.append((i, [s[:-2] if s.endswith("\\\\") else s]))
    return blocks


def _multicolumn_header(cells: list[str]) -> list[str]:
    """A header row with \\multicolumn{n}{..}{label}: one label per spanned column ('' for plain empty cells)."""
    out = []
    for c in cells:
        m = re.match(r"\\multicolumn\{(\d+)\}\{[^}]*\}\{(.*)\}$", c)
        out += [plain(m.group(2))] * int(m.group(1)) if m else [plain(c)]
    return out


MODEL_COLUMNS = {"Qwen2.5-7B": "Qwen2.5-7B-Instruct", "Qwen2.5-32B": "Qwen2.5-32B-Instruct-AWQ"}


def extract_table1(lines: list[str]) -> list[dict]:
    begin, end = table_span(lines, "tab:ladder")
    blocks = tabular_blocks(lines, begin, end)
    if len(blocks) != 2:
        raise ExtractError(f"tab:ladder: {len(blocks)} tabulars, expected 2 (upper and lower block)")
    out = []
    upper = blocks[0]
    models = _multicolumn_header(upper[0][1])
    heads = [plain(c) for c in upper[1][1]]
    for i, cells in upper[2:]:
        row = plain(cells[0])
        for col in range(4, len(cells)):
            raw = cells[col]
            text = plain(raw)
            if not re.fullmatch(NUM, text):
                raise ExtractError(f"tab:ladder line {i + 1}: cell {raw!r} is not a number")
            subset, n = ("impl", 440) if heads[col].startswith("Impl.") else ("full", 1100)
            wrappers = ", ".join(sorted(set(re.findall(WRAPPER, raw))))
            reading = "plain number" if raw.strip() == text else f"number inside \\{wrappers} (typography only)"
            out.append(
                {
                    "id": f"table1:{row}:{models[col]}:{subset}",
                    "table": "tab:ladder",
                    "block": "upper",
                    "row": row,
                    "column": f"{models[col]} {heads[col]}",
                    "model": MODEL_COLUMNS[models[col]],
                    "subset": subset,
                    "n_cases": n,
                    "kind": "accuracy",
                    "unit": "%",
                    "value": number(text),
                    "digits": len(text.split(".")[1]) if "." in text else 0,
                    "raw": raw,
                    "line": i + 1,
                    "reading": reading,
                }
            )
    lower = blocks[1]
    heads = [plain(c) for c in lower[0][1]]
    for i, cells in lower[1:]:
        row = plain(cells[0])
        for col in range(1, len(cells)):
            raw, text = cells[col], plain(cells[col])
            if not re.fullmatch(NUM, text):
                raise ExtractError(f"tab:ladder line {i + 1}: cell {raw!r} is not a number")
            kind = "gap" if "Gap" in heads[col] else "accuracy"
            arm = {"Code, full": "program-solve", "Arithmetic, full": "open-book"}.get(heads[col])
            out.append(
                {
                    "id": f"table1-other:{row}:{heads[col]}",
                    "table": "tab:ladder",
                    "block": "lower",
                    "row": row,
                    "column": heads[col],
                    "model": row,
                    "subset": "full",
                    "n_cases": 1100,
                    "kind": kind,
                    "arm": arm,
                    "unit": "pp" if kind == "gap" else "%",
                    "value": number(text),
                    "digits": len(text.split(".")[1]),
                    "raw": raw,
                    "line": i + 1,
                    "reading": "signed number in math mode ($-7.62$ is -7.62): Program-Solve minus Open-book "
                    "arithmetic, paired"
                    if kind == "gap"
                    else "plain number",
                }
            )
    return out


GAP_CELL = re.compile(rf"^\$({NUM})\$ \$\[({NUM}), ({NUM})\]\$$")


def extract_table2(lines: list[str]) -> list[dict]:
    begin, end = table_span(lines, "tab:gaps")
    blocks = tabular_blocks(lines, begin, end)
    if len(blocks) != 1:
        raise ExtractError(f"tab:gaps: {len(blocks)} tabulars, expected 1")
    rows = blocks[0]
    heads = [plain(c) for c in rows[0][1]]
    out, block = [], "upper"
    for i, cells in rows[1:]:
        if len(cells) == 1:
            block = "lower (exploratory)"
            continue
        row = plain(cells[0])
        for col in range(2, len(cells)):
            raw = cells[col]
            m = GAP_CELL.match(raw)
            if not m:
                raise ExtractError(f"tab:gaps line {i + 1}: cell {raw!r} is not '$gap$ $[lo, hi]$'")
            out.append(
                {
                    "id": f"table2:{row}:{heads[col]}",
                    "table": "tab:gaps",
                    "block": block,
                    "row": row,
                    "column": heads[col],
                    "model": MODEL_COLUMNS[f"Qwen2.5-{heads[col]}"],
                    "subset": "full",
                    "n_cases": 1100,
                    "kind": "gap",
                    "unit": "pp",
                    "value": number(m.group(1)),
                    "lo": number(m.group(2)),
                    "hi": number(m.group(3)),
                    "digits": len(m.group(1).split(".")[1]),
                    "raw": raw,
                    "line": i + 1,
                    "reading": "'$g$ $[lo, hi]$': paired gap g (pp) and its 95% calculator-cluster "
                    "bootstrap interval [lo, hi] (10,000 draws, unadjusted)",
                }
            )
    return out


# ---- the numbers the text states --------------------------------------------------------------------
# (id, table it reports, pattern with one group per number, names of the numbers, what it says, how ours
# is computed or None). Each pattern must match exactly once in the .tex; '%' is matched as '\\%'. Numbers
# with no computation of their own (None) are read by the claims below (ranges, thresholds) or the ledger.
def _acc(arm, model, subset="full"):
    return {"kind": "accuracy", "arm": arm, "model": model, "subset": subset}


def _gap(solver, reference, model, subset="all"):
    return {"kind": "gap", "solver": solver, "reference": reference, "model": model, "subset": subset}


Q7, Q32 = MODEL_COLUMNS["Qwen2.5-7B"], MODEL_COLUMNS["Qwen2.5-32B"]
MISTRAL, PHI = "Mistral-7B-Instruct-v0.3", "Phi-3.5-mini-instruct"
N = NUM
TEXT_NUMBERS = [
    (
        "abstract:7b",
        "tab:gaps",
        rf"at 7B \(({N})\\% against ({N})\\%, a paired \$({N})\$ points with a 95\\% "
        rf"calculator-cluster interval of \$\[({N}), ({N})\]\$\)",
        ["program-solve", "open-book", "gap", "lo", "hi"],
        "7B: Program-Solve and Open-book arithmetic accuracy, their paired gap and cluster interval",
        [_acc("program-solve", Q7), _acc("open-book", Q7), _gap("program-solve", "open-book", Q7)],
    ),
    (
        "abstract:32b",
        "tab:gaps",
        rf"at 32B \(({N})\\% against ({N})\\%, \$({N})\$ \$\[({N}), ({N})\]\$",
        ["program-solve", "open-book", "gap", "lo", "hi"],
        "32B: Program-Solve and Open-book arithmetic accuracy, their paired gap and cluster interval",
        [_acc("program-solve", Q32), _acc("open-book", Q32), _gap("program-solve", "open-book", Q32)],
    ),
    (
        "abstract:library",
        "tab:ladder",
        rf"exact on its ({N}) supported cases but abstains elsewhere \(({N})\\% overall\)",
        ["covered_cases", "gold-lib full"],
        "Gold-Solve library: covered cases, and full-set accuracy",
        [{"kind": "covered_cases", "arm": "gold-lib"}, _acc("gold-lib", None)],
    ),
    (
        "abstract:audit",
        "tab:s9-audit",
        rf"flagging ({N}) of ({N}) with version",
        ["flagged", "calculators"],
        "calculator audit: calculators flagged of all",
        None,
    ),
    (
        "intro:library",
        "tab:ladder",
        rf"implements ({N}) of 1\{{,\}}100 cases, ({N})\\% full-set accuracy",
        ["covered_cases", "gold-lib full"],
        "Gold-Solve library: covered cases of 1,100 and full-set accuracy",
        [{"kind": "covered_cases", "arm": "gold-lib"}, _acc("gold-lib", None)],
    ),
    (
        "method:budget-range",
        "tab:s16-entitynone",
        rf"larger budget alone adds ({N}) to ({N}) points",
        ["low", "high"],
        "250-word budget without gold variables minus Note only, range over four families",
        None,
    ),
    (
        "method:icc",
        "tab:s5-paired",
        rf"intraclass\ncorrelation ({N}) to ({N})\), so their effective sample size is "
        rf"({N}) to ({N}) cases against ({N}) to ({N})",
        ["icc_low", "icc_high", "neff_lib_low", "neff_lib_high", "neff_arith_low", "neff_arith_high"],
        "ICC and effective sample size ranges over the library and arithmetic comparisons",
        None,
    ),
    (
        "results:no-answer",
        "tab:s12-breakdown",
        rf"no valid answer on \\rev\{{({N})\\%\nand ({N})\\%\}} of case-seed "
        rf"rows and a wrong answer on ({N})\\% and ({N})\\%, against none unanswered\nand ({N})\\% and ({N})\\% wrong",
        ["ps_none_7b", "ps_none_32b", "ps_wrong_7b", "ps_wrong_32b", "ob_wrong_7b", "ob_wrong_32b"],
        "no-valid-answer and wrong shares of case-seed rows, Program-Solve and Open-book arithmetic, 7B/32B",
        [
            {"kind": "outcome_share", "arm": "program-solve", "model": Q7, "share": "none"},
            {"kind": "outcome_share", "arm": "program-solve", "model": Q32, "share": "none"},
            {"kind": "outcome_share", "arm": "program-solve", "model": Q7, "share": "wrong"},
            {"kind": "outcome_share", "arm": "program-solve", "model": Q32, "share": "wrong"},
            {"kind": "outcome_share", "arm": "open-book", "model": Q7, "share": "wrong"},
            {"kind": "outcome_share", "arm": "open-book", "model": Q32, "share": "wrong"},
        ],
    ),
    (
        "results:impl",
        "tab:ladder",
        rf"it reaches ({N})\\% against\n({N})\\% and ({N})\\% for Program-Solve",
        ["gold-lib impl", "ps_impl_7b", "ps_impl_32b"],
        "on the 440 covered cases: Gold-Solve library, Program-Solve 7B and 32B (Table 1 prints 84.18 for 7B)",
        [_acc("gold-lib", None, "impl"), _acc("program-solve", Q7, "impl"), _acc("program-solve", Q32, "impl")],
    ),
    (
        "results:audit-clean",
        "tab:s10-audit-gaps",
        rf"the gap is \$({N})\$ \(\$\[({N}), ({N})\]\$\) at 7B and "
        rf"\$({N})\$\n\(\$\[({N}), ({N})\]\$\) at 32B",
        ["gap_7b", "lo_7b", "hi_7b", "gap_32b", "lo_32b", "hi_32b"],
        "Program-Solve minus Gold-Solve library on the 39 no-issue calculators, with cluster intervals",
        [_gap("program-solve", "gold-lib", Q7, "no_issue"), _gap("program-solve", "gold-lib", Q32, "no_issue")],
    ),
    (
        "results:hybrids",
        "tab:s13-hybrids",
        rf"reaches\n({N})\\% and ({N})\\%, above every single arm; with "
        rf"Open-book arithmetic as fallback it reaches\n({N})\\% and ({N})\\% \(\$({N})\$/\$({N})\$pp",
        ["gold_ps_7b", "gold_ps_32b", "gold_ob_7b", "gold_ob_32b", "fallback_gap_7b", "fallback_gap_32b"],
        "Gold-first hybrids' accuracy with each fallback, and Program-Solve fallback minus Open-book fallback",
        [
            _acc("hybrid:gold-first+program-solve", Q7),
            _acc("hybrid:gold-first+program-solve", Q32),
            _acc("hybrid:gold-first+open-book", Q7),
            _acc("hybrid:gold-first+open-book", Q32),
            _gap("hybrid:gold-first+program-solve", "hybrid:gold-first+open-book", Q7),
            _gap("hybrid:gold-first+program-solve", "hybrid:gold-first+open-book", Q32),
        ],
    ),
    (
        "results:extract-first",
        "tab:s18-fallbacks",
        rf"program fallback is worse \(\$({N})\$/\$({N})\$pp",
        ["gap_7b", "gap_32b"],
        "Extract-first hybrid, program fallback (the text does not name the reference arm)",
        None,
    ),
    (
        "results:syntax",
        "tab:gaps",
        rf"\$({N})\$pp over Program-Solve without them \(cluster CI \$\[({N}), ({N})\]\$\);"
        rf" 32B moves little on top of\nits already-clear advantage \(\$({N})\$pp, \$\[({N}), ({N})\]\$\)",
        ["gap_7b", "lo_7b", "hi_7b", "gap_32b", "lo_32b", "hi_32b"],
        "Program-Solve + syntax minus Program-Solve, with cluster intervals",
        [_gap("program-solve-syntax", "program-solve", Q7), _gap("program-solve-syntax", "program-solve", Q32)],
    ),
    (
        "results:syntax-range",
        "tab:s3-syntax",
        rf"ranges from \$({N})\$ to \$({N})\$pp",
        ["low", "high"],
        "effect of the syntax lines on the Program-Solve/arithmetic gap, range over four checkpoints",
        None,
    ),
    (
        "results:blind",
        "tab:ladder",
        rf"declines of ({N}) and\n({N})pp from Program-Solve",
        ["decline_7b", "decline_32b"],
        "Program-Solve minus Blind Program-Solve, full set (difference of Table 1 means)",
        [_gap("program-solve", "blind", Q7), _gap("program-solve", "blind", Q32)],
    ),
    (
        "results:other-families",
        "tab:ladder",
        rf"Mistral's\ncode route ({N})pp behind arithmetic and Phi-3.5's ({N})pp ahead",
        ["mistral_behind", "phi_ahead"],
        "rounded Table 1 lower-block gaps (magnitudes: Mistral's code route behind arithmetic, Phi-3.5's ahead)",
        [{**_gap("program-solve", "open-book", MISTRAL), "sign": -1}, _gap("program-solve", "open-book", PHI)],
    ),
    (
        "results:other-families-p",
        "tab:s5-paired",
        rf"secondary\npermutation \$p<({N})\$ and \$p=({N})\$",
        ["p_mistral", "p_phi"],
        "secondary sign-flip permutation p of Program-Solve minus Open-book arithmetic: "
        "Mistral-7B (printed as a bound, p<0.001) and Phi-3.5-mini",
        None,
    ),
    (
        "results:mistral-extract",
        "tab:s1-ladders",
        rf"Mistral's Extract-Solve library\nreaches ({N})\\%",
        ["mistral extract-lib"],
        "Mistral-7B Extract-Solve library, full set",
        [_acc("extract-lib", MISTRAL)],
    ),
    (
        "limitations:formula-audit",
        "tab:s17-catalogue",
        rf"then found ({N}) wrong or incomplete, ({N}) unable to",
        ["incomplete", "unable"],
        "formula completeness audit counts",
        None,
    ),
    (
        "limitations:audit-flags",
        "tab:s9-audit",
        rf"flags ({N}) with\na version, use or coefficient concern, (four) of "
        rf"them replaced",
        ["flagged", "replaced"],
        "calculator audit: calculators with a concern, and of those the ones replaced by a current guideline",
        None,
    ),
    (
        "results:audit-clean-count",
        "tab:s10-audit-gaps",
        rf"Restricted to the ({N}) audit-clean calculators",
        ["no_issue"],
        "calculators with no audit issue",
        None,
    ),
    (
        "caption:s17b-counts",
        "tab:s17b-catalogue-incomplete",
        rf"the ({N}) texts that omitted a constant, unit, "
        rf"branch or convention the benchmark applies, and the repair; the ({N}) already complete",
        ["omitted", "complete"],
        "formula completeness audit: texts that omitted something, texts already complete",
        None,
    ),
    (
        "limitations:replaced",
        "tab:s11-audit-tiers",
        rf"Program-Solve scores ({N}) and ({N})\nagainst ({N}) and ({N}) "
        rf"for Open-book arithmetic",
        ["ps_7b", "ps_32b", "ob_7b", "ob_32b"],
        "accuracy on the 4 guideline-replaced calculators",
        [
            _acc("program-solve", Q7, "replaced"),
            _acc("program-solve", Q32, "replaced"),
            _acc("open-book", Q7, "replaced"),
            _acc("open-book", Q32, "replaced"),
        ],
    ),
    (
        "conclusion:32b",
        "tab:gaps",
        rf"scale \(({N})pp, cluster CI clear of zero\)",
        ["gap"],
        "32B Program-Solve minus Open-book arithmetic, rounded",
        [_gap("program-solve", "open-book", Q32)],
    ),
    (
        "appendix:seed-agreement",
        "tab:s19-seeds",
        rf"five seeds is ({N}) to ({N})\\% for the greedy arms and ({N}) to "
        rf"({N})\\% where the example moves",
        ["greedy_low", "greedy_high", "moving_low", "moving_high"],
        "agreement across the five seeds, ranges over arms",
        None,
    ),
    (
        "appendix:recalled",
        "tab:s1-ladders",
        rf"\(({N}) of\n5\{{,\}}500 rows at 7B, ({N}) at 32B\) and costs three model "
        rf"calls per case, four when it routes \(({N})\\%\nof rows at 7B, ({N})\\% at 32B\)",
        ["abstain_7b", "abstain_32b", "routed_7b", "routed_32b"],
        "Extract-Solve library, recalled: abstaining rows and routed share",
        [
            {"kind": "outcome_count", "arm": "extract-lib-recalled", "model": Q7, "share": "none"},
            {"kind": "outcome_count", "arm": "extract-lib-recalled", "model": Q32, "share": "none"},
            {"kind": "route_share", "arm": "extract-lib-recalled", "model": Q7, "route": "library"},
            {"kind": "route_share", "arm": "extract-lib-recalled", "model": Q32, "route": "library"},
        ],
    ),
    (
        "appendix:truncation",
        "tab:s14-settings",
        rf"at\nmost ({N})\\% of calls in any family end at the output limit, "
        rf"({N})\\% or fewer at 32B",
        ["max_share", "max_share_32b"],
        "calls ending at the output-token limit",
        None,
    ),
    (
        "appendix:covered-rerun",
        "tab:s2-levers",
        rf"and ({N}) / ({N}) in\nTable~\\ref\{{tab:s2-levers\}}",
        ["blind_7b", "blind_32b"],
        "Blind Program-Solve, separate run on the covered 440",
        [_acc("blind", Q7, "impl"), _acc("blind", Q32, "impl")],
    ),
    (
        "appendix:rerun-agreement",
        "tab:s2-levers",
        rf"per-case answers agree on about ({N})\\% \(7B\) and at least "
        rf"({N})\\% \(32B\) of case-seed pairs",
        ["agree_7b", "agree_32b"],
        "per-case agreement of the full-set and the covered-only run of Blind Program-Solve (case-seed pairs): the "
        "paper's own rerun evidence",
        None,
    ),
    (
        "caption:s8-gold",
        "tab:s8-worked",
        rf"Qwen2.5-7B\), gold ({N})\.",
        ["gold"],
        "gold answer of the worked case (Cockcroft-Gault, seed 42)",
        None,
    ),
]

# ---- the paper's claims: what it says about its numbers, as checks -----------------------------------
# (id, table, anchor pattern (must match exactly once; it locates the sentence and gives the .tex line), what the
# paper says in plain words, the check, headline). A check names the statistic the user's run gives and what the
# paper says of it; `evidence` names the paper's own numbers behind it (a cell id, or "<text id>#<name>"), so the
# comparison can tell a claim the paper itself makes by a hair (a margin within rerun noise) from a clear one.
# Models are the paper's checkpoint names; "every family" is the four checkpoints of Table 1.
T2 = "table2:{row}:{col}"
PS_OB, PS_GOLD, BLIND_EXTRACT = (
    "Program-Solve \u2212 Open-book arithmetic",
    "Program-Solve \u2212 Gold-Solve library",
    "Blind Program-Solve \u2212 Extract-Solve library",
)
FAMILIES = [Q7, Q32, MISTRAL, PHI]
TABLE1_ARMS = [
    "note-only",
    "page-no-formula",
    "open-book",
    "extract-lib",
    "gold-lib",
    "program-solve",
    "program-solve-syntax",
    "blind",
]  # Table 1's upper rows, as the kit names the arms
T1_ROWS = {
    "note-only": "Note only",
    "page-no-formula": "Page without formula",
    "open-book": "Open-book arithmetic",
    "extract-lib": "Extract-Solve library",
    "gold-lib": "Gold-Solve library",
    "program-solve": "Program-Solve",
    "program-solve-syntax": "+ syntax (exploratory)",
    "blind": "Blind Program-Solve",
}
COL = {Q7: "7B", Q32: "32B"}
ARM_WORDS = {
    "program-solve": "Program-Solve",
    "program-solve-syntax": "Program-Solve + syntax",
    "gold-lib": "Gold-Solve library",
    "open-book": "Open-book arithmetic",
}
SUBSET_WORDS = {"no_issue": "the audit-clean calculators"}
T1_COL = {Q7: "Qwen2.5-7B", Q32: "Qwen2.5-32B"}


def _t1(arm, model, subset="full"):
    return f"table1:{T1_ROWS[arm]}:{T1_COL[model]}:{subset}"


def _t2(row, model):
    return T2.format(row=row, col=COL[model])


def _interval(solver, reference, model, expect, evidence, subset="all"):
    return {
        "kind": "interval",
        "solver": solver,
        "reference": reference,
        "model": model,
        "subset": subset,
        "expect": expect,
        "evidence": evidence,
    }


def _sign(solver, reference, model, expect, evidence, subset="all"):
    return {
        "kind": "sign",
        "solver": solver,
        "reference": reference,
        "model": model,
        "subset": subset,
        "expect": expect,
        "evidence": evidence,
    }


def _cell_ci(cell):
    return {"value": cell, "lo": cell + "#lo", "hi": cell + "#hi"}


MATCHED = r"Program-Solve is not reliably more\naccurate than Open-book arithmetic at 7B but is at 32B, clear of zero"
BLIND_SIGNS = r"library the point estimate is lower at 7B and higher at 32B, but both intervals cross\nzero"
LIB_LEAD = r"Program-Solve leads by\n\$[-+\d.]+\$pp at 7B and \$[-+\d.]+\$pp at 32B on the full set"
FALLBACK = r"for the program route, both intervals crossing zero\)"
OTHER = r"the two move in opposite directions"
CLAIMS = [
    (
        "matched-7b",
        "tab:gaps",
        MATCHED,
        "At 7B, Program-Solve is not reliably more accurate than Open-book arithmetic "
        "(the paired gap's 95% interval crosses zero)",
        _interval("program-solve", "open-book", Q7, "crosses zero", _cell_ci(_t2(PS_OB, Q7))),
        True,
    ),
    (
        "matched-32b",
        "tab:gaps",
        MATCHED,
        "At 32B, Program-Solve is more accurate than Open-book arithmetic (the paired gap's 95% interval clears zero)",
        _interval("program-solve", "open-book", Q32, "above zero", _cell_ci(_t2(PS_OB, Q32))),
        True,
    ),
    *[
        (
            f"library-lead-{COL[m].lower()}",
            "tab:gaps",
            LIB_LEAD,
            f"At {COL[m]}, Program-Solve leads the Gold-Solve "
            "library on the full set (interval clear of zero), because the library abstains outside its calculators",
            _interval("program-solve", "gold-lib", m, "above zero", _cell_ci(_t2(PS_GOLD, m))),
            True,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"library-where-both-answer-{COL[m].lower()}",
            "tab:ladder",
            r"where both answer, the\nlibrary is the more "
            r"accurate",
            f"At {COL[m]}, where both answer (the library's 440 cases) the Gold-Solve library is more accurate "
            "than Program-Solve",
            {
                "kind": "order",
                "model": m,
                "left": {"quantity": "accuracy", "arm": "gold-lib", "subset": "impl"},
                "right": [{"quantity": "accuracy", "arm": "program-solve", "subset": "impl"}],
                "evidence": {"left": _t1("gold-lib", m, "impl"), "right": [_t1("program-solve", m, "impl")]},
            },
            True,
        )
        for m in (Q7, Q32)
    ],
    (
        "library-exact",
        "tab:ladder",
        rf"exact on its {N} supported cases",
        "The Gold-Solve library is exact on the cases it implements (100% on its 440)",
        {
            "kind": "equals",
            "model": None,
            "quantity": {"quantity": "accuracy", "arm": "gold-lib", "subset": "impl"},
            "evidence": {"value": _t1("gold-lib", Q7, "impl")},
        },
        True,
    ),
    *[
        (
            f"blind-extract-sign-{COL[m].lower()}",
            "tab:gaps",
            BLIND_SIGNS,
            f"At {COL[m]}, Blind Program-Solve's point "
            f"estimate against the Extract-Solve library is {'lower' if m == Q7 else 'higher'}",
            _sign("blind", "extract-lib", m, "negative" if m == Q7 else "positive", {"value": _t2(BLIND_EXTRACT, m)}),
            False,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"blind-extract-interval-{COL[m].lower()}",
            "tab:gaps",
            BLIND_SIGNS,
            f"At {COL[m]}, Blind Program-Solve minus the Extract-Solve library: the interval crosses zero",
            _interval("blind", "extract-lib", m, "crosses zero", _cell_ci(_t2(BLIND_EXTRACT, m))),
            False,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"fallback-interval-{COL[m].lower()}",
            "tab:s18-fallbacks",
            FALLBACK,
            f"At {COL[m]}, the Gold-first hybrid with "
            "a Program-Solve fallback against the same hybrid with an Open-book fallback: the interval crosses zero",
            _interval(
                "hybrid:gold-first+program-solve",
                "hybrid:gold-first+open-book",
                m,
                "crosses zero",
                {"value": f"text:results:hybrids#fallback_gap_{COL[m].lower()}"},
            ),
            False,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"gold-first-above-all-{COL[m].lower()}",
            "tab:s13-hybrids",
            r"above every single arm",
            f"At {COL[m]}, the "
            "Gold-first hybrid (library on its 440, Program-Solve elsewhere) is above every single arm of Table 1",
            {
                "kind": "order",
                "model": m,
                "left": {"quantity": "accuracy", "arm": "hybrid:gold-first+program-solve", "subset": "full"},
                "right": [{"quantity": "accuracy", "arm": a, "subset": "full"} for a in TABLE1_ARMS],
                "evidence": {
                    "left": f"text:results:hybrids#gold_ps_{COL[m].lower()}",
                    "right": [_t1(a, m) for a in TABLE1_ARMS],
                },
            },
            False,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"audit-robust-{COL[m].lower()}",
            "tab:s10-audit-gaps",
            r"removing them moves no headline gap outside its "
            r"interval",
            f"At {COL[m]}, leaving out the four replaced calculators moves none of the four headline gaps "
            "outside its full-set interval",
            {
                "kind": "within_interval",
                "model": m,
                "subset": "not_replaced",
                "comparisons": [
                    ["program-solve", "open-book"],
                    ["program-solve", "gold-lib"],
                    ["blind", "extract-lib"],
                    ["program-solve-syntax", "open-book"],
                ],
            },
            False,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"replaced-largest-gap-{COL[m].lower()}",
            "tab:s11-audit-tiers",
            r"its largest gap over arithmetic at both "
            r"scales",
            f"At {COL[m]}, Program-Solve's lead over Open-book arithmetic is largest on the four replaced "
            "calculators (against the other audit groups)",
            {
                "kind": "order",
                "model": m,
                "left": {
                    "quantity": "difference",
                    "solver": "program-solve",
                    "reference": "open-book",
                    "subset": "replaced",
                },
                "right": [
                    {"quantity": "difference", "solver": "program-solve", "reference": "open-book", "subset": g}
                    for g in ("other_concern", "no_issue")
                ],
                "evidence": {"left": f"text:limitations:replaced#ps_{COL[m].lower()}"},
            },
            False,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"open-book-always-answers-{COL[m].lower()}",
            "tab:s12-breakdown",
            r"against none unanswered",
            f"At {COL[m]}, Open-book arithmetic leaves no case-seed row unanswered",
            {"kind": "zero", "model": m, "quantity": {"quantity": "none_rows", "arm": "open-book"}},
            False,
        )
        for m in (Q7, Q32)
    ],
    *[
        (
            f"other-family-direction-{n}",
            "tab:ladder",
            OTHER,
            f"{m}'s code route is {'behind' if n == 'mistral' else 'ahead of'} "
            "its arithmetic route (Program-Solve minus Open-book arithmetic, full set)",
            _sign(
                "program-solve",
                "open-book",
                m,
                "negative" if n == "mistral" else "positive",
                {"value": f"table1-other:{m}:Gap (pp)"},
            ),
            True,
        )
        for n, m in (("mistral", MISTRAL), ("phi", PHI))
    ],
    *[
        (
            f"other-family-p-{n}",
            "tab:s5-paired",
            r"secondary\npermutation \$p<",
            f"{m}: Program-Solve minus Open-book "
            f"arithmetic, secondary sign-flip permutation p (Holm within family) {rel} {val}",
            {
                "kind": "p_value",
                "model": m,
                "solver": "program-solve",
                "reference": "open-book",
                "relation": rel,
                "evidence": {"value": f"text:results:other-families-p#p_{n}"},
            },
            False,
        )
        for n, m, rel, val in (("mistral", MISTRAL, "<", "0.001"), ("phi", PHI, "=", "0.010"))
    ],
    (
        "mistral-extract-above-program",
        "tab:s1-ladders",
        r"above either Program-Solve arm",
        "Mistral-7B's Extract-Solve library is above either Program-Solve arm",
        {
            "kind": "order",
            "model": MISTRAL,
            "left": {"quantity": "accuracy", "arm": "extract-lib", "subset": "full"},
            "right": [
                {"quantity": "accuracy", "arm": a, "subset": "full"} for a in ("program-solve", "program-solve-syntax")
            ],
            "evidence": {
                "left": "text:results:mistral-extract#mistral extract-lib",
                "right": [f"table1-other:{MISTRAL}:Code, full"],
            },
        },
        False,
    ),
    (
        "budget-range",
        "tab:s16-entitynone",
        r"larger budget alone adds \d+ to \d+ points in every family",
        "With variable access fixed, the larger note budget (250 words, no gold variables, against Note only's 120) adds "
        "4 to 12 points in every family",
        {
            "kind": "range",
            "models": FAMILIES,
            "ends": True,
            "member": {"quantity": "gap", "solver": "note-only-250-nogold", "reference": "note-only", "subset": "all"},
            "evidence": {"low": "text:method:budget-range#low", "high": "text:method:budget-range#high"},
        },
        False,
    ),
    (
        "syntax-range",
        "tab:s3-syntax",
        r"ranges from \$[-+\d.]+\$ to \$[-+\d.]+\$pp",
        "Across the four checkpoints the "
        "syntax lines' effect on the Program-Solve/arithmetic gap ranges from -4.5 to +2.6 points",
        {
            "kind": "range",
            "models": FAMILIES,
            "ends": True,
            "member": {
                "quantity": "gap",
                "solver": "program-solve-syntax",
                "reference": "program-solve",
                "subset": "all",
            },
            "evidence": {"low": "text:results:syntax-range#low", "high": "text:results:syntax-range#high"},
        },
        False,
    ),
    (
        "icc-library",
        "tab:s5-paired",
        r"Cases cluster strongly within calculators for the library comparisons",
        "Cases cluster strongly within calculators for the library comparisons: intraclass correlation 0.68 to 0.81",
        {
            "kind": "range",
            "models": [Q7, Q32],
            "ends": False,
            "member": {
                "quantity": "icc",
                "comparisons": [
                    ["program-solve", "gold-lib"],
                    ["blind", "extract-lib"],
                    ["program-solve-syntax", "gold-lib"],
                ],
            },
            "evidence": {"low": "text:method:icc#icc_low", "high": "text:method:icc#icc_high"},
        },
        False,
    ),
    (
        "ess-library",
        "tab:s5-paired",
        r"Cases cluster strongly within calculators for the library comparisons",
        "So the library comparisons' effective sample size is 67 to 79 cases",
        {
            "kind": "range",
            "models": [Q7, Q32],
            "ends": False,
            "member": {
                "quantity": "effective_n",
                "comparisons": [
                    ["program-solve", "gold-lib"],
                    ["blind", "extract-lib"],
                    ["program-solve-syntax", "gold-lib"],
                ],
            },
            "evidence": {"low": "text:method:icc#neff_lib_low", "high": "text:method:icc#neff_lib_high"},
        },
        False,
    ),
    (
        "ess-arithmetic",
        "tab:s5-paired",
        r"Cases cluster strongly within calculators for the library comparisons",
        "Against 120 to 190 cases for the arithmetic comparisons",
        {
            "kind": "range",
            "models": [Q7, Q32],
            "ends": False,
            "member": {
                "quantity": "effective_n",
                "comparisons": [["program-solve", "open-book"], ["program-solve-syntax", "open-book"]],
            },
            "evidence": {"low": "text:method:icc#neff_arith_low", "high": "text:method:icc#neff_arith_high"},
        },
        False,
    ),
    (
        "seed-agreement-greedy",
        "tab:s19-seeds",
        r"Repeated runs still differ through server batching",
        "Agreement across the five seeds (cases all five score alike) is 78.5 to 100% for the greedy arms",
        {
            "kind": "range",
            "models": FAMILIES,
            "ends": False,
            "member": {"quantity": "seed_agreement", "arms": "greedy"},
            "evidence": {
                "low": "text:appendix:seed-agreement#greedy_low",
                "high": "text:appendix:seed-agreement#greedy_high",
            },
        },
        False,
    ),
    (
        "seed-agreement-moving",
        "tab:s19-seeds",
        r"Repeated runs still differ through server batching",
        "And 55.6 to 75.2% where the seed moves the worked example (the note-only arms)",
        {
            "kind": "range",
            "models": FAMILIES,
            "ends": False,
            "member": {"quantity": "seed_agreement", "arms": "moving"},
            "evidence": {
                "low": "text:appendix:seed-agreement#moving_low",
                "high": "text:appendix:seed-agreement#moving_high",
            },
        },
        False,
    ),
    (
        "rerun-agreement-7b",
        "tab:s2-levers",
        r"per-case answers agree on about",
        "At 7B, repeated greedy runs of Blind "
        "Program-Solve agree per case on about 95% of case-seed pairs (the covered 440)",
        {
            "kind": "agreement",
            "model": Q7,
            "arm": "blind",
            "subset": "impl",
            "relation": "about",
            "evidence": {"value": "text:appendix:rerun-agreement#agree_7b"},
        },
        False,
    ),
    (
        "rerun-agreement-32b",
        "tab:s2-levers",
        r"per-case answers agree on about",
        "At 32B, they agree on at least 99.8%",
        {
            "kind": "agreement",
            "model": Q32,
            "arm": "blind",
            "subset": "impl",
            "relation": "at least",
            "evidence": {"value": "text:appendix:rerun-agreement#agree_32b"},
        },
        False,
    ),
    (
        "truncation-any",
        "tab:s14-settings",
        r"end at the output limit",
        "Across the formula-reading arms at most 2.1% of calls in any family end at the output-token limit",
        {
            "kind": "at_most",
            "models": FAMILIES,
            "quantity": {"quantity": "truncated_calls", "arms": "formula"},
            "evidence": {"value": "text:appendix:truncation#max_share"},
        },
        False,
    ),
    (
        "truncation-32b",
        "tab:s14-settings",
        r"end at the output limit",
        "At 32B, 0.2% or fewer",
        {
            "kind": "at_most",
            "models": [Q32],
            "quantity": {"quantity": "truncated_calls", "arms": "formula"},
            "evidence": {"value": "text:appendix:truncation#max_share_32b"},
        },
        False,
    ),
    (
        "truncation-never-correct",
        "tab:s14-settings",
        r"and no truncated\ncall scores correct",
        "No truncated call scores correct (formula-reading arms, every family)",
        {"kind": "zero", "models": FAMILIES, "quantity": {"quantity": "truncated_correct", "arms": "formula"}},
        False,
    ),
]


def _interval_claims_from_numbers(cells: list[dict], text_numbers: list[dict], explicit: list[dict]) -> list[dict]:
    """Every printed 95% interval not already under an explicit claim says whether it clears zero (Table 2's
    caption: 'Intervals crossing zero establish neither difference nor equivalence'): one claim each."""
    seen = {
        (c["check"]["model"], c["check"]["solver"], c["check"]["reference"], c["check"]["subset"])
        for c in explicit
        if c["check"]["kind"] == "interval"
    }
    out = []

    def add(ident, line, raw, table, model, solver, reference, subset, value, lo, hi, evidence, label, digits=2):
        if (model, solver, reference, subset) in seen:
            return
        seen.add((model, solver, reference, subset))
        expect = "above zero" if lo > 0 else "below zero" if hi < 0 else "crosses zero"
        words = {
            "above zero": "clears zero (above)",
            "below zero": "clears zero (below)",
            "crosses zero": "crosses zero",
        }[expect]
        out.append(
            {
                "id": f"claim:interval:{ident}",
                "table": table,
                "line": line,
                "raw": raw,
                "says": f"{label}: the paired gap's 95% interval [{lo:.{digits}f}, {hi:.{digits}f}] {words}",
                "headline": False,
                "check": _interval(solver, reference, model, expect, evidence, subset),
            }
        )

    for c in cells:
        if c["table"] != "tab:gaps":
            continue
        solver, reference = {
            PS_OB: ("program-solve", "open-book"),
            PS_GOLD: ("program-solve", "gold-lib"),
            BLIND_EXTRACT: ("blind", "extract-lib"),
            "Program-Solve + syntax \u2212 Open-book arithmetic": ("program-solve-syntax", "open-book"),
            "Program-Solve + syntax \u2212 Gold-Solve library": ("program-solve-syntax", "gold-lib"),
        }[c["row"]]
        add(
            c["id"],
            c["line"],
            c["raw"],
            c["table"],
            c["model"],
            solver,
            reference,
            "all",
            c["value"],
            c["lo"],
            c["hi"],
            _cell_ci(c["id"]),
            f"{c['row']}, {c['column']}",
            c["digits"],
        )
    for t in text_numbers:
        names = [n["name"] for n in t["numbers"]]
        for spec in t["compare"] or []:
            if spec["kind"] != "gap":
                continue
            suffix = "_7b" if spec["model"] == Q7 else "_32b" if spec["model"] == Q32 else ""
            lo, hi = f"lo{suffix}", f"hi{suffix}"
            if lo not in names or hi not in names:
                continue
            gap = next(n for n in t["numbers"] if n["name"] in (f"gap{suffix}", "gap"))
            val = {n["name"]: n for n in t["numbers"]}
            add(
                f"{t['id']}{suffix}",
                gap["line"],
                t["raw"],
                t["table"],
                spec["model"],
                spec["solver"],
                spec["reference"],
                spec["subset"],
                gap["value"],
                val[lo]["value"],
                val[hi]["value"],
                {"value": f"{t['id']}#{gap['name']}", "lo": f"{t['id']}#{lo}", "hi": f"{t['id']}#{hi}"},
                f"{ARM_WORDS[spec['solver']]} \u2212 {ARM_WORDS[spec['reference']]}, {COL[spec['model']]}"
                + ("" if spec["subset"] == "all" else f", {SUBSET_WORDS[spec['subset']]}"),
                gap["digits"],
            )
    return out


def extract_claims(tex: str, cells: list[dict], text_numbers: list[dict]) -> list[dict]:
    out = []
    for ident, table, pattern, says, check, headline in CLAIMS:
        m = _find_once(tex, pattern, f"claim {ident}")
        out.append(
            {
                "id": f"claim:{ident}",
                "table": table,
                "line": _line_of(tex, m.start()),
                "raw": m.group(0).replace("\n", " "),
                "says": says,
                "headline": headline,
                "check": check,
            }
        )
    out += _interval_claims_from_numbers(cells, text_numbers, out)
    known = {c["id"] for c in cells} | {f"{t['id']}#{n['name']}" for t in text_numbers for n in t["numbers"]}
    for c in out:  # every piece of evidence names a number this file holds
        refs = [r for v in (c["check"].get("evidence") or {}).values() for r in (v if isinstance(v, list) else [v])]
        missing = [r for r in refs if r.split("#")[0] not in known and r not in known]
        if missing:
            raise ExtractError(f"{c['id']}: evidence {', '.join(missing)} is no number of this file")
    return out


# Run settings the paper states (for the ledger against table s14). (id, pattern, names, what)
SETTINGS = [
    (
        "dataset",
        rf"MedCalc-Bench Verified, ({N})\{{,\}}({N}) test cases across ({N}) calculators",
        ["cases_thousands", "cases_rest", "calculators"],
        "dataset: MedCalc-Bench Verified test split, 1,100 cases",
    ),
    (
        "balance",
        rf"benchmark is balanced at ({N}) cases per calculator",
        ["cases_per_calculator"],
        "cases per calculator (the benchmark is balanced)",
    ),
    (
        "models",
        r"Qwen2\.5-7B-Instruct \(bf16\) and\n(Qwen2\.5-32B-Instruct-AWQ) \(4-bit\)",
        ["model_32b"],
        "models: Qwen2.5-7B-Instruct (bf16) and Qwen2.5-32B-Instruct-AWQ; revisions not stated",
    ),
    (
        "tensor-parallel",
        rf"\(tensor-parallel ({N}), one\nH100 each",
        ["tp"],
        "vLLM tensor parallelism for the Qwen models",
    ),
    ("seeds", rf"five seeds \(({N}) to\n({N})\) over all", ["first", "last"], "seeds"),
    (
        "executor-memory",
        rf"({N})\\,MB and CPU limits, ({N})\\,s wall clock",
        ["memory_mb", "wall_s"],
        "executor memory cap and wall clock",
    ),
    (
        "temperatures",
        rf"decode greedily \(temperature ({N})\); sampled candidates use temperature ({N})",
        ["greedy", "sampled"],
        "temperatures",
    ),
    (
        "note-budgets",
        rf"Note only \(({N}) words\) and Page without formula \(({N}) words\) cap the note",
        ["note_only", "page_no_formula"],
        "note budgets in words",
    ),
    (
        "token-caps",
        rf"output-token budget of ({N})\{{,\}}({N}) for Program-Solve and its syntax variant\nand "
        rf"({N})\{{,\}}({N}) for Blind Program-Solve",
        ["ps_thousands", "ps_rest", "blind_thousands", "blind_rest"],
        "output-token caps: Program-Solve (and + syntax), Blind Program-Solve (and its variants)",
    ),
    (
        "dataset-revision",
        r"Hugging Face parquet at revision ([0-9a-f]{7})",
        ["revision"],
        "dataset revision (Hugging Face parquet)",
    ),
    (
        "bootstrap-draws",
        rf"cluster bootstrap over calculators\n\(({N})\{{,\}}({N}) draws",
        ["thousands", "rest"],
        "bootstrap draws",
    ),
    (
        "scoring",
        rf"correct when it lies in the benchmark's own interval: gold plus or minus ({N})\\% for decimal outputs",
        ["decimal_tolerance_pct"],
        "scoring: the first number on the final-answer line, within the benchmark's own "
        "interval (the kit's 'paper' scorer, harness/scoring/paper.py)",
    ),
]


def _find_once(tex: str, pattern: str, what: str) -> re.Match:
    found = list(re.finditer(pattern, tex))
    if len(found) != 1:
        raise ExtractError(f"{what}: pattern matched {len(found)} times in the .tex, expected once: {pattern!r}")
    return found[0]


def _line_of(tex: str, pos: int) -> int:
    return tex.count("\n", 0, pos) + 1


def extract_text_numbers(tex: str) -> list[dict]:
    out = []
    for ident, table, pattern, names, what, compare in TEXT_NUMBERS:
        m = _find_once(tex, pattern, ident)
        nums = []
        for k, name in enumerate(names, start=1):
            raw = m.group(k)
            nums.append(
                {
                    "name": name,
                    "value": number(raw),
                    "raw": raw,
                    "line": _line_of(tex, m.start(k)),
                    "digits": len(raw.split(".")[1]) if "." in raw else 0,
                }
            )
        out.append(
            {
                "id": f"text:{ident}",
                "table": table,
                "what": what,
                "numbers": nums,
                "compare": compare,
                "line": _line_of(tex, m.start()),
                "raw": m.group(0).replace("\n", " "),
                "reading": "numbers as printed in the prose; '\\%' is a percent, 'pp' percentage points, "
                "'$[lo, hi]$' a 95% calculator-cluster interval",
            }
        )
    return out


def extract_settings(tex: str) -> list[dict]:
    out = []
    for ident, pattern, names, what in SETTINGS:
        m = _find_once(tex, pattern, ident)
        values = {}
        for k, name in enumerate(names, start=1):
            raw = m.group(k)
            values[name] = raw if name == "revision" or not re.fullmatch(NUM, raw) else number(raw)
        # '2{,}048' is split by the thousands separator: join the parts back into one number
        for a, b, joined in (
            ("ps_thousands", "ps_rest", "program-solve"),
            ("blind_thousands", "blind_rest", "blind"),
            ("thousands", "rest", "draws"),
            ("cases_thousands", "cases_rest", "cases"),
        ):
            if a in values:
                values[joined] = int(m.group(names.index(a) + 1) + m.group(names.index(b) + 1))
                del values[a], values[b]
        out.append(
            {
                "id": f"setting:{ident}",
                "what": what,
                "values": values,
                "line": _line_of(tex, m.start()),
                "raw": m.group(0).replace("\n", " "),
            }
        )
    return out


def supplementary_left_out(lines: list[str]) -> list[dict]:
    """Every table environment other than Table 1 and 2, with why it contributes no cell."""
    out = []
    for i, line in enumerate(lines):
        m = re.search(r"\\label\{(tab:[^}]+)\}", line)
        if not m or m.group(1) in ("tab:ladder", "tab:gaps"):
            continue
        begin, end = table_span(lines, m.group(1))
        if any(lines[k].lstrip().startswith("\\begin{tabular") for k in range(begin, end)):
            raise ExtractError(f"{m.group(1)} (line {i + 1}) now has a tabular body: extend the extractor to read it")
        body = [lines[k].strip() for k in range(begin, end) if lines[k].strip().startswith("%")]
        out.append(
            {
                "table": m.group(1),
                "line": i + 1,
                "reason": "body not in the available .tex: the environment holds only its caption and "
                + (
                    "the elision comment ('inline block 0: 22 envs ... piece 1 here, a bare % at each other')"
                    if any("inline block" in b for b in body)
                    else "a bare '%'"
                )
                + "; no cell can be read. Numbers the prose quotes from it are under text_numbers.",
            }
        )
    return out


def extract(tex_path: Path) -> dict:
    data = tex_path.read_bytes()
    tex = data.decode("utf-8")
    lines = tex.split("\n")
    return {
        "source": {
            "file": tex_path.name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "lines": len(lines),
            "extractor": "scripts/extract_paper_values.py",
        },
        "cells": (cells := extract_table1(lines) + extract_table2(lines)),
        "text_numbers": (text := extract_text_numbers(tex)),
        "claims": extract_claims(tex, cells, text),
        "settings": extract_settings(tex),
        "left_out": supplementary_left_out(lines),
    }


def render(values: dict) -> str:
    return json.dumps(values, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tex", type=Path, default=DEFAULT_TEX)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--check", action="store_true", help="exit 1 when --out differs from a fresh extraction")
    a = p.parse_args(argv)
    try:
        text = render(extract(a.tex))
    except (ExtractError, OSError) as exc:
        print(f"extract_paper_values: {a.tex}: {exc}", file=sys.stderr)
        return 2
    if a.check:
        if not a.out.is_file() or a.out.read_text(encoding="utf-8") != text:
            print(
                f"extract_paper_values: {a.out} differs from {a.tex}; rerun scripts/extract_paper_values.py",
                file=sys.stderr,
            )
            return 1
        return 0
    a.out.write_text(text, encoding="utf-8")
    v = json.loads(text)
    print(
        f"wrote {a.out}: {len(v['cells'])} table cells, {len(v['text_numbers'])} text statements of numbers, "
        f"{len(v['claims'])} claims, {len(v['settings'])} settings, "
        f"{len(v['left_out'])} tables left out"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Extract the paper's numbers from its LaTeX source into harness/analysis/paper_values.json.

    python scripts/extract_paper_values.py [--tex PATH] [--out PATH] [--check]

Nothing is typed by hand: Table 1 (both blocks) and Table 2 are parsed cell by cell from their `tabular`
rows (row label = first column, column label = the header rows); the text's headline claims are found by
the anchored patterns of CLAIMS below, each of which must match exactly once. Every value carries the
line of the .tex it comes from and the raw cell text, and says how a cell that is not a plain number is
read (a signed gap with its interval, a \\textbf or \\rev wrapper, a percent sign). The supplementary
tables' bodies are not in the available source (their environments hold only a caption and a bare `%`
or the elision comment): each is listed under `left_out` with its line and that reason.

`--check` re-extracts and exits 1 when the committed file differs (what the kit's test does, with the .tex
beside the clone). The kit reads the committed JSON at run time (harness.analysis.paper_values), never the .tex.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TEX = ROOT.parent / "shared" / "paper" / "deterministic-math-solver.tex"
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
        out.append(_unwrap(text[j + len(key):k - 1], macro))
        i = k


def plain(cell: str) -> str:
    t = cell
    for macro in ("rev", "textbf", "emph", "shortstack"):
        t = _unwrap(t, macro)
    t = t.replace("{,}", ",").replace("\\\\", " ").replace("\\quad", "").replace("$-$", "\u2212")
    t = t.replace("$", "").replace("\\%", "%").replace("\\,", " ")
    return " ".join(t.split()).strip()


def number(text: str) -> float:
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
            out.append({"id": f"table1:{row}:{models[col]}:{subset}", "table": "tab:ladder", "block": "upper",
                        "row": row, "column": f"{models[col]} {heads[col]}", "model": MODEL_COLUMNS[models[col]],
                        "subset": subset, "n_cases": n, "kind": "accuracy", "unit": "%", "value": number(text),
                        "digits": len(text.split(".")[1]) if "." in text else 0, "raw": raw, "line": i + 1,
                        "reading": reading})
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
            out.append({"id": f"table1-other:{row}:{heads[col]}", "table": "tab:ladder", "block": "lower",
                        "row": row, "column": heads[col], "model": row, "subset": "full", "n_cases": 1100,
                        "kind": kind, "arm": arm, "unit": "pp" if kind == "gap" else "%", "value": number(text),
                        "digits": len(text.split(".")[1]), "raw": raw, "line": i + 1,
                        "reading": "signed number in math mode ($-7.62$ is -7.62): Program-Solve minus Open-book "
                                   "arithmetic, paired" if kind == "gap" else "plain number"})
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
            out.append({"id": f"table2:{row}:{heads[col]}", "table": "tab:gaps", "block": block, "row": row,
                        "column": heads[col], "model": MODEL_COLUMNS[f"Qwen2.5-{heads[col]}"], "subset": "full",
                        "n_cases": 1100, "kind": "gap", "unit": "pp", "value": number(m.group(1)),
                        "lo": number(m.group(2)), "hi": number(m.group(3)),
                        "digits": len(m.group(1).split(".")[1]), "raw": raw, "line": i + 1,
                        "reading": "'$g$ $[lo, hi]$': paired gap g (pp) and its 95% calculator-cluster "
                                   "bootstrap interval [lo, hi] (10,000 draws, unadjusted)"})
    return out


# ---- the text's headline claims ---------------------------------------------------------------------
# (id, table it reports, pattern with one group per number, names of the numbers, what it says, how ours
# is computed or None). Each pattern must match exactly once in the .tex; '%' is matched as '\\%'.
def _acc(arm, model, subset="full"):
    return {"kind": "accuracy", "arm": arm, "model": model, "subset": subset}


def _gap(solver, reference, model, subset="all"):
    return {"kind": "gap", "solver": solver, "reference": reference, "model": model, "subset": subset}


Q7, Q32 = MODEL_COLUMNS["Qwen2.5-7B"], MODEL_COLUMNS["Qwen2.5-32B"]
N = NUM
CLAIMS = [
    ("abstract:7b", "tab:gaps", rf"at 7B \(({N})\\% against ({N})\\%, a paired \$({N})\$ points with a 95\\% "
     rf"calculator-cluster interval of \$\[({N}), ({N})\]\$\)", ["program-solve", "open-book", "gap", "lo", "hi"],
     "7B: Program-Solve and Open-book arithmetic accuracy, their paired gap and cluster interval",
     [_acc("program-solve", Q7), _acc("open-book", Q7), _gap("program-solve", "open-book", Q7)]),
    ("abstract:32b", "tab:gaps", rf"at 32B \(({N})\\% against ({N})\\%, \$({N})\$ \$\[({N}), ({N})\]\$",
     ["program-solve", "open-book", "gap", "lo", "hi"],
     "32B: Program-Solve and Open-book arithmetic accuracy, their paired gap and cluster interval",
     [_acc("program-solve", Q32), _acc("open-book", Q32), _gap("program-solve", "open-book", Q32)]),
    ("abstract:library", "tab:ladder", rf"exact on its ({N}) supported cases but abstains elsewhere \(({N})\\% overall\)",
     ["covered_cases", "gold-lib full"], "Gold-Solve library: covered cases, and full-set accuracy",
     [{"kind": "covered_cases", "arm": "gold-lib"}, _acc("gold-lib", None)]),
    ("abstract:audit", "tab:s9-audit", rf"flagging ({N}) of ({N}) with version", ["flagged", "calculators"],
     "calculator audit: calculators flagged of all", None),
    ("intro:library", "tab:ladder", rf"implements ({N}) of 1\{{,\}}100 cases, ({N})\\% full-set accuracy",
     ["covered_cases", "gold-lib full"], "Gold-Solve library: covered cases of 1,100 and full-set accuracy",
     [{"kind": "covered_cases", "arm": "gold-lib"}, _acc("gold-lib", None)]),
    ("method:budget-range", "tab:s16-entitynone", rf"larger budget alone adds ({N}) to ({N}) points",
     ["low", "high"], "250-word budget without gold variables minus Note only, range over four families", None),
    ("method:icc", "tab:s5-paired", rf"intraclass\ncorrelation ({N}) to ({N})\), so their effective sample size is "
     rf"({N}) to ({N}) cases against ({N}) to ({N})", ["icc_low", "icc_high", "neff_lib_low", "neff_lib_high",
                                                   "neff_arith_low", "neff_arith_high"],
     "ICC and effective sample size ranges over the library and arithmetic comparisons", None),
    ("results:no-answer", "tab:s12-breakdown", rf"no valid answer on \\rev\{{({N})\\%\nand ({N})\\%\}} of case-seed "
     rf"rows and a wrong answer on ({N})\\% and ({N})\\%, against none unanswered\nand ({N})\\% and ({N})\\% wrong",
     ["ps_none_7b", "ps_none_32b", "ps_wrong_7b", "ps_wrong_32b", "ob_wrong_7b", "ob_wrong_32b"],
     "no-valid-answer and wrong shares of case-seed rows, Program-Solve and Open-book arithmetic, 7B/32B",
     [{"kind": "outcome_share", "arm": "program-solve", "model": Q7, "share": "none"},
      {"kind": "outcome_share", "arm": "program-solve", "model": Q32, "share": "none"},
      {"kind": "outcome_share", "arm": "program-solve", "model": Q7, "share": "wrong"},
      {"kind": "outcome_share", "arm": "program-solve", "model": Q32, "share": "wrong"},
      {"kind": "outcome_share", "arm": "open-book", "model": Q7, "share": "wrong"},
      {"kind": "outcome_share", "arm": "open-book", "model": Q32, "share": "wrong"}]),
    ("results:impl", "tab:ladder", rf"it reaches ({N})\\% against\n({N})\\% and ({N})\\% for Program-Solve",
     ["gold-lib impl", "ps_impl_7b", "ps_impl_32b"],
     "on the 440 covered cases: Gold-Solve library, Program-Solve 7B and 32B (Table 1 prints 84.18 for 7B)",
     [_acc("gold-lib", None, "impl"), _acc("program-solve", Q7, "impl"), _acc("program-solve", Q32, "impl")]),
    ("results:audit-clean", "tab:s10-audit-gaps", rf"the gap is \$({N})\$ \(\$\[({N}), ({N})\]\$\) at 7B and "
     rf"\$({N})\$\n\(\$\[({N}), ({N})\]\$\) at 32B", ["gap_7b", "lo_7b", "hi_7b", "gap_32b", "lo_32b", "hi_32b"],
     "Program-Solve minus Gold-Solve library on the 39 no-issue calculators, with cluster intervals",
     [_gap("program-solve", "gold-lib", Q7, "no_issue"), _gap("program-solve", "gold-lib", Q32, "no_issue")]),
    ("results:hybrids", "tab:s13-hybrids", rf"reaches\n({N})\\% and ({N})\\%, above every single arm; with "
     rf"Open-book arithmetic as fallback it reaches\n({N})\\% and ({N})\\% \(\$({N})\$/\$({N})\$pp",
     ["gold_ps_7b", "gold_ps_32b", "gold_ob_7b", "gold_ob_32b", "fallback_gap_7b", "fallback_gap_32b"],
     "Gold-first hybrids' accuracy with each fallback, and Program-Solve fallback minus Open-book fallback",
     [_acc("hybrid:gold-first+program-solve", Q7), _acc("hybrid:gold-first+program-solve", Q32),
      _acc("hybrid:gold-first+open-book", Q7), _acc("hybrid:gold-first+open-book", Q32),
      _gap("hybrid:gold-first+program-solve", "hybrid:gold-first+open-book", Q7),
      _gap("hybrid:gold-first+program-solve", "hybrid:gold-first+open-book", Q32)]),
    ("results:extract-first", "tab:s18-fallbacks", rf"program fallback is worse \(\$({N})\$/\$({N})\$pp",
     ["gap_7b", "gap_32b"], "Extract-first hybrid, program fallback (the text does not name the reference arm)", None),
    ("results:syntax", "tab:gaps", rf"\$({N})\$pp over Program-Solve without them \(cluster CI \$\[({N}), ({N})\]\$\);"
     rf" 32B moves little on top of\nits already-clear advantage \(\$({N})\$pp, \$\[({N}), ({N})\]\$\)",
     ["gap_7b", "lo_7b", "hi_7b", "gap_32b", "lo_32b", "hi_32b"],
     "Program-Solve + syntax minus Program-Solve, with cluster intervals",
     [_gap("program-solve-syntax", "program-solve", Q7), _gap("program-solve-syntax", "program-solve", Q32)]),
    ("results:syntax-range", "tab:s3-syntax", rf"ranges from \$({N})\$ to \$({N})\$pp", ["low", "high"],
     "effect of the syntax lines on the Program-Solve/arithmetic gap, range over four checkpoints", None),
    ("results:blind", "tab:ladder", rf"declines of ({N}) and\n({N})pp from Program-Solve", ["decline_7b", "decline_32b"],
     "Program-Solve minus Blind Program-Solve, full set (difference of Table 1 means)",
     [_gap("program-solve", "blind", Q7), _gap("program-solve", "blind", Q32)]),
    ("results:other-families", "tab:ladder", rf"Mistral's\ncode route ({N})pp behind arithmetic and Phi-3.5's ({N})pp ahead",
     ["mistral_behind", "phi_ahead"], "rounded Table 1 lower-block gaps (magnitudes)", None),
    ("results:mistral-extract", "tab:s1-ladders", rf"Mistral's Extract-Solve library\nreaches ({N})\\%",
     ["mistral extract-lib"], "Mistral-7B Extract-Solve library, full set",
     [_acc("extract-lib", "Mistral-7B-Instruct-v0.3")]),
    ("limitations:formula-audit", "tab:s17-catalogue", rf"then found ({N}) wrong or incomplete, ({N}) unable to",
     ["incomplete", "unable"], "formula completeness audit counts", None),
    ("limitations:replaced", "tab:s11-audit-tiers", rf"Program-Solve scores ({N}) and ({N})\nagainst ({N}) and ({N}) "
     rf"for Open-book arithmetic", ["ps_7b", "ps_32b", "ob_7b", "ob_32b"],
     "accuracy on the 4 guideline-replaced calculators",
     [_acc("program-solve", Q7, "replaced"), _acc("program-solve", Q32, "replaced"),
      _acc("open-book", Q7, "replaced"), _acc("open-book", Q32, "replaced")]),
    ("conclusion:32b", "tab:gaps", rf"scale \(({N})pp, cluster CI clear of zero\)", ["gap"],
     "32B Program-Solve minus Open-book arithmetic, rounded", [_gap("program-solve", "open-book", Q32)]),
    ("appendix:seed-agreement", "tab:s19-seeds", rf"five seeds is ({N}) to ({N})\\% for the greedy arms and ({N}) to "
     rf"({N})\\% where the example moves", ["greedy_low", "greedy_high", "moving_low", "moving_high"],
     "agreement across the five seeds, ranges over arms", None),
    ("appendix:recalled", "tab:s1-ladders", rf"\(({N}) of\n5\{{,\}}500 rows at 7B, ({N}) at 32B\) and costs three model "
     rf"calls per case, four when it routes \(({N})\\%\nof rows at 7B, ({N})\\% at 32B\)",
     ["abstain_7b", "abstain_32b", "routed_7b", "routed_32b"],
     "Extract-Solve library, recalled: abstaining rows and routed share", None),
    ("appendix:truncation", "tab:s14-settings", rf"at\nmost ({N})\\% of calls in any family end at the output limit, "
     rf"({N})\\% or fewer at 32B", ["max_share", "max_share_32b"], "calls ending at the output-token limit", None),
    ("appendix:covered-rerun", "tab:s2-levers", rf"and ({N}) / ({N}) in\nTable~\\ref\{{tab:s2-levers\}}",
     ["blind_7b", "blind_32b"], "Blind Program-Solve, separate run on the covered 440",
     [_acc("blind", Q7, "impl"), _acc("blind", Q32, "impl")]),
    ("caption:s8-gold", "tab:s8-worked", rf"Qwen2.5-7B\), gold ({N})\.", ["gold"],
     "gold answer of the worked case (Cockcroft-Gault, seed 42)", None),
]

# Run settings the paper states (for the ledger against table s14). (id, pattern, names, what)
SETTINGS = [
    ("dataset", rf"MedCalc-Bench Verified, 1\{{,\}}100 test cases across ({N}) calculators", ["calculators"],
     "dataset: MedCalc-Bench Verified test split, 1,100 cases"),
    ("models", r"Qwen2\.5-7B-Instruct \(bf16\) and\n(Qwen2\.5-32B-Instruct-AWQ) \(4-bit\)", ["model_32b"],
     "models: Qwen2.5-7B-Instruct (bf16) and Qwen2.5-32B-Instruct-AWQ; revisions not stated"),
    ("tensor-parallel", rf"\(tensor-parallel ({N}), one\nH100 each", ["tp"], "vLLM tensor parallelism for the Qwen models"),
    ("seeds", rf"five seeds \(({N}) to\n({N})\) over all", ["first", "last"], "seeds"),
    ("executor-memory", rf"({N})\\,MB and CPU limits, ({N})\\,s wall clock", ["memory_mb", "wall_s"],
     "executor memory cap and wall clock"),
    ("temperatures", rf"decode greedily \(temperature ({N})\); sampled candidates use temperature ({N})",
     ["greedy", "sampled"], "temperatures"),
    ("note-budgets", rf"Note only \(({N}) words\) and Page without formula \(({N}) words\) cap the note",
     ["note_only", "page_no_formula"], "note budgets in words"),
    ("token-caps", rf"output-token budget of ({N})\{{,\}}({N}) for Program-Solve and its syntax variant\nand "
     rf"({N})\{{,\}}({N}) for Blind Program-Solve", ["ps_thousands", "ps_rest", "blind_thousands", "blind_rest"],
     "output-token caps: Program-Solve (and + syntax), Blind Program-Solve (and its variants)"),
    ("dataset-revision", r"Hugging Face parquet at revision ([0-9a-f]{7})", ["revision"],
     "dataset revision (Hugging Face parquet)"),
    ("bootstrap-draws", rf"cluster bootstrap over calculators\n\(({N})\{{,\}}({N}) draws", ["thousands", "rest"],
     "bootstrap draws"),
]


def _find_once(tex: str, pattern: str, what: str) -> re.Match:
    found = list(re.finditer(pattern, tex))
    if len(found) != 1:
        raise ExtractError(f"{what}: pattern matched {len(found)} times in the .tex, expected once: {pattern!r}")
    return found[0]


def _line_of(tex: str, pos: int) -> int:
    return tex.count("\n", 0, pos) + 1


def extract_claims(tex: str) -> list[dict]:
    out = []
    for ident, table, pattern, names, what, compare in CLAIMS:
        m = _find_once(tex, pattern, ident)
        nums = []
        for k, name in enumerate(names, start=1):
            raw = m.group(k)
            nums.append({"name": name, "value": number(raw), "raw": raw, "line": _line_of(tex, m.start(k)),
                         "digits": len(raw.split(".")[1]) if "." in raw else 0})
        out.append({"id": f"text:{ident}", "table": table, "what": what, "numbers": nums, "compare": compare,
                    "line": _line_of(tex, m.start()), "raw": m.group(0).replace("\n", " "),
                    "reading": "numbers as printed in the prose; '\\%' is a percent, 'pp' percentage points, "
                               "'$[lo, hi]$' a 95% calculator-cluster interval"})
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
        for a, b, joined in (("ps_thousands", "ps_rest", "program-solve"), ("blind_thousands", "blind_rest", "blind"),
                             ("thousands", "rest", "draws")):
            if a in values:
                values[joined] = int(m.group(names.index(a) + 1) + m.group(names.index(b) + 1))
                del values[a], values[b]
        out.append({"id": f"setting:{ident}", "what": what, "values": values, "line": _line_of(tex, m.start()),
                    "raw": m.group(0).replace("\n", " ")})
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
        out.append({"table": m.group(1), "line": i + 1,
                    "reason": "body not in the available .tex: the environment holds only its caption and "
                              + ("the elision comment ('inline block 0: 22 envs ... piece 1 here, a bare % at each "
                                 "other')" if any("inline block" in b for b in body) else "a bare '%'")
                              + "; no cell can be read. Numbers the prose quotes from it are under claims."})
    return out


def extract(tex_path: Path) -> dict:
    data = tex_path.read_bytes()
    tex = data.decode("utf-8")
    lines = tex.split("\n")
    return {
        "source": {"file": tex_path.name, "sha256": hashlib.sha256(data).hexdigest(), "lines": len(lines),
                   "extractor": "scripts/extract_paper_values.py"},
        "cells": extract_table1(lines) + extract_table2(lines),
        "claims": extract_claims(tex),
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
            print(f"extract_paper_values: {a.out} differs from {a.tex}; rerun scripts/extract_paper_values.py",
                  file=sys.stderr)
            return 1
        return 0
    a.out.write_text(text, encoding="utf-8")
    v = json.loads(text)
    print(f"wrote {a.out}: {len(v['cells'])} table cells, {len(v['claims'])} claims, {len(v['settings'])} settings, "
          f"{len(v['left_out'])} tables left out")
    return 0


if __name__ == "__main__":
    sys.exit(main())

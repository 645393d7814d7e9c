"""The comparison as text: one plain sentence per model first, then the claims, the numbers (each with the user's
n as cases x seeds, their interval beside the paper's, the tolerance and its source), the per-case check, the
settings and what was not compared. Markdown (comparison.md), CSV and the HTML report's section; nothing here
computes a verdict."""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from harness.analysis.comparison import tolerance as tol
from harness.analysis.comparison.claims import CLAIM_VERDICTS, HELD, NO_RESULT, NOT_COMPARABLE, NOT_HELD, UNDECIDED
from harness.analysis.comparison.context import same_model
from harness.analysis.comparison.numbers import VERDICTS, unmapped_numbers
from harness.analysis.comparison.per_case import not_possible_text
from harness.analysis.comparison.values import paper_values, source_line
from harness.analysis.stats.labels import model_label
from harness.model.rehearsal.labels import MODEL_FREE

if TYPE_CHECKING:  # the package imports this module
    from harness.analysis.comparison import ComparisonFiles
    from harness.analysis.comparison.integrity import Integrity

_DIFFERENT = re.compile(r"different model \(([^,]+), not [^)]+\)")
VOCABULARY = [
    (
        "reproduced",
        "your number lies within the rerun tolerance of the paper's: a same-case rerun of the paper's "
        "setting moves it about this much.",
    ),
    (
        "consistent",
        "beyond rerun noise, so something in your setting differs, but within the sampling uncertainty "
        "(the paper's printed 95% interval, or, where it prints none, your own 95% calculator-cluster interval holds "
        "the paper's value), with the gap's sign and the paper's claims about it intact. Not a reproduction.",
    ),
    (
        "discrepancy",
        "beyond rerun noise and beyond the sampling uncertainty, a gap whose sign reversed, or a number "
        "whose claim did not hold; the reason is named.",
    ),
    (
        "not comparable: reasons",
        "the setting behind the number is not the paper's (synthetic records, another "
        "model, dataset or revision, a setting the manifests record otherwise or not at all, missing cases or seeds); "
        "the arithmetic is shown, no verdict is drawn.",
    ),
    (
        "held / did not hold",
        "for a claim: your own statistic (your interval, your sign, your ordering) says, or "
        "does not say, what the paper says. A claim that lacks an input it rests on (an arm of an ordering, a member of "
        "a range) is never held: it is not comparable, and says what it lacked.",
    ),
    (
        "undecided at this many draws (at least N needed)",
        "for a claim: your margin lies within the Monte Carlo error "
        "of the bootstrap draws or sign flips that gave it (a p-value at its floor: with 1,000 flips no Holm-adjusted "
        "p reaches 0.001); rerun `harness compare` with at least N `--draws`.",
    ),
    (
        "changed after it was written",
        "a file a number is read from differs from the root's SHA256SUMS (changed, "
        "missing or added after they were written): that number is not comparable; without SHA256SUMS no number is.",
    ),
]
DERIVATION = (
    "A reproduction runs the paper's own 1,100 cases at its five seeds, so case sampling does not move its numbers; "
    "run-to-run noise does (server batching: the seed never reaches the request; sampling; the note-only arms' "
    "worked example). The tolerance is 1.96 times the larger of two estimates of it, plus half a unit of the digit "
    "the paper prints, rounded once to the decimals it is shown with (the number shown is the number used). It rests "
    "on the paper's own rerun (.tex lines 405-409): per-case agreement of two runs about 95% (7B) and at least 99.8% "
    "(32B) of case-seed pairs; a disagreement rate d over n case-seed values moves a mean by SD sqrt(d/n) (a gap: "
    "sqrt(2d/n)). Your own seeds' spread is shown beside it and never widens it: a noisy run must not earn an easier "
    "verdict. Where your seeds (repeated greedy runs) disagree far more than the paper's reruns did (chi-square, "
    "p < 0.001), that is itself a finding and the number is not reproduced, whatever its mean. Claims are decided by "
    "a margin (an interval end's distance from zero, one accuracy over another) with the same noise plus the "
    "bootstrap's Monte Carlo error; a claim the paper itself makes by a margin within that tolerance is fragile and "
    "also holds when your margin is within the tolerance of the paper's; a margin within the Monte Carlo error of "
    "your own draws is undecided. Derivation in full: harness/analysis/comparison/tolerance.py."
)


def _model_name(model: str) -> str:
    if not model:
        return "(no model)"
    if model.startswith(MODEL_FREE):
        return "Gold-Solve library (no model)"
    return model


def headline_sentences(claims: list[dict], numbers: list[dict]) -> list[str]:
    """One plain sentence per model: which headline claims held, every claim that did not hold or is undecided
    (headline or not), how many headline claims were not comparable, and the numbers' tally."""
    by: dict[str, list[dict]] = {}
    for c in claims:
        if c["model"] and (c["headline"] or c["verdict"] in (NOT_HELD, UNDECIDED)):
            for m in c["model"].split(", "):
                by.setdefault(m, []).append(c)
    models = list(dict.fromkeys([r["model"] for r in numbers if r["ours"] is not None and r["model"]]))
    for c in claims:  # a headline claim about a checkpoint that ran here, with nothing to check it: said, not silent
        if c["headline"] and c["verdict"] == NO_RESULT and c["paper_model"]:
            for m in models:
                if same_model(m, c["paper_model"]):
                    by.setdefault(m, []).append(c)
    out = []
    for m in sorted(set(by) | {x for x in models if not x.startswith(MODEL_FREE)}, key=lambda x: (x == MODEL_FREE, x)):
        rows = by.get(m, [])
        held = [c["says"] for c in rows if c["verdict"] == HELD and c["headline"]]
        failed = [f"{c['says']} (line {c['line']}: {c['why']})" for c in rows if c["verdict"] == NOT_HELD]
        undecided = [f"{c['says']} (line {c['line']}: {c['why']})" for c in rows if c["verdict"] == UNDECIDED]
        nc = [c for c in rows if c["verdict"] == NOT_COMPARABLE and c["headline"]]
        unchecked = [c["says"] for c in rows if c["verdict"] == NO_RESULT]
        parts = []
        if held:
            parts.append("held: " + "; ".join(held))
        if failed:
            parts.append("did not hold: " + "; ".join(failed))
        if undecided:
            parts.append("undecided: " + "; ".join(undecided))
        if nc:
            reasons = list(
                dict.fromkeys(
                    _DIFFERENT.sub(r"\1 is none of the paper's checkpoints", r)
                    for c in nc
                    for r in c["why"].split("; ")
                )
            )
            parts.append(
                f"not comparable: {len(nc)} headline claim{'s' if len(nc) != 1 else ''} "
                f"({'; '.join(reasons[:4])}{'; ...' if len(reasons) > 4 else ''})"
            )
        if unchecked:
            parts.append("not checked, these results lack the arms for it: " + "; ".join(unchecked))
        if not parts:
            parts.append("none of the paper's headline claims is about what this model ran here")
        mine = [r for r in numbers if r["model"] == m or (m == MODEL_FREE and r["model"].startswith(MODEL_FREE))]
        judged = [r for r in mine if r["verdict"] in ("reproduced", "consistent", "discrepancy")]
        noisy = sorted(
            {r["key"].split("|")[3] for r in judged if "disagree more than the paper's reruns did" in r["spread"]}
        )
        if noisy:
            parts.append(
                f"your seeds disagree more than the paper's reruns did ({'; '.join(noisy)}): those numbers "
                "are not reproductions, whatever their means"
            )
        if judged:
            bad = [
                f"{_short_where(r)} ({r['source']}, line {r['line']})" for r in judged if r["verdict"] != "reproduced"
            ]
            tally = ", ".join(
                f"{sum(r['verdict'] == v for r in judged)} {v}"
                for v in ("reproduced", "consistent", "discrepancy")
                if any(r["verdict"] == v for r in judged)
            )
            parts.append(
                f"numbers: {tally} of {len(judged)} comparable"
                + (f" (not reproduced: {'; '.join(bad[:4])}{'; ...' if len(bad) > 4 else ''})" if bad else "")
            )
        out.append(f"{_model_name(m)}: " + ". ".join(p[0].upper() + p[1:] for p in parts) + ".")
    if not out:
        out.append("Nothing in these results bears on the paper's headline claims.")
    return out


def _short_where(r: dict) -> str:
    """A number as the lead names it: a table cell by row and column, a text number by what it is."""
    return r["where"].split(" n=")[0] if r["source"].startswith("Table") else r["what"]


def counts(rows: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r["verdict"]] = out.get(r["verdict"], 0) + 1
    return out


def _counts_text(rows: list[dict], order: Iterable[str]) -> str:
    c = counts(rows)
    return ", ".join(f"{k} {c[k]}" for k in order if c.get(k)) or "none"


def _num(v: float | None, digits: int = 2) -> str:
    return "" if v is None else f"{v:.{digits}f}"


def _ci(lo: float | None, hi: float | None, digits: int) -> str:
    return "" if lo is None else f" [{lo:.{digits}f}, {hi:.{digits}f}]"


def _md(s: object) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _number_cells(r: dict) -> list[str]:
    d = r["digits"]
    return [
        r["source"],
        str(r["line"]),
        r["where"],
        r["model"],
        r["n"],
        f"{_num(r['paper'], d)}{_ci(r['paper_lo'], r['paper_hi'], d)}",
        f"{_num(r['ours'], d)}{_ci(r['ours_lo'], r['ours_hi'], d)}",
        "" if r["difference"] is None else f"{r['difference']:+.{d}f}",
        ""
        if r["tolerance"] is None
        else f"\u00b1{r['tolerance']:.{r['tolerance_shown']}f} ({r['tolerance_source']})"
        + (f"; {r['spread']}" if r["spread"] else ""),
        r["verdict"] + (f": {r['why']}" if r["verdict"] != "reproduced" else ""),
    ]


NUMBER_HEAD = (
    "Source",
    "Line",
    "Row, column",
    "Model",
    "Your n (cases \u00d7 seeds)",
    "Paper [95% CI]",
    "Yours [95% cluster CI]",
    "Yours \u2212 paper",
    "Tolerance (source)",
    "Verdict",
)
CLAIM_HEAD = ("Line", "The paper says", "Model", "Paper", "Yours", "Verdict")
CASE_HEAD = ("Paper model", "Arm", "Your model", "Paper pairs", "Matched", "Agreement", "Yardstick", "Verdict")
LEDGER_HEAD = ("Setting", "Expected (source)", "Yours", "Status")


def _claim_cells(c: dict) -> list[str]:
    return [
        str(c["line"]),
        c["says"],
        c["model"],
        c["paper"],
        c["ours"],
        c["verdict"] + (f": {c['why']}" if c["why"] else ""),
    ]


def _case_cells(r: dict) -> list[str]:
    return [
        r["paper_model"],
        r["arm"],
        r["model"],
        f"{r['paper_pairs']:,}",
        f"{r['matched']:,}",
        "" if r["agree"] is None else f"{r['agree']:.2f}%",
        "" if r.get("yardstick") is None else f"{r['yardstick']:.2f}% ({r['yardstick_source']})",
        f"{r['verdict']}: {r['why']}",
    ]


def _ledger_cells(r: dict) -> list[str]:
    return [r["setting"], r["paper"], r["ours"], r["status"]]


def _table(head: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(":---" for _ in head) + " |"]
    out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return out


def rerun_check_lines() -> list[str]:
    out = []
    for r in tol.paper_rerun_check():
        out.append(
            f"- {r['model']}: Blind Program-Solve on the covered 440 read {r['first']:.2f} and {r['second']:.2f} "
            f"in two runs (moved {r['moved']:.2f}); the rerun tolerance from the {r['source']} is "
            f"\u00b1{r['half_width']:.2f} (lines {r['lines']})."
        )
    return out


def markdown(files: ComparisonFiles) -> str:
    shown = [r for r in files.numbers if r["verdict"] != "no result"]
    claims = [c for c in files.claims if c["verdict"] != "no result"]
    lines = ["# Did it reproduce? The paper beside these results", ""]
    for s in files.sentences:
        lines += [f"**{s.split(':', 1)[0]}**:{s.split(':', 1)[1]}", ""]
    lines += [
        f"Paper: {source_line()}. Results: {files.kind.label}.",
        "",
        integrity_line(files.integrity),
        "",
        f"Numbers: {_counts_text(files.numbers, VERDICTS)}. Claims: {_counts_text(files.claims, CLAIM_VERDICTS)}.",
        "",
        "## How to read the verdicts",
        "",
    ]
    lines += [f"- **{k}**: {v}" for k, v in VOCABULARY]
    lines += [
        "",
        "## Tolerances: how they are derived",
        "",
        DERIVATION,
        "",
        "The paper's own rerun against this tolerance:",
        *rerun_check_lines(),
        "",
        f"## The paper's claims ({len(claims)} checked here of {len(files.claims)})",
        "",
    ]
    lines += (
        _table(CLAIM_HEAD, [_claim_cells(c) for c in claims])
        if claims
        else ["Nothing in these results can check a claim of the paper."]
    )
    lines += ["", f"## The paper's numbers ({len(shown)} with a result here)", ""]
    lines += (
        _table(NUMBER_HEAD, [_number_cells(r) for r in shown])
        if shown
        else ["Nothing in these results maps onto a number of the paper."]
    )
    lines += [
        "",
        f"{len(files.numbers) - len(shown)} paper numbers have no result here (listed in comparison.csv).",
        "",
        "## Per-case check against the paper's per-case files",
        "",
    ]
    lines += (
        _table(CASE_HEAD, [_case_cells(r) for r in files.cases]) if files.cases is not None else [not_possible_text()]
    )
    lines += [
        "",
        "## Run settings against the paper's",
        "",
        "Each setting is read from the run manifests and set against what the paper states or, where it "
        "states nothing, what the kit pins for a reproduction; a difference, or a setting not recorded, makes "
        "the numbers of that model and arm not comparable (named in their verdicts).",
        "",
    ]
    lines += _table(LEDGER_HEAD, [_ledger_cells(r) for r in files.ledger])
    left = paper_values()["left_out"]
    lines += [
        "",
        "## Not compared",
        "",
        f"- {len(left)} supplementary tables ({', '.join(x['table'].removeprefix('tab:') for x in left)}): "
        "their bodies are not in the available .tex, so no cell could be extracted.",
        *[
            f"- text line {c['line']} ({c['id'].removeprefix('text:')}): {c['what']} ({c['values']}): "
            + (
                f"read by the claim(s) {', '.join(files.readers[c['id']])}"
                if files.readers.get(c["id"])
                else "no computation of the kit's matches it"
            )
            for c in unmapped_numbers()
        ],
        "",
    ]
    return "\n".join(lines)


def integrity_line(integrity: Integrity | None) -> str:
    """What the integrity check found, in one line (harness.analysis.comparison.integrity)."""
    if integrity is None:
        return "Integrity: not checked (these results were not read from a results root)."
    return integrity.summary()[0].upper() + integrity.summary()[1:] + "."


def _csv(head: tuple, rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    w.writerows(rows)
    return buf.getvalue()


NUMBER_FIELDS = (
    "source",
    "where",
    "line",
    "what",
    "model",
    "paper_model",
    "unit",
    "n",
    "paper",
    "paper_lo",
    "paper_hi",
    "ours",
    "ours_lo",
    "ours_hi",
    "difference",
    "tolerance",
    "tolerance_source",
    "spread",
    "verdict",
    "why",
    "key",
)
CLAIM_FIELDS = (
    "id",
    "line",
    "says",
    "headline",
    "kind",
    "paper_model",
    "model",
    "paper",
    "ours",
    "margin",
    "paper_margin",
    "tolerance",
    "lacks",
    "verdict",
    "why",
)
CASE_FIELDS = ("paper_model", "arm", "model", "paper_pairs", "matched", "agree", "yardstick", "verdict", "why")


def numbers_csv(rows: list[dict]) -> str:
    def cell(r: dict, f: str) -> object:
        v = r[f]
        if f in ("paper", "paper_lo", "paper_hi", "ours", "ours_lo", "ours_hi", "difference") and v is not None:
            return f"{v:.{r['digits']}f}"
        if f == "tolerance" and v is not None:
            return f"{v:.{r['tolerance_shown']}f}"
        return "" if v is None else v

    return _csv(NUMBER_FIELDS, [[cell(r, f) for f in NUMBER_FIELDS] for r in rows])


def claims_csv(rows: list[dict]) -> str:
    def cell(r: dict, f: str) -> object:
        v = r[f]
        if f in ("margin", "paper_margin", "tolerance"):
            return "" if v is None else f"{v:.{r['decimals']}f}"
        return v

    return _csv(CLAIM_FIELDS, [[cell(r, f) for f in CLAIM_FIELDS] for r in rows])


def cases_csv(rows: list[dict]) -> str:
    return _csv(CASE_FIELDS, [["" if r.get(f) is None else r.get(f) for f in CASE_FIELDS] for r in rows])


def ledger_csv(rows: list[dict]) -> str:
    return _csv(("setting", "paper", "ours", "status"), [_ledger_cells(r) for r in rows])


def section_html(files: ComparisonFiles) -> list[str]:
    """The report's section: the sentences, the figure, the claims, the numbers, the per-case check, the ledger."""
    import base64

    e = html.escape
    parts = ["<h2>Did it reproduce? The paper beside these results</h2>"]
    parts += [f"<p><b>{e(s.split(':', 1)[0])}</b>:{e(s.split(':', 1)[1])}</p>" for s in files.sentences]
    parts.append(
        f'<p class="meta">Results: {e(files.kind.label)}. {e(integrity_line(files.integrity))} '
        f"Numbers: {e(_counts_text(files.numbers, VERDICTS))}. "
        f"Claims: {e(_counts_text(files.claims, CLAIM_VERDICTS))}. Files: "
        f"{e(', '.join(p.name for p in files.paths))} in {e(str(files.markdown.parent))}.</p>"
    )
    parts.append("<ul>" + "".join(f"<li><b>{e(k)}</b>: {e(v)}</li>" for k, v in VOCABULARY) + "</ul>")
    parts.append(f"<p>{e(DERIVATION)}</p>")
    if files.figure is not None:
        data = base64.b64encode(files.figure.read_bytes()).decode("ascii")
        parts.append(
            f'<figure><img alt="the paper beside these results" '
            f'src="data:image/png;base64,{data}"><figcaption>Each compared number: the paper\'s value and its '
            "printed 95% interval (black; grey: the rerun tolerance where it prints none) beside yours and "
            "your 95% calculator-cluster interval (coloured by verdict).</figcaption></figure>"
        )

    def table(caption: str, head: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
        out = [
            f'<div class="wrap"><table class="res"><caption>{e(caption)}</caption><thead><tr>'
            + "".join(f"<th>{e(h)}</th>" for h in head)
            + "</tr></thead><tbody>"
        ]
        out += [
            "<tr>" + "".join(f'<td style="white-space:normal">{e(str(c))}</td>' for c in row) + "</tr>" for row in rows
        ]
        return out + ["</tbody></table></div>"]

    claims = [c for c in files.claims if c["verdict"] != "no result"]
    parts += table("The paper's claims, checked with your statistics", CLAIM_HEAD, [_claim_cells(c) for c in claims])
    shown = [r for r in files.numbers if r["verdict"] != "no result"]
    parts += table("The paper's numbers beside yours", NUMBER_HEAD, [_number_cells(r) for r in shown])
    if files.cases is not None:
        parts += table(
            "Per-case agreement with the paper's per-case files", CASE_HEAD, [_case_cells(r) for r in files.cases]
        )
    else:
        parts.append(f"<p>{e(not_possible_text())}</p>")
    parts += table("Run settings against the paper's", LEDGER_HEAD, [_ledger_cells(r) for r in files.ledger])
    return parts


def short_model(model: str) -> str:
    return "library" if model.startswith(MODEL_FREE) else model_label(model)

"""The audits: the literature audit of the 55 calculators (s9) and the completeness audit of the formula texts
(s17, s17b), both from the formula catalogue (harness.calculators.catalogue); accuracy by audit group (s11); and
the failure audit of Program-Solve (s15, s15b) with its hash-drawn annotation sheet (written beside the tables; the
filled sheet is read from <results>/annotations/s15-failure-audit.csv)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.catalog import AUDIT_GROUPS, AUDIT_LABELS
from harness.analysis.stats.families import arm_label
from harness.analysis.stats.labels import model_label
from harness.analysis.table_format import SECTION, Omit, Table
from harness.analysis.tables.cells import acc_cell, results_root, stored_records
from harness.analysis.tables.spec import Sheet, TableSpec
from harness.arms.registry import table_arms
from harness.calculators.catalogue import CATALOGUE, FormulaEntry
from harness.data.dataset import load_dataset
from harness.run.record import Record

S15_PER_STRATUM = 20
ANNOTATION_FILE = Path("annotations") / "s15-failure-audit.csv"
SHEET_NAME = "s15-annotation-sheet.csv"
NOT_ANNOTATED = "not yet annotated"
# Outcome-decided categories of s15, in the order of the paper's taxonomy.
OUTCOME_CATEGORIES = {
    "no_program": "No program written",
    "sandbox_rejection": "Sandbox rejection",
    "raised_error": "Raised an error",
    "wrong_return_kind": "Wrong return kind",
    "unreadable_value": "Value the scorer could not read",
}
# Categories a reader assigns to a wrong value (and to an error row, whose cause also needs reading).
# The paper's category list is elided in the available source: this list is the kit's reconstruction.
READING_CATEGORIES = (
    "variable misread from the note",
    "unit conversion",
    "formula branch or convention",
    "formula text not followed",
    "rounding or date arithmetic",
    "gold answer questionable",
    "other",
)


def table_s11(an: Analysis) -> Table:
    d = an.data
    masks = {g: d.case_mask([c for c, grp in an.audit.items() if grp == g]) for g in AUDIT_GROUPS}
    cols = ["Model", "Arm"] + [
        f"{AUDIT_LABELS[g]} ({len(set(d.calculator_ids[masks[g]].tolist()))} calc.)" for g in AUDIT_GROUPS
    ]
    arms = table_arms("s11")
    rows = [
        [model_label(m), arm_label(a)]
        + [acc_cell(an, m, a, masks[g]) if masks[g].any() else "\u2013" for g in AUDIT_GROUPS]
        for m in d.models
        for a in arms
        if d.has(m, a)
    ]
    if not rows:
        raise Omit(f"none of {', '.join(arm_label(a) for a in arms)} ran")
    return Table("s11", "Exploratory: accuracy by audit group", cols, rows, ["Accuracy (%), mean over seeds."])


# ---- s9, s17, s17b: the formula catalogue -------------------------------------------------------------
def _catalogue() -> dict[int, FormulaEntry]:
    return dict(CATALOGUE)


def _categories(an: Analysis) -> dict[int, str]:
    """calculator id -> the benchmark's category (lab, physical, ...), from the bundled slice, which holds every
    calculator (part of the kit: a missing or broken file raises)."""
    out: dict[int, str] = {}
    for c in load_dataset("bundled-test").cases:
        out.setdefault(int(c.calculator_id), c.category)
    return out


def _provenance_note(entries: Iterable[FormulaEntry], field: str) -> list[str]:
    recon = sorted(e.calculator_id for e in entries if "reconstruction" in e.provenance.get(field, ""))
    if not recon:
        return []
    return [
        f"Reconstruction, not the paper's: the {field.replace('_', ' ')} of calculators "
        f"{', '.join(map(str, recon))} is the kit's own reading (the paper's table body is elided in the "
        "available source; counts match the paper). See harness/calculators/catalogue.py."
    ]


def table_s9(an: Analysis) -> Table:
    cat = _catalogue()
    uses = _categories(an)
    concern = [e for e in cat.values() if e.audit_group != "no_issue"]
    others = [e for e in cat.values() if e.audit_group == "no_issue"]
    rows = [[SECTION, f"The {len(concern)} calculators with a concern"]]
    for e in sorted(concern, key=lambda e: (e.audit_group != "replaced", e.calculator_id)):
        kind = e.flags.get("concern") or ""
        if e.replaced_by_guideline:
            kind += f"; replaced by {e.flags.get('replacing_guideline') or 'a guideline'}"
        rows.append(
            [
                f"{e.name} ({e.calculator_id})",
                f"{kind}; use: {uses.get(e.calculator_id, 'unknown')}",
                f"{e.guideline_version} ({e.guideline_date})",
                e.flags.get("note", ""),
                e.source,
            ]
        )
    rows.append([SECTION, f"The {len(others)} others (no issue identified), counted by use"])
    for use, n in sorted(Counter(uses.get(e.calculator_id, "unknown") for e in others).items()):
        rows.append([use, "", "", f"{n} calculators", ""])
    notes = [
        "Concern types: version, use, coefficient. Use: the benchmark's category of the calculator. "
        "Gold answers are the calculator's own output, so a replaced formula still scores correct.",
        *_provenance_note(concern + others, "audit_group"),
    ]
    return Table(
        "s9",
        f"Literature audit of the {len(cat)} calculators",
        ["Formula", "Type and use", "Guideline body and date", "Concern", "Sources"],
        rows,
        notes,
        "lllll",
    )


def _completeness_table(name: str, title: str, status: str, an: Analysis) -> Table:
    cat = _catalogue()
    chosen = [e for e in cat.values() if e.completeness == status]
    counts = Counter(e.completeness for e in cat.values())
    rows = [[f"{e.name} ({e.calculator_id})", e.repair] for e in sorted(chosen, key=lambda e: e.calculator_id)]
    notes = [
        f"Of {len(cat)} supplied formula texts: {counts.get('could_not_reproduce', 0)} could not reproduce the "
        f"benchmark's number, {counts.get('omitted', 0)} omitted a constant, unit, branch or convention, "
        f"{counts.get('complete', 0)} complete (unchanged).",
        *_provenance_note(chosen, "completeness"),
    ]
    return Table(name, title, ["Calculator", "Repair"], rows, notes, "ll")


def table_s17(an: Analysis) -> Table:
    return _completeness_table(
        "s17",
        "Completeness audit, part one: texts that could not reproduce the benchmark's number",
        "could_not_reproduce",
        an,
    )


def table_s17b(an: Analysis) -> Table:
    return _completeness_table("s17b", "Completeness audit, part two: incomplete texts", "omitted", an)


# ---- s15, s15b: the failure audit ---------------------------------------------------------------------
def stable_hash(model: str, case_id: str, seed: int) -> str:
    return hashlib.sha256(f"{model}\x1f{case_id}\x1f{int(seed)}".encode()).hexdigest()


def _supported(an: Analysis) -> set[int]:
    return set(an.library)


def failure_arm() -> str | None:
    """The arm s15 audits (Program-Solve): the first in arm order whose paper role lists it in "s15"."""
    return next(iter(table_arms("s15")), None)


@dataclass(frozen=True)
class FailureRow:
    """One Program-Solve record and its outcome category ('wrong_value' when answered and wrong)."""

    record: Record
    category: str

    @property
    def key(self) -> tuple[str, str, int]:
        """(model, case id, seed): how an annotation names the row."""
        return self.record.model, self.record.case_id, self.record.seed


@dataclass(frozen=True)
class SampledRow(FailureRow):
    """A failure row drawn into the annotation sample, with its stratum and the stratum's size."""

    stratum: str = ""
    stratum_size: int = 0


def failure_rows(an: Analysis) -> list[FailureRow]:
    """Every Program-Solve record (failure_arm's) with its outcome category ('wrong_value' when answered and
    wrong)."""
    out: list[FailureRow] = []
    arm = failure_arm()
    if arm is None:
        return out
    for r in stored_records(an, arm):
        if r.arm != arm:
            continue
        cat = "correct" if r.correct else ("wrong_value" if r.outcome == "answered" else r.outcome)
        out.append(FailureRow(r, cat))
    return out


def draw_sample(an: Analysis, per_stratum: int = S15_PER_STRATUM) -> list[SampledRow]:
    """Hash-drawn stratified sample: strata (model, wrong value | raised error, supported | not); in each,
    the `per_stratum` rows with the smallest stable hash of (model, case, seed)."""
    supported = _supported(an)
    strata: dict[tuple[str, str, str], list[FailureRow]] = defaultdict(list)
    for r in failure_rows(an):
        if r.category in ("wrong_value", "raised_error"):
            sup = "supported" if r.record.calculator_id in supported else "unsupported"
            strata[(r.record.model, r.category, sup)].append(r)
    sample = []
    for key in sorted(strata):
        rows = sorted(strata[key], key=lambda r: stable_hash(*r.key))
        for r in rows[:per_stratum]:
            sample.append(SampledRow(r.record, r.category, "/".join(key[1:]), len(strata[key])))
    return sample


def _executor_error(rec: Record) -> str:
    """The error of the record's last executor result ('' when none ran or none failed)."""
    results = rec.executor_results
    return (results[-1].error or "") if results else ""


SHEET_COLUMNS = (
    "model",
    "case_id",
    "seed",
    "hash",
    "stratum",
    "stratum_size",
    "calculator",
    "gold",
    "answer",
    "error",
    "program",
    "category",
    "uncertain",
    "annotator_note",
)


def annotation_sheet(an: Analysis, per_stratum: int = S15_PER_STRATUM) -> str:
    buf = io.StringIO()
    buf.write(
        f"# s15 failure audit annotation sheet. Fill 'category' with one of: {' | '.join(READING_CATEGORIES)}; "
        "'uncertain' with yes or no. Save as <results>/" + ANNOTATION_FILE.as_posix() + "\n"
    )
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SHEET_COLUMNS)
    for s in draw_sample(an, per_stratum):
        r = s.record
        w.writerow(
            [
                r.model,
                r.case_id,
                r.seed,
                stable_hash(*s.key)[:16],
                s.stratum,
                s.stratum_size,
                r.calculator_name,
                r.gold.answer if r.gold is not None else "",
                json.dumps(r.answer),
                _executor_error(r)[:300],
                r.program or "",
                "",
                "",
                "",
            ]
        )
    return buf.getvalue()


class AnnotationError(ValueError):
    """A filled annotation sheet that does not fit the sample; names the file and row."""


def read_annotations(path: Path, sample: list[SampledRow]) -> dict[tuple, tuple[str, bool]]:
    """(model, case_id, seed) -> (category, uncertain) for the filled rows of a sheet."""
    keys = {r.key for r in sample}
    out = {}
    with open(path, encoding="utf-8", newline="") as fh:
        lines = [ln for ln in fh if not ln.startswith("#")]
    for i, row in enumerate(csv.DictReader(lines), start=2):
        key = (row.get("model"), row.get("case_id"), int(row.get("seed") or -1))
        cat = (row.get("category") or "").strip()
        if not cat:
            continue
        if key not in keys:
            raise AnnotationError(f"{path}: row {i} ({key[0]}, {key[1]}, seed {key[2]}) is not in the drawn sample")
        if cat not in READING_CATEGORIES:
            raise AnnotationError(
                f"{path}: row {i}: unknown category {cat!r}; use one of {', '.join(READING_CATEGORIES)}"
            )
        out[key] = (cat, (row.get("uncertain") or "").strip().lower() in ("yes", "y", "true", "1"))
    return out


def _annotations(an: Analysis, sample: list[SampledRow]) -> tuple[dict[tuple, tuple[str, bool]], Path | None]:
    path = results_root(an) / ANNOTATION_FILE
    if not path.is_file():
        return {}, None
    try:
        return read_annotations(path, sample), path
    except AnnotationError as exc:
        raise Omit(str(exc)) from None


def table_s15(an: Analysis) -> Table:
    rows_all = failure_rows(an)
    if not rows_all:
        raise Omit("Program-Solve did not run")
    supported = _supported(an)
    sample = draw_sample(an)
    ann, path = _annotations(an, sample)
    rows = []
    for m in sorted({r.record.model for r in rows_all}):
        mine = [r for r in rows_all if r.record.model == m]
        sup = [r for r in mine if r.record.calculator_id in supported]
        count = lambda rs, c: sum(r.category == c for r in rs)  # noqa: E731
        rows.append([SECTION, f"{model_label(m)}: {len(mine)} case-seed rows, {len(sup)} supported"])
        rows.append(["Correct", str(count(mine, "correct")), str(count(sup, "correct"))])
        for code, label in OUTCOME_CATEGORIES.items():
            rows.append([label, str(count(mine, code)), str(count(sup, code))])
        rows.append(["Wrong value", str(count(mine, "wrong_value")), str(count(sup, "wrong_value"))])
        drawn = [s for s in sample if s.record.model == m and s.category == "wrong_value"]
        done = [ann[s.key] for s in drawn if s.key in ann]
        for cat in READING_CATEGORIES:
            if not drawn:
                continue
            if len(done) < len(drawn):
                rows.append([f"  wrong value: {cat}", NOT_ANNOTATED, NOT_ANNOTATED])
            else:
                k = sum(c == cat for c, _ in done)
                rows.append([f"  wrong value: {cat}", f"{k} of {len(done)} read", ""])
    notes = [
        "Program-Solve, formula and gold variables given; every case-seed row by category, seeds pooled. "
        "Supported: cases of the calculators the library implements. Outcome-decided categories come from the "
        "records; wrong values are split by reading a hash-drawn stratified sample (Table s15b).",
        "The reading categories are the kit's reconstruction (the paper's list is elided in the available source).",
    ]
    notes.append(
        f"Annotations: {path}."
        if path
        else f"No filled sheet at <results>/{ANNOTATION_FILE.as_posix()}: wrong-value categories are not yet "
        f"annotated (the sheet to fill is {SHEET_NAME} next to these tables)."
    )
    return Table(
        "s15",
        "Why Program-Solve fails with formula and gold variables given",
        ["Category", "Full", "Supported"],
        rows,
        notes,
        "lll",
    )


def table_s15b(an: Analysis) -> Table:
    sample = draw_sample(an)
    if not sample:
        raise Omit("no Program-Solve row with a wrong value or a raised error to sample")
    ann, path = _annotations(an, sample)
    cols = ["Model", "Stratum", "Rows", "Drawn", *READING_CATEGORIES]
    rows = []
    for key in sorted({(s.record.model, s.stratum) for s in sample}):
        drawn = [s for s in sample if (s.record.model, s.stratum) == key]
        got = [a for s in drawn if (a := ann.get(s.key)) is not None]
        row = [model_label(key[0]), key[1], str(drawn[0].stratum_size), str(len(drawn))]
        if len(got) < len(drawn):  # a drawn row not annotated yet
            row += [NOT_ANNOTATED] * len(READING_CATEGORIES)
        else:
            for cat in READING_CATEGORIES:
                k = sum(c == cat for c, _ in got)
                u = sum(c == cat and unc for c, unc in got)
                row.append(f"{k} ({u})" if u else str(k))
        rows.append(row)
    return Table(
        "s15b",
        "The annotated sample behind the failure audit",
        cols,
        rows,
        [
            f"Hash-drawn stratified sample: in each stratum (model, wrong value or raised error, supported or "
            f"not) the {S15_PER_STRATUM} rows with the smallest sha256 of (model, case, seed). One category "
            "each; uncertain counts in parentheses. "
            + (
                f"Annotations: {path}."
                if path
                else f"Not yet annotated: fill {SHEET_NAME} and save it as <results>/{ANNOTATION_FILE.as_posix()}."
            )
        ],
        "ll" + "r" * 2 + "l" * len(READING_CATEGORIES),
    )


SHEET = Sheet(
    SHEET_NAME,
    annotation_sheet,
    f"Failure-audit annotation sheet (s15, s15b): [{SHEET_NAME}]({SHEET_NAME}); fill it and save it as "
    f"<results>/{ANNOTATION_FILE.as_posix()}.",
)
SPECS = (
    TableSpec("s9", "audit", table_s9),
    TableSpec("s11", "audit", table_s11),
    TableSpec("s15", "audit", table_s15, sheet=SHEET),
    TableSpec("s15b", "audit", table_s15b),
    TableSpec("s17", "audit", table_s17),
    TableSpec("s17b", "audit", table_s17b),
)

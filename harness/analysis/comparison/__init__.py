"""Did it reproduce? The paper's numbers and claims beside a result set's, with verdicts a same-case rerun can trust.

`harness compare` (and a section of the HTML report, and `make reproduce`'s OUT/comparison/) is the kit's last
word to a user who has just run the paper's setting. It is built from one analysis
(harness.analysis.results_analysis) and the run manifests, module by module:

* `values`: the paper's values, claims and settings as the kit holds them (paper_values.json, extracted from the
  .tex with every line by scripts/extract_paper_values.py);
* `integrity`: first, the files the comparison reads against the root's SHA256SUMS (a file changed after it was
  written makes its numbers not comparable; a root whose sums cannot be read is refused);
* `settings`: every setting the paper states, a manifest records or the records state, per (model, arm), against the
  paper's (and the records' against their manifests');
* `context`: the one place that decides comparability (synthetic, model, dataset and revision, settings, and each
  number's own cases and seeds);
* `ours`: the user's statistics behind each number and claim, with their cases, seeds and intervals;
* `tolerance`: how far a same-case rerun moves a number (derived from the paper's rerun evidence and the user's
  seeds; the derivation is written there);
* `claims`: the paper's claims checked with the user's statistics (held / did not hold / not comparable);
* `numbers`: each number with its verdict (reproduced / consistent / discrepancy / not comparable);
* `per_case`: `--paper-cases DIR`, case-by-case agreement with the paper's per-case files;
* `render`, `figure`: comparison.md, the CSVs, the report's section and the figure, led by one plain sentence per
  model.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.comparison import render
from harness.analysis.comparison.claims import claim_rows
from harness.analysis.comparison.context import Context, DatasetKind, same_model
from harness.analysis.comparison.integrity import Integrity, IntegrityError, changed_note, check_integrity
from harness.analysis.comparison.numbers import number_rows
from harness.analysis.comparison.per_case import PaperCasesError, per_case_rows, read_paper_cases
from harness.analysis.comparison.settings import RunSettings, identity_rows, ledger_rows
from harness.analysis.comparison.values import paper_checkpoints, paper_values
from harness.analysis.results_analysis import Analysis, analyse
from harness.analysis.stats.arrays import ResultsError
from harness.model.rehearsal.labels import MODEL_FREE
from harness.run.manifest import ManifestError, ManifestFile, RunManifest, read_manifests

__all__ = [
    "Comparison",
    "ComparisonFiles",
    "IntegrityError",
    "PaperCasesError",
    "compare",
    "compare_root",
    "comparison_html",
    "write_comparison",
]


@dataclass
class Comparison:
    """Everything one comparison found: the sentences, the claim and number rows, the per-case rows (None: no
    per-case files given), the settings table, and which claims read each text number."""

    kind: DatasetKind
    sentences: list[str]
    claims: list[dict]
    numbers: list[dict]
    cases: list[dict] | None
    ledger: list[dict]
    readers: dict[str, list[str]]
    integrity: Integrity | None = None


def compare(
    an: Analysis,
    manifests: Sequence[ManifestFile | RunManifest],
    paper_cases: str | os.PathLike[str] | None = None,
    integrity: Integrity | None = None,
) -> Comparison:
    """The comparison of one analysis (its run manifests; `paper_cases`: a directory of the paper's per-case
    files, or None; `integrity`: its files against their sums, checked here from the analysis's root when not
    given)."""
    if integrity is None and an.results_dir is not None:
        integrity = check_integrity(an.results_dir, {f.path: f.sha256 for f in an.data.files if f.sha256})
    ctx = Context(an, RunSettings(manifests, an.data.files, integrity, an.data))
    claims = claim_rows(ctx)
    numbers = number_rows(ctx, claims)
    cases = per_case_rows(ctx, read_paper_cases(paper_cases)) if paper_cases is not None else None
    models = [m for m in an.data.models if m != MODEL_FREE]
    ledger = identity_rows(
        [(m, any(same_model(m, p) for p in paper_checkpoints())) for m in models],
        ctx.kind.label,
        ctx.kind.kind == "verified" and ctx.kind.reason(False) is None,
        ctx.draws,
    ) + ledger_rows(ctx.settings, sorted(ctx.looked_at, key=str))
    readers: dict[str, list[str]] = {}
    for c in paper_values()["claims"]:
        for ref in (c["check"].get("evidence") or {}).values():
            for r in ref if isinstance(ref, list) else [ref]:
                if r.startswith("text:"):
                    readers.setdefault(r.split("#")[0], [])
                    if c["id"] not in readers[r.split("#")[0]]:
                        readers[r.split("#")[0]].append(c["id"].removeprefix("claim:"))
    return Comparison(
        ctx.kind, render.headline_sentences(claims, numbers), claims, numbers, cases, ledger, readers, integrity
    )


@dataclass
class ComparisonFiles(Comparison):
    markdown: Path = None  # type: ignore[assignment]
    paths: list[Path] = None  # type: ignore[assignment]
    figure: Path | None = None


def compare_root(
    results_dir: str | Path,
    out_dir: str | os.PathLike[str],
    *,
    draws: int,
    seed: int,
    dataset: str | None = None,
    paper_cases: str | os.PathLike[str] | None = None,
    figure: bool = True,
) -> ComparisonFiles:
    """`harness compare`: integrity first (IntegrityError: sums that cannot be read), then one read of every
    results file (its sha256 from the integrity check), the run manifests, the comparison written to `out_dir`. A
    file the readers refuse (ResultsError, ManifestError) is named, and said to have changed after it was written
    where the sums show it."""
    integrity = check_integrity(Path(results_dir))
    try:
        an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset, digests=integrity.digests)
    except ResultsError as exc:
        raise type(exc)(f"{exc}{changed_note(integrity, _named_file(str(exc)))}") from None
    try:
        manifests = read_manifests(results_dir, kind="run")
    except ManifestError as exc:
        raise ManifestError(f"{exc}{changed_note(integrity, _named_file(str(exc)))}") from None
    return write_comparison(an, out_dir, manifests, paper_cases, integrity, figure=figure)


def _named_file(message: str) -> Path | None:
    """The file a reader's error message starts with ('<path>:<line>: ...' or '<path>: ...')."""
    head = message.split(": ", 1)[0]
    for candidate in (head, head.rsplit(":", 1)[0]):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def write_comparison(
    an: Analysis,
    out_dir: str | os.PathLike[str],
    manifests: Sequence[ManifestFile | RunManifest],
    paper_cases: str | os.PathLike[str] | None = None,
    integrity: Integrity | None = None,
    figure: bool = True,
) -> ComparisonFiles:
    """comparison.md, comparison.csv (numbers), comparison-claims.csv, comparison-ledger.csv, comparison-cases.csv
    (with per-case files) and comparison.png (unless `figure` is False) under `out_dir`."""
    from harness.analysis.comparison.figure import comparison_figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    c = compare(an, manifests, paper_cases, integrity)
    files = ComparisonFiles(**c.__dict__, markdown=out / "comparison.md", paths=[])
    texts = {
        "comparison.csv": render.numbers_csv(c.numbers),
        "comparison-claims.csv": render.claims_csv(c.claims),
        "comparison-ledger.csv": render.ledger_csv(c.ledger),
    }
    if c.cases is not None:
        texts["comparison-cases.csv"] = render.cases_csv(c.cases)
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
        files.paths.append(out / name)
    files.figure = comparison_figure(c.numbers, c.sentences, out / "comparison.png") if figure else None
    for name, made in (("comparison-cases.csv", c.cases is not None), ("comparison.png", files.figure is not None)):
        if not made and (out / name).exists():
            (out / name).unlink()  # a rerun must not leave an earlier run's file behind
    files.markdown.write_text(render.markdown(files), encoding="utf-8")
    files.paths = [files.markdown, *files.paths] + ([files.figure] if files.figure else [])
    return files


def comparison_html(files: ComparisonFiles) -> list[str]:
    return render.section_html(files)

"""`harness compare`: the paper's numbers and claims beside a results root's, with a verdict for each.

Writes OUT/comparison.md, comparison.csv (numbers), comparison-claims.csv, comparison-ledger.csv (settings),
comparison-cases.csv (with --paper-cases) and comparison.png (harness.analysis.comparison), and prints what the
integrity check found, one plain sentence per model and the verdict counts. The paper's values are the kit's
committed harness/analysis/paper_values.json.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness.analysis.comparison import IntegrityError, PaperCasesError, compare_root
from harness.analysis.comparison.render import counts
from harness.analysis.stats.arrays import ResultsError
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.cli.errors import explain
from harness.core.sums import refresh_own_sums
from harness.run.manifest import ManifestError


@click.command("compare")
@click.option(
    "--results",
    "results_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("results"),
    show_default=True,
    help="results root",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="output directory [default: RESULTS/comparison]",
)
@click.option("--dataset", default=None, help="compare this dataset's records when the root holds several")
@click.option(
    "--paper-cases",
    "paper_cases",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="a directory of the paper's per-case CSV files (Row Number, Calculator ID, Model, "
    "Arm, Seed, Correct): adds the case-by-case agreement check",
)
@click.option(
    "--draws",
    type=click.IntRange(min=100),
    default=DEFAULT_DRAWS,
    show_default=True,
    help="bootstrap draws (the paper's intervals use 10,000)",
)
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="bootstrap RNG seed")
def compare(
    results_dir: Path, out_dir: Path | None, dataset: str | None, paper_cases: Path | None, draws: int, seed: int
) -> None:
    """The paper's values and claims (Table 1, Table 2, the text) beside these results: per number the paper's value
    and interval, yours with your cases x seeds and interval, the rerun tolerance (from the paper's rerun evidence;
    your seeds' spread beside it, never widening it) and a verdict (reproduced / consistent / discrepancy / not
    comparable, with why); per claim held / did not hold / undecided at this many draws / not comparable, with the
    inputs it lacked; the run settings against the paper's.

    Integrity first: every results file and manifest the comparison reads is checked against the root's SHA256SUMS
    (the nearest at or above RESULTS, or checksums/results.sha256 for a committed set). A file changed, missing or
    added after the sums were written makes the numbers it feeds "not comparable: changed after it was written",
    naming the file; a root with no SHA256SUMS has every number not comparable (`harness checksums update
    --results RESULTS` records them; `harness run` and `make reproduce` write them); sums that cannot be read, or
    a changed file that no longer parses, stop the comparison with the file named. Files no number is read from
    (tables, report, logs) are named in the summary only; `harness verify` checks every file.

    Settings are read from the run manifests and the records: a record that states another arm config, decoding,
    model revision, client profile, scorer, dataset, seed or case than its manifest makes that model and arm not
    comparable, naming the field."""
    out_dir = out_dir or results_dir / "comparison"
    try:
        files = compare_root(results_dir, out_dir, draws=draws, seed=seed, dataset=dataset, paper_cases=paper_cases)
    except IntegrityError as exc:
        raise click.ClickException(str(exc)) from None
    except ManifestError as exc:
        raise click.ClickException(str(exc)) from None
    except ResultsError as exc:
        raise click.ClickException(explain(exc) or str(exc)) from exc
    except PaperCasesError as exc:
        raise click.ClickException(f"--paper-cases: {exc}") from None
    click.echo(f"results: {files.kind.label}")
    if files.integrity is not None:  # compare_root always checks it
        click.echo(files.integrity.summary())
    for sentence in files.sentences:
        click.echo(sentence)
    click.echo("numbers: " + ", ".join(f"{k} {v}" for k, v in sorted(counts(files.numbers).items())))
    click.echo("claims: " + ", ".join(f"{k} {v}" for k, v in sorted(counts(files.claims).items())))
    if files.cases is not None:
        click.echo("per case: " + ", ".join(f"{k} {v}" for k, v in sorted(counts(files.cases).items())))
    differ = [
        f"{r['field']} ({', '.join(r['differs'])})" if r.get("differs") else r["setting"]
        for r in files.ledger
        if not r["status"].startswith("matches")
    ]
    click.echo(
        f"settings: {len(files.ledger) - len(differ)} match the paper's, {len(differ)} differ or are not "
        "recorded" + (f": {'; '.join(differ)}" if differ else "")
    )
    for p in files.paths:
        click.echo(f"wrote {p}")
    refresh_own_sums(results_dir, out_dir)  # its output inside the root: the root's sums cover it

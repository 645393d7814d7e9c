"""`harness compare`: the paper's numbers and claims beside a results root's, with a verdict for each.

Writes OUT/comparison.md, comparison.csv (numbers), comparison-claims.csv, comparison-ledger.csv (settings),
comparison-cases.csv (with --paper-cases) and comparison.png (harness.analysis.comparison), and prints one plain
sentence per model and the verdict counts. The paper's values are the kit's committed
harness/analysis/paper_values.json.
"""
from __future__ import annotations

from pathlib import Path

import click

from harness.analysis.comparison import PaperCasesError, write_comparison
from harness.analysis.comparison.render import counts
from harness.analysis.results_analysis import analyse
from harness.analysis.stats.arrays import ResultsError
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.cli.errors import explain
from harness.run.manifest import ManifestError, run_manifests


@click.command("compare")
@click.option("--results", "results_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=Path("results"), show_default=True, help="results root")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="output directory [default: RESULTS/comparison]")
@click.option("--dataset", default=None, help="compare this dataset's records when the root holds several")
@click.option("--paper-cases", "paper_cases", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="a directory of the paper's per-case CSV files (Row Number, Calculator ID, Model, "
                                 "Arm, Seed, Correct): adds the case-by-case agreement check")
@click.option("--draws", type=click.IntRange(min=100), default=DEFAULT_DRAWS, show_default=True,
              help="bootstrap draws (the paper's intervals use 10,000)")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="bootstrap RNG seed")
def compare(results_dir: Path, out_dir: Path | None, dataset: str | None, paper_cases: Path | None, draws: int,
            seed: int) -> None:
    """The paper's values and claims (Table 1, Table 2, the text) beside these results: per number the paper's value
    and interval, yours with your cases x seeds and interval, the rerun tolerance and a verdict (reproduced /
    consistent / discrepancy / not comparable, with why); per claim held / did not hold / not comparable; the run
    settings against the paper's."""
    out_dir = out_dir or results_dir / "comparison"
    try:
        an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset)
        try:
            manifests = run_manifests(results_dir)
        except ManifestError as exc:
            raise click.ClickException(str(exc)) from None
        files = write_comparison(an, out_dir, manifests, paper_cases)
    except ResultsError as exc:
        raise click.ClickException(explain(exc) or str(exc)) from exc
    except PaperCasesError as exc:
        raise click.ClickException(f"--paper-cases: {exc}") from None
    click.echo(f"results: {files.kind.label}")
    for sentence in files.sentences:
        click.echo(sentence)
    click.echo("numbers: " + ", ".join(f"{k} {v}" for k, v in sorted(counts(files.numbers).items())))
    click.echo("claims: " + ", ".join(f"{k} {v}" for k, v in sorted(counts(files.claims).items())))
    if files.cases is not None:
        click.echo("per case: " + ", ".join(f"{k} {v}" for k, v in sorted(counts(files.cases).items())))
    differ = [r["setting"] for r in files.ledger if not r["status"].startswith("matches")]
    click.echo(f"settings: {len(files.ledger) - len(differ)} match the paper's, {len(differ)} differ or are not "
               "recorded" + (f" ({', '.join(differ)})" if differ else ""))
    for p in files.paths:
        click.echo(f"wrote {p}")

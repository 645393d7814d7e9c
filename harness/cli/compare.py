"""`harness compare`: the paper's numbers beside a results root's, with a verdict per number.

Writes OUT/comparison.md, comparison.csv, comparison-ledger.csv and comparison.png (harness.analysis.compare)
and prints the verdict counts. The paper's values are the kit's committed harness/analysis/paper_values.json.
"""
from __future__ import annotations

from pathlib import Path

import click

from harness.analysis.results_analysis import analyse
from harness.analysis.compare import verdict_counts, write_comparison
from harness.analysis.stats.arrays import ResultsError
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.analysis.table_format import Omit
from harness.analysis.tables_supplementary import load_manifests
from harness.cli.errors import explain


@click.command("compare")
@click.option("--results", "results_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=Path("results"), show_default=True, help="results root")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="output directory [default: RESULTS/comparison]")
@click.option("--dataset", default=None, help="compare this dataset's records when the root holds several")
@click.option("--draws", type=click.IntRange(min=100), default=DEFAULT_DRAWS, show_default=True,
              help="bootstrap draws (the paper's intervals use 10,000)")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="bootstrap RNG seed")
def compare(results_dir: Path, out_dir: Path | None, dataset: str | None, draws: int, seed: int) -> None:
    """The paper's values (Table 1, Table 2, the text's claims) beside these results: paper, ours, difference,
    tolerance and verdict (inside / outside / not comparable, with why), plus s14's settings against the paper's."""
    out_dir = out_dir or results_dir / "comparison"
    try:
        an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset)
        try:
            manifests = load_manifests(results_dir)
        except Omit as exc:
            raise click.ClickException(str(exc)) from None
        files = write_comparison(an, out_dir, manifests)
    except ResultsError as exc:
        raise click.ClickException(explain(exc) or str(exc)) from exc
    counts = verdict_counts(files.rows)
    click.echo(f"results: {files.kind.label}")
    click.echo("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    mism = [r["setting"] for r in files.ledger if r["status"].startswith("MISMATCH")]
    same = sum(r["status"] == "matches" for r in files.ledger)
    click.echo(f"settings: {same} match the paper, {len(mism)} differ, {len(files.ledger) - same - len(mism)} "
               "not applicable or not stated"
               + (f" ({', '.join(mism)})" if mism else ""))
    for p in (files.markdown, files.csv, files.ledger_csv, files.figure):
        if p is not None:
            click.echo(f"wrote {p}")

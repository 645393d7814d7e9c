"""`harness stats | tables | figures | report`: statistics and outputs from per-case results.

Each command takes `--results DIR` (the results root, `<root>/<model>/<arm>/seed<seed>.jsonl`) and
`--out DIR`; `--draws` and `--seed` fix the bootstrap (defaults: 10,000 draws, the kit's seed), so
reruns give byte-identical files.
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from harness.core.canonical_json import json_file_text
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.analysis.stats_payload import stats_payload


def _common(f):
    f = click.option("--dataset", default=None, help="analyse this dataset's records when the root holds several "
                     "(name or name@sha12; default: the one with the most runs)")(f)
    f = click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="bootstrap RNG seed")(f)
    f = click.option("--draws", type=click.IntRange(min=100), default=DEFAULT_DRAWS, show_default=True,
                     help="bootstrap draws and permutation sign flips")(f)
    f = click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
                     help="output directory")(f)
    f = click.option("--results", "results_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
                     default=Path("results"), show_default=True, help="results root")(f)
    return f


def _fail(exc: Exception) -> None:
    from harness.cli.errors import explain

    raise click.ClickException(explain(exc) or str(exc)) from exc


@click.command("stats")
@_common
def stats(results_dir: Path, out_dir: Path, draws: int, seed: int, dataset: str | None) -> None:
    """Paired gaps with case and cluster intervals, McNemar, permutation, Holm, ICC -> OUT/stats.json."""
    from harness.analysis.stats.arrays import ResultsError
    from harness.analysis.analysis_step import analyse
    from harness.analysis.stats.labels import model_label
    from harness.analysis.table_format import fmt_ci

    try:
        an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset)
    except ResultsError as exc:
        _fail(exc)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "stats.json"
    path.write_text(json_file_text(stats_payload(an), indent=1), encoding="utf-8")
    for g in an.gaps:
        if g["family"] in ("primary", "syntax"):
            click.echo(f"{model_label(g['model']):>14}  {g['comparison']:<28} {g['gap']:+7.2f} "
                       f"{fmt_ci(g['cluster_lo'], g['cluster_hi'])}  n={g['n_cases']} seeds={len(g['seeds'])}")
    for note in an.notes:
        click.echo(f"note: {note}")
    click.echo(f"wrote {path} ({len(an.gaps)} paired gaps)")


@click.command("tables")
@_common
def tables(results_dir: Path, out_dir: Path, draws: int, seed: int, dataset: str | None) -> None:
    """Table 1, Table 2 and the supplementary tables as Markdown, LaTeX and CSV."""
    from harness.analysis.stats.arrays import ResultsError
    from harness.analysis.tables import build_all

    try:
        paths = build_all(results_dir, out_dir, draws=draws, seed=seed, dataset=dataset)
    except ResultsError as exc:
        _fail(exc)
    click.echo(f"wrote {len(paths)} files to {out_dir} (see {out_dir / 'index.md'})")


@click.command("figures")
@_common
def figures(results_dir: Path, out_dir: Path, draws: int, seed: int, dataset: str | None) -> None:
    """Figure 2 (coverage vs full-set accuracy) and Figure 1b (accuracy bars), PNG and PDF."""
    from harness.analysis.figures import build_figures
    from harness.analysis.stats.arrays import ResultsError
    from harness.analysis.analysis_step import analyse

    try:
        paths = build_figures(analyse(results_dir, draws=draws, seed=seed, dataset=dataset), out_dir)
    except ResultsError as exc:
        _fail(exc)
    for p in paths:
        click.echo(f"wrote {p}")


@click.command("report")
@_common
def report(results_dir: Path, out_dir: Path, draws: int, seed: int, dataset: str | None) -> None:
    """One self-contained HTML page with the tables, figures and run manifests."""
    from harness.analysis.report import build_report
    from harness.analysis.stats.arrays import ResultsError

    try:
        page = build_report(results_dir, out_dir, draws=draws, seed=seed, dataset=dataset)
    except ResultsError as exc:
        _fail(exc)
    click.echo(f"wrote {page}")

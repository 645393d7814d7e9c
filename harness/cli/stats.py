"""`harness stats | tables | figures | report`: statistics and outputs from per-case results.

Each command takes `--results DIR` (the results root, `<root>/<model>/<arm>/seed<seed>.jsonl`) and
`--out DIR`; `--draws` and `--seed` fix the bootstrap (defaults: 10,000 draws, the kit's seed), so
reruns give byte-identical files. Written inside a results root that keeps its own SHA256SUMS, the outputs are
added to them (harness.core.sums.refresh_own_sums), so the root still verifies.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import click

from harness.analysis.figures import build_figures
from harness.analysis.report import build_report
from harness.analysis.results_analysis import Analysis, analyse
from harness.analysis.stats.arrays import ResultsError
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.analysis.stats.labels import model_label
from harness.analysis.stats_payload import stats_payload
from harness.analysis.table_format import fmt_ci
from harness.analysis.tables import build_all
from harness.cli.errors import explain
from harness.core.canonical_json import json_file_text
from harness.core.sums import refresh_own_sums

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., object])  # a command function under click's option decorators


def _common(f: F) -> F:
    f = click.option(
        "--dataset",
        default=None,
        help="analyse this dataset's records when the root holds several "
        "(name or name@sha12; default: the one with the most runs)",
    )(f)
    f = click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="bootstrap RNG seed")(f)
    f = click.option(
        "--draws",
        type=click.IntRange(min=100),
        default=DEFAULT_DRAWS,
        show_default=True,
        help="bootstrap draws and permutation sign flips",
    )(f)
    f = click.option(
        "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="output directory"
    )(f)
    f = click.option(
        "--results",
        "results_dir",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=Path("results"),
        show_default=True,
        help="results root",
    )(f)
    return f


def _fail(exc: Exception) -> NoReturn:
    raise click.ClickException(explain(exc) or str(exc)) from exc


def _from_results(build: Callable[[], T]) -> T:
    """`build()`, with a results problem (ResultsError) shown as a one- or two-line CLI error."""
    try:
        return build()
    except ResultsError as exc:
        _fail(exc)


def _analysis_command(name: str, doc: str, build: Callable[..., T], say: Callable[[T, Path], None]) -> click.Command:
    """A command with the common options that runs `build(results_dir, out_dir, draws=, seed=, dataset=)`
    (a results problem becomes a CLI error) and reports what it wrote with `say(result, out_dir)`."""

    @click.command(name, help=doc)
    @_common
    def command(results_dir: Path, out_dir: Path, draws: int, seed: int, dataset: str | None) -> None:
        say(_from_results(lambda: build(results_dir, out_dir, draws=draws, seed=seed, dataset=dataset)), out_dir)
        refresh_own_sums(results_dir, out_dir)

    return command


def _write_stats(
    results_dir: Path, out_dir: Path, *, draws: int, seed: int, dataset: str | None
) -> tuple[Analysis, Path]:
    an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "stats.json"
    path.write_text(json_file_text(stats_payload(an), indent=1), encoding="utf-8")
    return an, path


def _say_stats(written: tuple[Analysis, Path], out_dir: Path) -> None:
    an, path = written
    for g in an.gaps:
        if g["family"] in ("primary", "syntax"):
            click.echo(
                f"{model_label(g['model']):>14}  {g['comparison']:<28} {g['gap']:+7.2f} "
                f"{fmt_ci(g['cluster_lo'], g['cluster_hi'])}  n={g['n_cases']} seeds={len(g['seeds'])}"
            )
    for note in an.notes:
        click.echo(f"note: {note}")
    click.echo(f"wrote {path} ({len(an.gaps)} paired gaps)")


def _say_paths(paths: list[Path], out_dir: Path) -> None:
    for p in paths:
        click.echo(f"wrote {p}")


stats = _analysis_command(
    "stats",
    "Paired gaps with case and cluster intervals, McNemar, permutation, Holm, ICC -> OUT/stats.json.",
    _write_stats,
    _say_stats,
)
tables = _analysis_command(
    "tables",
    "Table 1, Table 2 and the supplementary tables as Markdown, LaTeX and CSV.",
    build_all,
    lambda paths, out_dir: click.echo(f"wrote {len(paths)} files to {out_dir} (see {out_dir / 'index.md'})"),
)
figures = _analysis_command(
    "figures",
    "Figure 2 (coverage vs full-set accuracy) and Figure 1b (accuracy bars), PNG and PDF.",
    lambda results_dir, out_dir, **options: build_figures(analyse(results_dir, **options), out_dir),
    _say_paths,
)
report = _analysis_command(
    "report",
    "One self-contained HTML page with the tables, figures and run manifests.",
    build_report,
    lambda page, out_dir: click.echo(f"wrote {page}"),
)

"""`harness export`, `harness checksums` and `harness verify`: what happens to results once written."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.cli.convention import convention_option
from harness.run.store import StoreError, export_results
from harness.core.paths import REPO_ROOT as ROOT
from harness.core.sums import COMMITTED_SUMS as RESULTS_MANIFEST, SUMS_FILE as CHECKSUM_FILE, write_own_sums, write_sums
from harness.verify.verification import root_for
from harness.verify.verification import verify as verify_root

DEFAULT_RESULTS = ROOT / "results"


@click.command()
@click.option("--results", "results_root", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_RESULTS,
              show_default=True, help="Results root (holds <model>/<arm>/seed<N>.jsonl).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Output file: .parquet or .csv.")
def export(results_root: Path, out_path: Path) -> None:
    """Export every per-case record under a results root to one Parquet or CSV file."""
    try:
        path = export_results(results_root, out_path)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {path}")


@click.group()
def checksums() -> None:
    """sha256 manifests of committed result files."""


@checksums.command("update")
@click.option("--results", "results_root", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"Default: {RESULTS_MANIFEST.relative_to(ROOT)} for the repository's results/, else the root's own "
                   f"{CHECKSUM_FILE} (paths relative to the root, so the root verifies wherever it is copied).")
def checksums_update(results_root: Path, manifest: Path | None) -> None:
    """Rewrite the manifest from the files now under the results root."""
    if manifest is None and results_root.resolve() != DEFAULT_RESULTS.resolve():
        written = write_own_sums(results_root)
        click.echo(f"{written['path']}: {written['files']} files")
        return
    manifest = manifest or RESULTS_MANIFEST
    n = write_sums(manifest, [results_root.resolve()], root=root_for(results_root))
    click.echo(f"{manifest}: {n} files")


@click.command()
@click.option("--results", "results_root", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Check the whole root against this manifest instead (default: each result set against its own "
                   f"{CHECKSUM_FILE}, or the committed {RESULTS_MANIFEST.relative_to(ROOT)} for the committed sets).")
@click.option("--skip-tables", is_flag=True, help="Do not re-derive tables (checksums and rescoring only).")
@convention_option
def verify(results_root: Path, manifest: Path | None, skip_tables: bool, convention: str | None) -> None:
    """Check results: checksums (missing, changed, unlisted files; a user's root against its own SHA256SUMS,
    the committed sets against the committed manifest), rescoring of every stored reply or value against its
    stored score, re-derivation of every table byte for byte, and the unit convention of every arm that
    depends on it (one per result set; with --convention, that one). Every problem names the file (and
    line); exits non-zero on any."""
    report = verify_root(results_root, manifest=manifest, convention=convention, tables=not skip_tables)
    for line in report.notes:
        click.echo(line)
    for line in report.problems:
        click.echo(line, err=True)
    if report.problems:
        click.echo(f"verify FAILED: {len(report.problems)} problem(s)", err=True)
        sys.exit(1)
    click.echo("verify OK")

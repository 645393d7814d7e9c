"""`harness export`, `harness checksums` and `harness verify`: what happens to results once written."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.checksums import RESULTS_MANIFEST, ROOT, ChecksumError, check_manifest, write_manifest
from harness.store import StoreError, export_results

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
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=Path), default=RESULTS_MANIFEST,
              show_default=True)
def checksums_update(results_root: Path, manifest: Path) -> None:
    """Rewrite the manifest from the files now under the results root."""
    n = write_manifest(manifest, [results_root.resolve()], root=root_for(results_root))
    click.echo(f"{manifest}: {n} files")


def root_for(results_root: Path) -> Path:
    """Manifest paths are relative to the repository root, or to the results root's parent outside it."""
    results_root = results_root.resolve()
    return ROOT if results_root.is_relative_to(ROOT) else results_root.parent


def verify_checksums(results_root: Path, manifest: Path) -> list[str]:
    try:
        report = check_manifest(manifest, [results_root.resolve()], root=root_for(results_root))
    except ChecksumError as exc:
        return [str(exc)]
    click.echo(f"checksums: {len(report.ok)} files match {manifest}")
    return report.lines()


@click.command()
@click.option("--results", "results_root", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=Path), default=RESULTS_MANIFEST,
              show_default=True)
def verify(results_root: Path, manifest: Path) -> None:
    """Check committed results: checksums (missing, changed, unlisted files), exit non-zero on any problem."""
    problems = verify_checksums(results_root, manifest)
    for line in problems:
        click.echo(line, err=True)
    if problems:
        click.echo(f"verify FAILED: {len(problems)} problem(s)", err=True)
        sys.exit(1)
    click.echo("verify OK")

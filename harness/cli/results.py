"""`harness export`, `harness checksums` and `harness verify`: what happens to results once written."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from harness.cli.convention import convention_option
from harness.core.paths import REPO_ROOT as ROOT
from harness.core.sums import (
    COMMITTED_SUMS,
    SUMS_FILE,
    in_committed_list,
    write_committed_sums,
    write_own_sums,
    write_sums,
)
from harness.run.store import StoreError, export_results
from harness.verify.verification import root_for
from harness.verify.verification import verify as verify_root

DEFAULT_RESULTS = ROOT / "results"


@click.command()
@click.option(
    "--results",
    "results_root",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_RESULTS,
    show_default=True,
    help="Results root (holds <model>/<arm>/seed<N>.jsonl).",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Output file: .parquet or .csv.",
)
def export(results_root: Path, out_path: Path) -> None:
    """Export every per-case record under a results root to one Parquet or CSV file."""
    try:
        path = export_results(results_root, out_path)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {path}")


F = TypeVar("F", bound=Callable[..., object])  # a command function under click's option decorators


def _old_manifest_option(f: F) -> F:
    """`--manifest`, the name these commands gave the sums file before issue 43: a clear error naming the new one."""

    def refuse(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            raise click.BadParameter(
                "is now --sums: a list of sha256 sums is a sums file (a manifest is a run's typed "
                f"record), e.g. --sums {value}",
                ctx=ctx,
                param=param,
            )

    return click.option("--manifest", hidden=True, default=None, expose_value=False, callback=refuse)(f)


@click.group()
def checksums() -> None:
    """sha256 sums of result files: a results root's own SHA256SUMS, or the committed list."""


@checksums.command("update")
@click.option(
    "--results",
    "results_root",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_RESULTS,
    show_default=True,
)
@click.option(
    "--sums",
    "sums_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=f"Write this sums file [default: {COMMITTED_SUMS.relative_to(ROOT)} for the repository's results/ "
    f"and its committed sets, else the root's own {SUMS_FILE} (paths relative to the root, so the "
    "root verifies wherever it is copied)].",
)
@_old_manifest_option
def checksums_update(results_root: Path, sums_path: Path | None) -> None:
    """Rewrite the sums from the files now under the results root."""
    if sums_path is not None:
        n = write_sums(sums_path, [results_root.resolve()], root=root_for(results_root))
        click.echo(f"{sums_path}: {n} files")
        return
    written = write_committed_sums() if in_committed_list(results_root) else write_own_sums(results_root)
    click.echo(f"{written.path}: {written.files} files")


@click.command()
@click.option(
    "--results",
    "results_root",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_RESULTS,
    show_default=True,
)
@click.option(
    "--sums",
    "sums_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Check the whole root against this sums file instead (default: each result set against its own "
    f"{SUMS_FILE}, or the committed {COMMITTED_SUMS.relative_to(ROOT)} for the committed sets).",
)
@_old_manifest_option
@click.option("--skip-tables", is_flag=True, help="Do not re-derive tables (checksums and rescoring only).")
@click.option(
    "--signed-by",
    "signed_by",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="An allowed-signers file (OpenSSH format, ssh-ed25519 keys): every result set must carry a "
    "provenance.dsse.json one of its keys signed, its files must match the signed digests and its "
    "provenance its manifests (`make verify` passes checksums/allowed_signers).",
)
@convention_option
def verify(
    results_root: Path, sums_path: Path | None, skip_tables: bool, signed_by: Path | None, convention: str | None
) -> None:
    """Check results: checksums (missing, changed, unlisted files; a user's root against its own SHA256SUMS,
    the committed sets against the committed sums list), rescoring of every stored reply or value against its
    stored score, re-derivation of every table byte for byte, and the unit convention of every arm that
    depends on it (one per result set; with --convention, that one). Every problem names the file (and
    line); exits non-zero on any."""
    report = verify_root(
        results_root, sums=sums_path, convention=convention, tables=not skip_tables, signed_by=signed_by
    )
    for line in report.notes:
        click.echo(line)
    for line in report.problems:
        click.echo(line, err=True)
    if report.problems:
        click.echo(f"verify FAILED: {len(report.problems)} problem(s)", err=True)
        sys.exit(1)
    click.echo("verify OK")

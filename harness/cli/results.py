"""`harness export`, `harness checksums` and `harness verify`: what happens to results once written."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from harness.analysis.tables import build_all
from harness.cli.convention import convention_option
from harness.model.synthetic import mixing_problem
from harness.run.store import StoreError, export_results, result_sets
from harness.verify.checksums import RESULTS_MANIFEST, ROOT, ChecksumError, check_manifest, write_manifest
from harness.verify.rescore import check_files, convention_problems, merged_conventions

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


def verify_records(result_set: Path, convention: str | None = None) -> tuple[list[str], list[str], list[str]]:
    """One read of each results file (the store's reader, files spread over worker processes): (mixing
    problems, unit-convention problems, rescoring problems). Real and synthetic (rehearsal-server) records
    mixed fail verify; each convention-dependent arm's convention is said, and a set that mixes conventions
    (or, with --convention, was made under another one) fails; every stored reply or value is rescored
    against its stored score."""
    checks = check_files(result_set)
    failed = next((c for c in checks if c.error is not None), None)
    if failed is not None:
        return [], [], [f"RESCORE  {failed.error}"]
    lines, conv_problems = convention_problems(result_set, convention, merged_conventions(checks))
    for line in lines:
        click.echo(line)
    firsts: dict = {}
    for c in checks:
        for kind, item in c.firsts.items():
            firsts.setdefault(kind, item)   # the first record of each kind, in file order, decides mixing
    problem = mixing_problem(firsts.values())
    mixing = [f"SYNTHETIC {result_set}: {problem}"] if problem else []
    mismatches = [f"{c.path}: ignoring an incomplete last line (a committed file must end with a complete record)"
                  for c in checks if c.torn] + [m for c in checks for m in c.mismatches]
    click.echo(f"rescoring: {sum(c.records for c in checks)} records in {result_set} reproduce their stored scores"
               if not mismatches else f"rescoring: {len(mismatches)} mismatches in {result_set}")
    return mixing, [f"CONVENTION {p}" for p in conv_problems], [f"RESCORE  {m}" for m in mismatches]


def verify_tables(result_set: Path) -> list[str]:
    """Recompute the tables of a result set and compare them byte for byte with the committed ones."""
    committed = result_set / "tables"
    if not committed.is_dir():
        return []
    with tempfile.TemporaryDirectory() as tmp:
        build_all(result_set, Path(tmp))
        fresh = {p.relative_to(tmp).as_posix(): p.read_bytes() for p in Path(tmp).rglob("*") if p.is_file()}
        old = {p.relative_to(committed).as_posix(): p.read_bytes() for p in committed.rglob("*") if p.is_file()}
    problems = [f"TABLE    {committed / name}: differs from the recomputed table" for name in sorted(old)
                if name in fresh and fresh[name] != old[name]]
    problems += [f"TABLE    {committed / name}: committed but not produced by the current code" for name in sorted(old)
                 if name not in fresh]
    problems += [f"TABLE    {committed / name}: produced by the current code but not committed" for name in sorted(fresh)
                 if name not in old]
    if not problems:
        click.echo(f"tables: {len(old)} files in {committed} re-derive byte for byte")
    return problems


@click.command()
@click.option("--results", "results_root", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=Path), default=RESULTS_MANIFEST,
              show_default=True)
@click.option("--skip-tables", is_flag=True, help="Do not re-derive tables (checksums and rescoring only).")
@convention_option
def verify(results_root: Path, manifest: Path, skip_tables: bool, convention: str | None) -> None:
    """Check committed results: checksums (missing, changed, unlisted files), rescoring of every stored
    reply or value against its stored score, re-derivation of every committed table byte for byte, and the
    unit convention of every arm that depends on it (one per result set; with --convention, that one).
    Every problem names the file (and line); exits non-zero on any."""
    problems = verify_checksums(results_root, manifest)
    for result_set in result_sets(results_root):
        mixing, conventions, rescoring = verify_records(result_set, convention)
        problems += mixing + conventions + rescoring
        if not skip_tables:
            problems += verify_tables(result_set)
    for line in problems:
        click.echo(line, err=True)
    if problems:
        click.echo(f"verify FAILED: {len(problems)} problem(s)", err=True)
        sys.exit(1)
    click.echo("verify OK")

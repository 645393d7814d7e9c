"""`harness data ...`: fetch, pin, build, check, list and show the MedCalc-Bench datasets the kit knows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import click

from harness.cli.dataset_option import dataset_option
from harness.data import datahub, dev_split
from harness.data.dataset import PINNED_NAMES, Dataset, DatasetError, resolve

_pins_option = click.option(
    "--pins-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Pins JSON to read/write instead of checksums/datasets.json (env MATHSOLVER_PINS_FILE).",
)
_endpoint_option = click.option(
    "--endpoint",
    default=None,
    metavar="URL",
    help="Hugging Face hub endpoint (default: $HF_ENDPOINT or https://huggingface.co).",
)


_DATA_DIR_DEFAULT = "(default: $MATHSOLVER_DATA_DIR or ~/.cache/mathsolver-kit)."


F = TypeVar("F", bound=Callable[..., object])  # a command function under click's option decorators


def _dir_option(name: str, text: str) -> Callable[[F], F]:
    """An optional directory option (a Path, default None) with its help text."""
    return click.option(name, type=click.Path(file_okay=False, path_type=Path), default=None, help=text)


def _fail(exc: Exception) -> NoReturn:
    raise click.ClickException(str(exc))


@click.group("data")
def data() -> None:
    """Fetch, pin, check and inspect the benchmark datasets."""


@data.command("fetch")
@click.option("--revision", default=None, metavar="REV", help="Must be the pinned revision (full or prefix).")
@_dir_option("--out", "Data directory " + _DATA_DIR_DEFAULT)
@_endpoint_option
@_pins_option
def fetch_cmd(revision: str | None, out: Path | None, endpoint: str | None, pins_file: Path | None) -> None:
    """Download the MedCalc-Bench Verified test split at its pinned revision and verify its sha256."""
    try:
        path = datahub.fetch(revision=revision, out=out, endpoint=endpoint, pins_file=pins_file)
    except (datahub.DatahubError, DatasetError) as exc:
        _fail(exc)
    click.echo(f"verified split ok: {path}")


@data.command("build-dev")
@click.option(
    "--source",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="MedCalc-Bench v1.0 dataset/test_data.csv (sha256 c2d23097...; download it on a networked machine "
    f"from {dev_split.V1_TEST_DATA_URL}).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="File or directory to write test_dev_v1.0.csv to (default: where --dataset dev looks: "
    "$MEDCALC_SHARED_DIR, else $MATHSOLVER_DATA_DIR or ~/.cache/mathsolver-kit).",
)
def build_dev_cmd(source: Path, out: Path | None) -> None:
    """Build the 'dev' split (625 rows of MedCalc-Bench v1.0) from the pinned v1.0 test_data.csv."""
    try:
        path = dev_split.build_dev(source, out)
    except DatasetError as exc:
        _fail(exc)
    click.echo(
        f"dev split ok: {path} ({dev_split.definition()['rows']} rows, sha256 "
        f"{dev_split.definition()['sha256'][:12]}...); use it with --dataset dev"
    )


@data.command("rehearsal-set")
@click.argument("out_csv", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--per-calculator", type=click.IntRange(1), required=True, help="Cases per calculator.")
@click.option(
    "--source",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Benchmark-schema CSV the rows are taken from [the dev rows: --dataset dev].",
)
def rehearsal_set_cmd(out_csv: Path, per_calculator: int, source: Path | None) -> None:
    """Build a rehearsal case set (N dev rows per calculator, fresh row numbers) and its provenance; print the set's
    unit convention on stdout (for `--convention "$(...)"`), the summary on stderr."""
    import json

    from harness.data.rehearsal_set import RehearsalSetError, build_rehearsal_set, dev_rows_csv

    try:
        info = build_rehearsal_set(source or dev_rows_csv(), out_csv, per_calculator)
    except (FileNotFoundError, RehearsalSetError) as exc:
        _fail(exc)
    click.echo(
        json.dumps({k: info[k] for k in ("n_cases", "reused_rows", "source_sha256", "csv_sha256", "convention")}),
        err=True,
    )
    click.echo(info["convention"])


@data.command("pin")
@click.option("--prefix", default=None, help="Commit prefix to resolve (default: the recorded revision_prefix).")
@click.option("--filename", default=None, help="File of the test split in the hub repo (default: found in its tree).")
@_dir_option("--out", "Data directory for the downloaded copy " + _DATA_DIR_DEFAULT)
@_endpoint_option
@_pins_option
def pin_cmd(
    prefix: str | None, filename: str | None, out: Path | None, endpoint: str | None, pins_file: Path | None
) -> None:
    """Resolve a revision prefix on the hub and record the full revision and file sha256."""
    try:
        if prefix is None:
            prefix = datahub.entry("verified", pins_file=pins_file).get("revision_prefix")
            if not prefix:
                raise datahub.DatahubError("no --prefix given and no revision_prefix recorded")
        e = datahub.pin(prefix, endpoint=endpoint, filename=filename, pins_file=pins_file, data_dir=out)
    except (datahub.DatahubError, DatasetError) as exc:
        _fail(exc)
    click.echo(
        f"pinned {e['repo_id']} {e['filename']} at {e['revision']} sha256 {e['sha256']} ({e['rows']} rows) "
        f"in {datahub.pins_path(pins_file)}"
    )


@data.command("check")
@_pins_option
@_dir_option("--bundled-dir", "Check bundled files here instead of harness/data (env MATHSOLVER_BUNDLED_DIR).")
@_dir_option("--shared-dir", "Shared dev directory (env MEDCALC_SHARED_DIR).")
@_dir_option("--data-dir", "Download cache (env MATHSOLVER_DATA_DIR).")
def check_cmd(pins_file: Path | None, bundled_dir: Path | None, shared_dir: Path | None, data_dir: Path | None) -> None:
    """Verify the sha256 of every dataset file the kit knows; non-zero exit naming any bad file."""
    try:
        results = datahub.check(pins_file=pins_file, bundled=bundled_dir, shared=shared_dir, data_dir=data_dir)
    except datahub.DatahubError as exc:
        _fail(exc)
    for r in results:
        click.echo(r.line())
    bad = [r for r in results if r.failed]
    if bad:
        names = ", ".join(f"{r.name} ({r.path})" for r in bad)
        raise click.ClickException(f"dataset check failed: {names}")
    click.echo(f"dataset check passed ({sum(r.status == 'ok' for r in results)} files verified)")


@data.command("list")
@_pins_option
def list_cmd(pins_file: Path | None) -> None:
    """List the pinned dataset names, where each lives and whether it is available."""
    try:
        pins = datahub.load_pins(pins_file)
    except datahub.DatahubError as exc:
        _fail(exc)
    for name in PINNED_NAMES:
        e = pins["datasets"].get(name, {})
        try:
            _, path = resolve(name)
            state = str(path)
        except DatasetError as exc:
            state = f"unavailable: {exc.problem}"
        click.echo(f"{name:<13} rows={e.get('rows', '?'):<5} {state}")


@data.command("show")
@dataset_option("--dataset", "dataset", default="bundled-test")
@click.argument("case_id", required=False)
def show_cmd(dataset: Dataset, case_id: str | None) -> None:
    """Summarise a dataset, or print one case (CASE_ID like 2-1) in full."""
    if case_id:
        case = dataset.by_case_id().get(case_id)
        if case is None:
            raise click.ClickException(
                f"{dataset.path}: no case {case_id!r} (case ids are <calculator_id>-<row_number>)"
            )
        for field_name in (
            "case_id",
            "row_number",
            "calculator_id",
            "calculator_name",
            "category",
            "output_type",
            "raw_output_type",
            "note_id",
            "note_type",
            "gold_answer",
            "gold_value",
            "lower_limit",
            "upper_limit",
            "entities",
            "question",
            "note",
            "explanation",
        ):
            value = getattr(case, field_name)
            click.echo(f"{field_name}: {value!r}" if not isinstance(value, str) else f"{field_name}: {value}")
        return
    click.echo(f"name:        {dataset.name}")
    click.echo(f"path:        {dataset.path}")
    click.echo(f"sha256:      {dataset.sha256}")
    click.echo(f"rows:        {len(dataset)}")
    click.echo(f"calculators: {len(dataset.calculator_ids())}")
    types = Counter(c.output_type for c in dataset)
    click.echo("output types: " + ", ".join(f"{k}={v}" for k, v in sorted(types.items())))

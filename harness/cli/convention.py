"""The `--convention` option every command that solves or scores takes, and how the CLI says which applies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from harness.data.conventions import ConventionChoice, convention_names, resolve_convention
from harness.data.dataset import Dataset
from harness.data.errors import DatasetError

F = TypeVar("F", bound=Callable[..., Any])

HELP = (
    "Unit convention for gold variables, extractions and library references: exact (plain arithmetic, "
    "MedCalc-Bench Verified) or medcalc-v1.0 (v1.0's stepwise-rounded conversions). Default: by content, the "
    "file's sha256 or its rows (known v1.0 rows -> medcalc-v1.0; a file mixing conventions is refused), else "
    "exact; never by file name."
)


def convention_option(fn: F) -> F:
    """Click decorator: ``--convention exact|medcalc-v1.0`` (passed as ``convention``, None when not given)."""
    return click.option("--convention", "convention", default=None, type=click.Choice(convention_names()), help=HELP)(
        fn
    )


def announce(dataset: Dataset, option: str | None, *, quiet: bool = False) -> ConventionChoice:
    """Resolve the convention for ``dataset`` and say on stdout which applies and why (``quiet``: the caller
    reports it itself, e.g. in its JSON)."""
    try:
        choice = resolve_convention(dataset, option)
    except DatasetError as exc:  # rows of mixed conventions, with the counts
        raise click.ClickException(str(exc)) from None
    if not quiet:
        click.echo(f"{getattr(dataset, 'name', dataset)}: {choice.describe()}")
    return choice

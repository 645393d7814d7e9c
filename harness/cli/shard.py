"""`harness shard` (plan, run, submit) and `harness merge`: one reproduction spread over SLURM nodes.

    harness shard plan   --shards 8 [reproduce options] [--json PATH]     # the split, as JSON
    harness shard run    --plan OUT/slurm/plan.json --out OUT --shard K   # one array task
    harness shard submit --shards 8 [--partition P] [--gpus-per-task 1] [--dry-run] [reproduce options]
    harness merge OUT/shards/shard-* --out OUT/merged [--plan OUT/slurm/plan.json]

The reproduce options are those of `harness reproduce` (launcher, models, arms, seeds, dataset,
out, ...). `make reproduce SLURM=1 [SHARDS=N] [PARTITION=...] [GPUS_PER_TASK=...] [DRY_RUN=1]` calls
`shard submit`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from harness.cli.serve import _common, _config, _run_settings
from harness.cli.vocabulary import spec_option
from harness.core.typed_json import to_json

if TYPE_CHECKING:
    from harness.reproduce.config import ReproduceConfig

F = TypeVar("F", bound=Callable[..., object])  # a command function under click's option decorators


def _run_options(f: F) -> F:
    """The run settings of a reproduction (harness.cli.vocabulary.SPEC) and the number of shards."""
    f = click.option("--shards", "n_shards", type=click.IntRange(1), required=True, help="Number of shards.")(f)
    return _run_settings(f)


def _cfg(**kw: Any) -> ReproduceConfig:
    return _config(**kw, progress=False)


@click.group("shard")
def shard() -> None:
    """Split a reproduction into shards (SLURM array tasks), run one, submit them all."""


@shard.command("plan")
@_common
@_run_options
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the plan here [default: print it].",
)
def plan_cmd(n_shards: int, json_path: Path | None, **kw: Any) -> None:
    """The stable split by model, arm, seed and case range (one case of one arm and seed is never split)."""
    from harness.reproduce.shard import ShardError, build_shard_plan, write_plan

    cfg = _cfg(**kw)
    try:
        plan = build_shard_plan(cfg, n_shards)
    except ShardError as exc:
        raise click.ClickException(str(exc)) from None
    if json_path:
        write_plan(plan, json_path)
        click.echo(
            f"{plan.n_shards} shard(s), {plan.n_units} unit(s), units per shard "
            f"{[s.units for s in plan.shards]}, request order {plan.config.order} -> {json_path}"
        )
    else:
        click.echo(json.dumps(to_json(plan), indent=1, sort_keys=True))


@shard.command("run")
@click.option("--plan", "plan_path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--shard", "index", required=True, type=click.IntRange(0), help="Shard index ($SLURM_ARRAY_TASK_ID).")
@spec_option("out", "shard run")
def run_cmd(plan_path: Path, index: int, out: Path) -> None:
    """Run one shard (resumable): start its models' servers, run its slices, stop them. Exit 1 on failure."""
    from harness.reproduce.config import ReproduceError
    from harness.reproduce.shard import ShardError, load_plan, run_shard

    try:
        manifest = run_shard(load_plan(plan_path), index, out, echo=click.echo)
    except (ShardError, ReproduceError) as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo(
            f"shard {index}: interrupted (SIGTERM or Ctrl-C); its server was stopped, finished records are "
            "kept; resubmit to resume",
            err=True,
        )
        sys.exit(130)
    except Exception as exc:
        from harness.model.client import ModelRequestError
        from harness.model.serving import LaunchError

        if isinstance(exc, (LaunchError, ModelRequestError)):
            raise click.ClickException(f"shard {index}: {exc}") from None
        raise
    click.echo(f"shard {index}: {manifest.status}, {manifest.records} record(s) in its directory")
    if manifest.status != "complete":
        sys.exit(3)


@shard.command("submit")
@_common
@_run_options
@click.option("--partition", default=None, help="SLURM partition [default: the cluster's default].")
@click.option(
    "--gpus-per-task",
    type=click.IntRange(0),
    default=None,
    help="GPUs per array task [default for vllm: the largest tensor-parallel size of the models "
    "(1; 2 with Mistral-7B); 0 otherwise].",
)
@click.option("--cpus-per-task", type=click.IntRange(1), default=None)
@click.option("--time", "time_limit", default=None, help="sbatch --time per task, e.g. 08:00:00.")
@click.option("--dry-run", is_flag=True, help="Print the plan summary, both sbatch scripts and the commands.")
def submit_cmd(
    partition: str | None,
    gpus_per_task: int | None,
    cpus_per_task: int | None,
    time_limit: str | None,
    dry_run: bool,
    n_shards: int,
    **kw: Any,
) -> None:
    """Write the plan, the array script and the merge script under OUT/slurm/ and submit them (sbatch
    --array, then the merge with --dependency=afterok). Again after a failure: only missing shards rerun."""
    from harness.reproduce.shard import ShardError
    from harness.reproduce.slurm import SlurmOptions, submit

    cfg = _cfg(**kw)
    gpus = gpus_per_task if gpus_per_task is not None else _default_gpus(cfg)
    opts = SlurmOptions(partition=partition, gpus_per_task=gpus, cpus_per_task=cpus_per_task, time_limit=time_limit)
    try:
        submit(cfg, n_shards, opts, dry_run=dry_run, echo=click.echo)
    except ShardError as exc:
        raise click.ClickException(str(exc)) from None


def _default_gpus(cfg: ReproduceConfig) -> int:
    """What the launcher kind takes per task (vllm: the largest tensor-parallel size among the chosen models,
    Mistral-7B: 2, else 1; the CPU kinds: 0)."""
    return cfg.kind.gpus_per_task(cfg.models)


@click.command("merge")
@click.argument("shard_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--plan",
    "plan_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The shard plan: every one of its shards must be given.",
)
@click.option(
    "--draws",
    type=click.IntRange(min=100),
    default=None,
    help="Bootstrap draws [default: the plan's, else the kit's 10,000].",
)
@click.option("--no-outputs", is_flag=True, help="Only records, manifest and checksums (no stats/tables/report).")
def merge(shard_dirs: tuple[Path, ...], out: Path, plan_path: Path | None, draws: int | None, no_outputs: bool) -> None:
    """Merge shard directories by record key into OUT (refusing shards that differ), then tables and checksums."""
    from harness.reproduce.merge import merge_shards
    from harness.reproduce.shard import ShardError, load_plan

    try:
        plan = load_plan(plan_path) if plan_path else None
        if draws is None and plan is not None:
            draws = plan.config.draws
        merge_shards(list(shard_dirs), out, plan=plan, draws=draws, outputs=not no_outputs, echo=click.echo)
    except ShardError as exc:
        raise click.ClickException(str(exc)) from None

"""`make reproduce SLURM=1`: one sbatch job array (one task per shard) and a merge job after it.

    submit(cfg, n_shards, options)        # writes OUT/slurm/{plan.json,shards.sbatch,merge.sbatch}, submits

SLURM does the scheduling: the array's tasks run wherever the partition has room, each one
`harness shard run --plan OUT/slurm/plan.json --shard $SLURM_ARRAY_TASK_ID` (which starts its model's
server on the GPU SLURM gave it, waits until the model is listed, runs its slices, stops the server,
and exits non-zero when anything failed), and the merge job waits on `--dependency=afterok:<array>`.

Resubmitting (the same command again) redoes only what is missing: shards whose `shard.json` says
`complete` are left out of the new `--array=` list, an unfinished shard resumes from its store by
record key, a merge job of an earlier submission that can no longer run (its array failed) is
cancelled, and a new merge job waits on the new array. Every submission is appended to
OUT/slurm/submissions.json.
"""

from __future__ import annotations

import datetime as _dt
import json
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.core.canonical_json import json_file_text
from harness.core.paths import REPO_ROOT
from harness.core.typed_json import to_json
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.shard import ShardError, ShardPlan, build_shard_plan, load_plan, shard_status, write_plan
from harness.run.manifest import manifest_path

ROOT = REPO_ROOT  # the array and merge scripts cd here: the kit checkout, the same path on every node


class SlurmError(ShardError):
    """sbatch/squeue missing or refusing; the message says which command and why."""


@dataclass
class SlurmOptions:
    partition: str | None = None
    gpus_per_task: int = 1  # vllm: one GPU per task; 0 for CPU shards (llama-cpp, tests)
    cpus_per_task: int | None = None
    time_limit: str | None = None  # sbatch --time, e.g. 08:00:00
    harness: str = ".venv/bin/harness"
    extra_env: dict | None = None  # exported in the array script (documented in it)


def _array_spec(indexes: list[int]) -> str:
    """[0,1,2,5] -> '0-2,5'"""
    parts, start, prev = [], None, None
    for i in sorted(indexes):
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            parts.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = i
    if start is not None:
        parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)


def _header(name: str, log: Path, opts: SlurmOptions, *, gpus: int, cpus: int | None) -> list[str]:
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --output={log}"]
    if opts.partition:
        lines.append(f"#SBATCH --partition={opts.partition}")
    if gpus:
        lines.append(f"#SBATCH --gpus-per-task={gpus}")
    lines.append("#SBATCH --ntasks=1")
    if cpus:
        lines.append(f"#SBATCH --cpus-per-task={cpus}")
    if opts.time_limit:
        lines.append(f"#SBATCH --time={opts.time_limit}")
    return lines


def array_script(plan_path: Path, out: Path, opts: SlurmOptions) -> str:
    logs = out / "slurm" / "logs"
    lines = _header(
        "mathsolver-shard", logs / "shard-%a.%A.out", opts, gpus=opts.gpus_per_task, cpus=opts.cpus_per_task
    )
    lines += [
        "# One task per shard of the plan. The --array= list is given on the sbatch command line, so a",
        "# resubmission names only the shards that are not complete. The task needs: the kit checkout at the",
        "# path below with its .venv (make setup), the executor image in the node's docker, and for vLLM",
        "# shards the pinned vLLM image and the model cache (HF_HOME) on the node, plus the GPU(s) above.",
        "# `harness shard run` starts the pinned server for each model of its shard on the task's GPU",
        "# (CUDA_VISIBLE_DEVICES from SLURM), waits until /v1/models lists the model, runs its slices into",
        "# its own directory, stops the server (also on failure) and exits non-zero on any failure.",
        "set -euo pipefail",
        f"cd {shlex.quote(str(ROOT))}",
        "export PYTHONUNBUFFERED=1",
    ]
    for k, v in sorted((opts.extra_env or {}).items()):
        lines.append(f"export {k}={shlex.quote(str(v))}")
    lines += [
        'echo "shard ${SLURM_ARRAY_TASK_ID} of job ${SLURM_ARRAY_JOB_ID} on $(hostname -s), '
        'GPUs: ${CUDA_VISIBLE_DEVICES:-none}"',
        f"exec {shlex.quote(opts.harness)} shard run --plan {shlex.quote(str(plan_path))} "
        f'--out {shlex.quote(str(out))} --shard "$SLURM_ARRAY_TASK_ID"',
    ]
    return "\n".join(lines) + "\n"


def merge_script(plan_path: Path, out: Path, opts: SlurmOptions) -> str:
    logs = out / "slurm" / "logs"
    lines = _header("mathsolver-merge", logs / "merge.%j.out", opts, gpus=0, cpus=opts.cpus_per_task)
    lines += [
        "# Runs after every array task succeeded (afterok): merges the shards by record key, checks they",
        "# agree on dataset, prompts, arm configs, executor policy, server settings and kit commit, derives",
        "# statistics, tables, figures and the report, and writes SHA256SUMS.",
        "set -euo pipefail",
        f"cd {shlex.quote(str(ROOT))}",
        f"exec {shlex.quote(opts.harness)} merge --plan {shlex.quote(str(plan_path))} "
        f"--out {shlex.quote(str(out / 'merged'))} {shlex.quote(str(out / 'shards'))}/shard-*",
    ]
    return "\n".join(lines) + "\n"


def _run(cmd: list[str]) -> str:
    if shutil.which(cmd[0]) is None:
        raise SlurmError(f"{cmd[0]} not found: this needs a SLURM client (`make slurm` sets up a one-node cluster)")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise SlurmError(
            f"`{shlex.join(cmd)}` failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc.stdout.strip()


def job_state(job_id: str) -> str | None:
    """The job's state while SLURM still lists it (PENDING, RUNNING, ...), else None."""
    if shutil.which("squeue") is None:
        return None
    proc = subprocess.run(["squeue", "-h", "-j", str(job_id), "-o", "%T"], capture_output=True, text=True, timeout=30)
    states = [s.strip() for s in proc.stdout.splitlines() if s.strip()]
    return states[0] if proc.returncode == 0 and states else None


def _submissions_path(out: Path) -> Path:
    return out / "slurm" / "submissions.json"


def read_submissions(out: Path) -> list[dict]:
    p = _submissions_path(out)
    return json.loads(p.read_text()) if p.exists() else []


def prepare(
    cfg: ReproduceConfig, n_shards: int, opts: SlurmOptions, *, dry_run: bool = False
) -> tuple[ShardPlan, Path, str, str]:
    """Plan (an existing plan for another config is refused), and both scripts' text."""
    out = Path(cfg.out).resolve()
    plan = build_shard_plan(cfg, n_shards, stand_in=dry_run)
    plan_path = out / "slurm" / "plan.json"
    if plan_path.exists() and not plan.dataset.stand_in:
        old = load_plan(plan_path)
        if old.plan_sha256 != plan.plan_sha256:
            raise SlurmError(
                f"{plan_path} holds another plan ({old.n_shards} shards, config "
                f"{json.dumps(to_json(old.config), sort_keys=True)[:200]}...): give this run its own OUT="
            )
    return plan, plan_path, array_script(plan_path, out, opts), merge_script(plan_path, out, opts)


def submit(
    cfg: ReproduceConfig,
    n_shards: int,
    opts: SlurmOptions,
    *,
    dry_run: bool = False,
    echo: Callable[[str], None] = print,
) -> dict:
    """Write the plan and scripts and submit the array plus the merge job (or print them when dry_run)."""
    out = Path(cfg.out).resolve()
    plan, plan_path, array_text, merge_text = prepare(cfg, n_shards, opts, dry_run=dry_run)
    todo = [i for i in range(plan.n_shards) if shard_status(out, i) != "complete"]
    array_path = out / "slurm" / "shards.sbatch"
    merge_path = out / "slurm" / "merge.sbatch"
    array_cmd = ["sbatch", "--parsable", f"--array={_array_spec(todo)}", str(array_path)] if todo else None
    merge_cmd = ["sbatch", "--parsable"] + (["--dependency=afterok:ARRAY_JOB_ID"] if todo else []) + [str(merge_path)]
    if dry_run:
        _print_dry_run(
            plan, plan_path, ((array_path, array_text), (merge_path, merge_text)), array_cmd, merge_cmd, echo
        )
        return {"dry_run": True, "plan": str(plan_path), "todo": todo}
    previous = read_submissions(out)
    if (
        not todo
        and manifest_path("merge", root=out / "merged").exists()
        and previous
        and previous[-1].get("merge_job")
        and job_state(previous[-1]["merge_job"]) is None
    ):
        echo(f"every shard is complete and {out / 'merged'} is merged: nothing to submit")
        return {"submitted": False, "todo": []}
    write_plan(plan, plan_path)
    (out / "slurm" / "logs").mkdir(parents=True, exist_ok=True)
    for path, text in ((array_path, array_text), (merge_path, merge_text)):
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
    cancelled = _cancel_earlier(previous)
    array_job = _run(array_cmd).split(";")[0] if array_cmd else None
    merge_cmd = [c.replace("ARRAY_JOB_ID", array_job) if array_job else c for c in merge_cmd]
    merge_job = _run(merge_cmd).split(";")[0]
    record = {
        "submitted_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "array_job": array_job,
        "array": _array_spec(todo),
        "merge_job": merge_job,
        "cancelled": cancelled,
        "plan_sha256": plan.plan_sha256,
    }
    _submissions_path(out).write_text(json_file_text(previous + [record], indent=1, sort_keys=False), encoding="utf-8")
    echo(
        f"submitted array job {array_job} (shards {_array_spec(todo) or 'none'}) and merge job {merge_job}"
        + (" after it" if array_job else "")
        + (f"; cancelled {', '.join(cancelled)}" if cancelled else "")
        + f"; results: {out / 'merged'}, logs: {out / 'slurm' / 'logs'}"
    )
    return {"submitted": True, **record, "todo": todo}


def _print_dry_run(
    plan: ShardPlan,
    plan_path: Path,
    scripts: tuple,
    array_cmd: list[str] | None,
    merge_cmd: list[str],
    echo: Callable[[str], None],
) -> None:
    """The plan's summary, both scripts and the submission commands, as a dry run prints them."""
    if plan.dataset.stand_in:
        echo(f"# {plan.dataset.stand_in}")
    echo(
        f"# plan: {plan.n_shards} shard(s), {plan.n_units} (model, arm, seed, case) unit(s), "
        f"{plan.estimated_requests} request(s) at most, request order {plan.config.order} -> {plan_path}"
    )
    for s in plan.shards:
        desc = ", ".join(
            f"{sl.model_key or 'model-free'}/{'+'.join(sl.arms)}/seed{'+'.join(map(str, sl.seeds))}:{len(sl.case_ids)}"
            for sl in s.slices
        )
        echo(f"#   shard {s.index}: {s.units} unit(s), weight {s.weight}: {desc}")
    for path, text in scripts:
        echo(f"# ---- {path}")
        echo(text.rstrip("\n"))
    echo("# ---- submission")
    if array_cmd:
        echo(f"ARRAY_JOB_ID=$({shlex.join(array_cmd)})")
    echo(" ".join(merge_cmd).replace("ARRAY_JOB_ID", "$ARRAY_JOB_ID"))


def _cancel_earlier(previous: list[dict]) -> list[str]:
    """The earlier submissions' jobs that would clash with a new one, cancelled: a merge job (it waits on an array
    that failed or is superseded) and pending array tasks (redone by the new array); SlurmError for one still
    running."""
    cancelled = []
    for sub in previous:
        for key in ("array_job", "merge_job"):
            job = sub.get(key)
            state = job_state(job) if job else None
            if state is None:
                continue
            if key == "merge_job" or state == "PENDING":
                _run(["scancel", str(job)])
                cancelled.append(job)
            else:
                raise SlurmError(
                    f"job {job} of an earlier submission is still {state}: wait for it or "
                    f"`scancel {job}` before resubmitting"
                )
    return cancelled

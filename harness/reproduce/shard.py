"""Split one reproduction into shards, and run one shard.

    plan = build_shard_plan(cfg, n_shards)      # stable: the same config always gives the same plan
    run_shard(plan, index)                      # one shard: its own results directory, its own servers

The unit of work is one case of one arm at one seed for one model: the record the store keys. A vote
or repair unit is one such record (its samples and repair turns are one case's work), so no unit is
ever split across shards. The units are laid out in a fixed order (model-free arms first, then each
model; within a model the arms in the given order, then seeds, then the cases in dataset order) and
cut into `n` contiguous runs of about equal estimated request count (the arm's `Solver.request_bounds`; 1 for a
model-free case). Each shard is a list of slices `(model, arm, seed, case ids)`; each slice runs as
an ordinary `harness run` of one arm at one seed over those cases (`harness.run.session.run_session`) into the
shard's own directory, and a shard with model slices starts that model's server (the same launchers
as `make reproduce`) once, waits until it lists the model, runs its slices and stops it.

A shard's directory gets `shard.json` (written at the start, rewritten at the end with status
`complete`) holding what `harness merge` compares: dataset sha256, prompt template hashes, arm
config hashes, executor policy hash, server settings and the kit's commit.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from harness.arms.prompts import template_hashes
from harness.arms.registry import get_arm
from harness.core.canonical_json import canonical_json, json_file_text
from harness.data.dataset import DatasetError, load_dataset
from harness.arms.coverage import arm_cases
from harness.reproduce.config import ReproduceConfig, launch_settings, model_arm_names, resolve_arms, select_cases
from harness.reproduce.reproduction import sigterm_as_interrupt
from harness.reproduce.plan import plan_population, request_bounds
from harness.run.manifest import (ManifestError, ShardManifest, SliceSummary, dataset_ref, manifest_path, now, origin,
                                  read_manifest, read_manifests, updated, write_manifest)
from harness.run.request import ModelTarget, RunRequest, apply_convention
from harness.run.session import run_session
from harness.run.store import iter_result_files, read_result_file

PLAN_KIND = "shard-plan"
# A test hook: comma-separated shard indexes that fail on purpose after their first slice, so a test can
# show that a resubmission finishes the run. Recorded in the shard manifest when it fires.
FAIL_ENV = "HARNESS_SHARD_FAIL_FOR_TEST"
MODEL_FREE_KEY = None   # model_key of slices of model-free arms (stored under the `library` model)


class ShardError(RuntimeError):
    """A plan or shard that cannot be used as asked; the message names the file or shard."""


def shard_dir(out: Path, index: int) -> Path:
    return Path(out) / "shards" / f"shard-{index:03d}"


def _plan_config(cfg) -> dict:
    """The parts of a ReproduceConfig a shard needs (not the output directory)."""
    d = asdict(cfg)
    d.pop("out", None)
    d.pop("progress", None)
    return d


class _StandInCase:
    """A bundled-slice case under a placeholder id, for dry-run plans of an unfetched dataset."""

    def __init__(self, case, case_id: str):
        self._case, self.case_id = case, case_id

    def __getattr__(self, name):
        return getattr(self._case, name)


def build_shard_plan(cfg, n_shards: int, *, stand_in: bool = False) -> dict:
    """Split `cfg` (a ReproduceConfig) into `n_shards` shards; see the module docstring.

    `stand_in` (dry runs only): when Verified is not fetched here, plan over its published shape
    (harness.reproduce.plan.plan_population) with placeholder case ids; such a plan is marked and cannot run."""

    if n_shards < 1:
        raise ShardError(f"--shards must be at least 1, not {n_shards}")
    arms = resolve_arms(cfg.arms)
    note = None
    try:
        dataset = load_dataset(cfg.dataset)
        cases = select_cases(dataset, cfg.limit, cfg.shortest)
        ds_info = {"name": dataset.name, "sha256": dataset.sha256, "n_cases": len(cases)}
    except DatasetError as exc:
        if not (stand_in and cfg.dataset == "verified"):
            raise ShardError(f"dataset {cfg.dataset!r} is not available: {exc}") from None
        pop = plan_population(cfg.dataset, cfg.limit, cfg.shortest)
        cases = [_StandInCase(c, f"stand-in-{i:04d}") for i, c in enumerate(pop.cases)]
        note = f"STAND-IN plan (dry run only; case ids are placeholders): {pop.description}"
        ds_info = {"name": cfg.dataset, "sha256": None, "n_cases": len(cases), "stand_in": note}
    groups: list[tuple[str | None, list]] = []
    model_free = [a for a in arms if not a.needs_model]
    with_model = [a for a in arms if a.needs_model]
    if model_free:
        groups.append((MODEL_FREE_KEY, model_free))
    for key in (cfg.models if with_model else []):
        names = model_arm_names(cfg.arms, key)        # ARMS=all: the paper's arms for this model
        groups.append((key, [a for a in with_model if a.name in names]))
    units: list[tuple[str | None, str, int, str, int]] = []   # (model_key, arm, seed, case_id, weight)
    for key, group_arms in groups:
        for arm in group_arms:
            sel = arm_cases(arm, cases, cfg.all_cases)
            for seed in cfg.seeds:
                for c in sel:
                    units.append((key, arm.name, int(seed), c.case_id, max(1, request_bounds(arm, c)[1])))
    if not units:
        raise ShardError("the run has no (arm, seed, case) units to split")
    if n_shards > len(units):
        raise ShardError(f"{n_shards} shards for {len(units)} (arm, seed, case) units: give at most {len(units)}")
    total = sum(u[4] for u in units)
    shards: list[list[dict]] = [[] for _ in range(n_shards)]
    before = 0
    for i, (key, arm, seed, case_id, w) in enumerate(units):
        # contiguous runs of about equal weight; the last units fill the last shards so none is empty
        s = max(min(n_shards - 1, before * n_shards // total), n_shards - (len(units) - i))
        before += w
        slices = shards[s]
        if slices and (slices[-1]["model_key"], slices[-1]["arm"], slices[-1]["seed"]) == (key, arm, seed):
            slices[-1]["case_ids"].append(case_id)
            slices[-1]["weight"] += w
        else:
            slices.append({"model_key": key, "arm": arm, "seed": seed, "case_ids": [case_id], "weight": w})
    empty = [i for i, s in enumerate(shards) if not s]
    if empty:
        raise ShardError(f"shard(s) {', '.join(map(str, empty))} would be empty: give fewer shards")
    plan = {
        "kind": PLAN_KIND,
        "config": _plan_config(cfg),
        "dataset": ds_info,
        "n_shards": n_shards,
        "n_units": len(units),
        "estimated_requests": total if any(u[4] > 1 for u in units) else 0,
        "shards": [{"index": i, "units": sum(len(sl["case_ids"]) for sl in s),
                    "weight": sum(sl["weight"] for sl in s), "slices": s} for i, s in enumerate(shards)],
    }
    plan["plan_sha256"] = hashlib.sha256(canonical_json(plan).encode()).hexdigest()
    return plan


def write_plan(plan: dict, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json_file_text(plan, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_plan(path: Path) -> dict:
    path = Path(path)
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ShardError(f"cannot read shard plan {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ShardError(f"{path}: not a JSON shard plan ({exc})") from None
    if not isinstance(plan, dict) or plan.get("kind") != PLAN_KIND or "shards" not in plan:
        raise ShardError(f"{path}: not a shard plan (written by `harness shard plan`)")
    body = {k: v for k, v in plan.items() if k != "plan_sha256"}
    if hashlib.sha256(canonical_json(body).encode()).hexdigest() != plan.get("plan_sha256"):
        raise ShardError(f"{path}: plan_sha256 does not match its content (edited by hand?)")
    return plan


def config_from_plan(plan: dict, out: Path) -> ReproduceConfig:
    return ReproduceConfig(**{**plan["config"], "out": Path(out), "progress": False})


def read_shard_manifest(directory: Path) -> ShardManifest:
    """The shard manifest of a shard directory (ShardError naming it: none there, or not of this kit's schema)."""
    path = manifest_path("shard", root=directory)
    if not path.is_file():
        raise ShardError(f"{directory} is not a shard directory: no {path.name}")
    try:
        found = read_manifest(path)
    except ManifestError as exc:
        raise ShardError(str(exc)) from None
    if not isinstance(found, ShardManifest):
        raise ShardError(f"{path}: a {found.kind} manifest, not a shard's")
    return found


def _fail_requested(index: int) -> bool:
    wanted = {p.strip() for p in os.environ.get(FAIL_ENV, "").split(",") if p.strip()}
    return str(index) in wanted


def run_shard(plan: dict, index: int, out: Path, *, echo: Callable[[str], None] = print) -> dict:
    """Run shard `index` of `plan` into `shard_dir(out, index)`; returns its manifest. Resumes by record key."""

    if not 0 <= index < plan["n_shards"]:
        raise ShardError(f"shard {index} is not in the plan (0..{plan['n_shards'] - 1})")
    if plan["dataset"].get("stand_in"):
        raise ShardError(f"the plan is a stand-in for an unfetched dataset and cannot run: {plan['dataset']['stand_in']}")
    shard = plan["shards"][index]
    directory = shard_dir(out, index)
    directory.mkdir(parents=True, exist_ok=True)
    cfg = config_from_plan(plan, directory)
    try:
        dataset = load_dataset(cfg.dataset)
    except DatasetError as exc:
        raise ShardError(f"dataset {cfg.dataset!r} is not available: {exc}") from None
    if dataset.sha256 != plan["dataset"]["sha256"]:
        raise ShardError(f"dataset {cfg.dataset!r} has sha256 {dataset.sha256} here but the plan was made with "
                         f"{plan['dataset']['sha256']}: every node must see the same dataset file")
    by_id = dataset.by_case_id()
    try:   # the arms as the shard's runs configure them (the convention recorded in their config)
        arms, _choice = apply_convention(resolve_arms(cfg.arms), dataset, cfg.convention)
    except ValueError as exc:
        raise ShardError(str(exc)) from None
    manifest = ShardManifest(
        origin=origin(), index=index, n_shards=plan["n_shards"], plan_sha256=plan["plan_sha256"], status="running",
        slurm={k: os.environ[k] for k in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
                                          "SLURMD_NODENAME", "CUDA_VISIBLE_DEVICES") if k in os.environ},
        dataset=dataset_ref(dataset), prompt_hashes=template_hashes(),
        arm_config_hashes={a.name: a.config_hash() for a in arms}, launch=launch_settings(cfg),
        units=shard["units"],
        slices=tuple(SliceSummary(sl["model_key"], sl["arm"], sl["seed"], sl["weight"], len(sl["case_ids"]))
                     for sl in shard["slices"]))
    state = _ShardState(directory, manifest)
    state.save()
    groups: dict = {}
    for sl in shard["slices"]:
        groups.setdefault(sl["model_key"], []).append(sl)
    slices_done = 0
    infra_failed = 0

    def run_slices(slices, *, base_url=None, model=None, revision=None, profile=None, concurrency=1, server=None):
        nonlocal slices_done, infra_failed
        for sl in slices:
            cases = [by_id[c] for c in sl["case_ids"]]
            target = ModelTarget(base_url=base_url, model=model, revision=revision, server_profile=profile or "plain",
                                 timeout=cfg.timeout, cache_dir=directory / ".cache" / "responses", server_info=server)
            request = RunRequest.build([get_arm(sl["arm"])], dataset, cases, [sl["seed"]], out_dir=directory,
                                       convention=cfg.convention, target=target,
                                       executor_backend=cfg.executor_backend, concurrency=concurrency,
                                       scorer=cfg.scorer, all_cases=True, progress=False)
            for s in asyncio.run(run_session(request)).summaries:
                infra_failed += s.infra_failed
                echo(f"shard {index}: {s.arm} seed {s.seed}: {s.total} cases, {s.written} new, {s.skipped} resumed, "
                     f"{s.infra_failed} infra-failed -> {s.path}")
            slices_done += 1
            if _fail_requested(index):
                state.update(failed_on_purpose=FAIL_ENV)
                raise ShardError(f"shard {index} fails on purpose after {slices_done} slice(s) ({FAIL_ENV} is set)")

    with sigterm_as_interrupt():  # scancel and the time limit send SIGTERM: `finally` still stops the server
        _run_groups(groups, run_slices, cfg, index, state, echo)
    state.update(infra_failed=infra_failed, status="complete" if not infra_failed else "incomplete")
    return _finish(state)


class _ShardState:
    """The shard's manifest as it is rewritten: each change a new frozen value, written at once."""

    def __init__(self, directory: Path, manifest: ShardManifest):
        self.directory, self.manifest = directory, manifest

    def update(self, **changes) -> None:
        self.manifest = updated(self.manifest, **changes)
        self.save()

    def save(self) -> None:
        write_manifest(self.directory, self.manifest)


def _run_groups(groups: dict, run_slices, cfg, index: int, state: _ShardState, echo) -> None:
    """Model-free slices directly; for each model: start its server, run its slices, stop it."""
    kind = cfg.kind
    directory = state.directory
    try:
        for key, slices in groups.items():
            if key is MODEL_FREE_KEY:
                run_slices(slices)
                continue
            launcher = kind.for_model(key, cfg.launch_options(directory / "server-logs"))
            launcher.for_task(index)   # several array tasks may share a node: own port, name, devices
            state.update(server={**(state.manifest.server or {}), key: launcher.describe().settings()})
            try:
                echo(f"shard {index}: starting {cfg.launcher} server for {key}: {' '.join(launcher.command())}")
                launcher.start()
                ready = cfg.ready_timeout or kind.ready_timeout
                launcher.wait_ready(ready)
                info = launcher.describe()
                state.update(servers={**state.manifest.servers, key: info},
                             synthetic=state.manifest.synthetic or info.synthetic)
                concurrency = cfg.concurrency or launcher.concurrency
                run_slices(slices, base_url=launcher.base_url, model=launcher.model_id, revision=launcher.revision,
                           profile=launcher.server_profile, concurrency=concurrency, server=info)
            finally:
                echo(f"shard {index}: stopping the {key} server")
                launcher.stop()
    except BaseException as exc:
        state.manifest = updated(state.manifest, status="failed", error=f"{type(exc).__name__}: {exc}")
        _finish(state)
        raise


def _finish(state: _ShardState) -> ShardManifest:
    """Counts, executor policy hash (from the run manifests) and the synthetic flag; write shard.json."""
    n = 0
    synthetic = state.manifest.synthetic
    for path in iter_result_files(state.directory):
        for rec in read_result_file(path):
            n += 1
            synthetic = synthetic or bool(rec.get("synthetic"))
    policy = set()
    for found in read_manifests(state.directory, kind="run"):
        synthetic = synthetic or found.manifest.synthetic
        if found.manifest.executor is not None:
            policy.add(found.manifest.executor.policy_hash)
    changes: dict = {}
    if len(policy) > 1:
        changes.update(status="failed",
                       error=f"runs of this shard used different executor policies: {', '.join(sorted(policy))}")
    state.update(executor_policy_hash=next(iter(policy)) if len(policy) == 1 else None, records=n,
                 synthetic=synthetic, finished_at=now(), **changes)
    return state.manifest


def shard_status(out: Path, index: int) -> str:
    """`complete`, `running`, `failed`, `incomplete` or `missing` for shard `index` under `out`."""
    try:
        return read_shard_manifest(shard_dir(out, index)).status
    except ShardError:
        return "missing"

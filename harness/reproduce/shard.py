"""Split one reproduction into shards, and run one shard.

    plan = build_shard_plan(cfg, n_shards)      # stable: the same config always gives the same plan
    run_shard(plan, index, out)                 # one shard: its own results directory, its own servers

The unit of work is one case of one arm at one seed for one model (`CaseUnit`): the record the store keys. A vote
or repair unit is one such record (its samples and repair turns are one case's work), so no unit is ever split
across shards. The units are cut into `n` contiguous runs of about equal estimated request count (the arm's
`Solver.request_bounds`; 1 for a model-free case), laid out in the run's request order (harness.run.schedule), so a
shard sends its requests in the order the one-box run would:

    case-major   model-free arms first, then each model; within a model the cases in the run's case order (the first
                 seed's), each case with every arm and seed that runs it. A case is never split across shards (the
                 prefix cache the plan prices in reuses its note across arms and seeds), and a shard's slice is the
                 model's arms and seeds over a range of cases.
    arm-major    model-free arms first, then each model; within a model the arms in the given order, then seeds, then
                 the cases in dataset order; a slice is one arm at one seed over a range of cases.

Each slice (`Slice`) runs as an ordinary `harness run` of its arms and seeds over its cases in the run's request
order (`harness.run.session.run_session`; its run manifest records the order) into the shard's own directory, and a
shard with model slices starts that model's server (the same launchers as `make reproduce`) once, waits until it
lists the model, runs its slices and stops it.

A shard's directory gets `shard.json` (written at the start, rewritten at the end with status `complete`) holding
its slices, the request order, and what `harness merge` compares: dataset sha256, prompt template hashes, arm config
hashes, executor policy hash, server settings and the kit's commit; and its SHA256SUMS when the shard ends.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from harness.arms.coverage import arm_cases
from harness.arms.prompts import template_hashes
from harness.arms.registry import get_arm
from harness.arms.spec import Arm
from harness.core.canonical_json import canonical_json, json_file_text
from harness.core.sums import SumsOnExit
from harness.core.typed_json import TypedJsonError, from_json, to_json
from harness.data.dataset import Case, Dataset, DatasetError, load_dataset
from harness.model.server_info import ServerInfo
from harness.model.serving import Launcher
from harness.reproduce.config import ReproduceConfig, Resolved, resolve_arms
from harness.reproduce.plan import plan_population, request_bounds
from harness.run.manifest import (
    LiveManifest,
    ManifestError,
    ReproduceSettings,
    ShardManifest,
    SliceSummary,
    dataset_ref,
    manifest_path,
    now,
    origin,
    read_manifest,
    read_manifests,
)
from harness.run.request import ModelTarget, RunRequest, apply_convention
from harness.run.schedule import CASE_MAJOR, case_order
from harness.run.session import run_session, sigterm_as_interrupt
from harness.run.store import iter_result_files, read_result_file

PLAN_KIND = "shard-plan"
# A test hook: comma-separated shard indexes that fail on purpose after their first slice, so a test can
# show that a resubmission finishes the run. Recorded in the shard manifest when it fires.
FAIL_ENV = "HARNESS_SHARD_FAIL_FOR_TEST"
MODEL_FREE_KEY = None  # model_key of slices of model-free arms (stored under the `library` model)
Echo = Callable[[str], None]


class ShardError(RuntimeError):
    """A plan or shard that cannot be used as asked; the message names the file or shard."""


# ---- the plan's types --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseUnit:
    """One record's work: one case of one arm at one seed for one model (None: model-free), and its weight (the
    requests it costs at most; 1 for a model-free case)."""

    model_key: str | None
    arm: str
    seed: int
    case_id: str
    weight: int


@dataclass(frozen=True)
class Slice:
    """One `harness run` of a shard: a model's arms and seeds over some cases, in the run's request order; its
    (arm, seed, case) units counted and their weight."""

    model_key: str | None
    arms: tuple[str, ...]
    seeds: tuple[int, ...]
    case_ids: tuple[str, ...]
    units: int
    weight: int

    def summary(self) -> SliceSummary:
        return SliceSummary(self.model_key, self.arms, self.seeds, len(self.case_ids), self.units, self.weight)


@dataclass(frozen=True)
class Shard:
    index: int
    units: int
    weight: int
    slices: tuple[Slice, ...]


@dataclass(frozen=True)
class PlanDataset:
    """The dataset a plan was made on: every node must see the same file (its sha256); a stand-in plan (a dry run
    over an unfetched dataset's published shape) says so and cannot run."""

    name: str
    sha256: str | None
    n_cases: int
    stand_in: str | None = None


@dataclass(frozen=True)
class ShardPlan:
    """The split of one reproduction (module docstring), read and written through harness.core.typed_json;
    `plan_sha256` covers every other field, so an edited plan is refused."""

    config: ReproduceSettings
    dataset: PlanDataset
    n_shards: int
    n_units: int
    estimated_requests: int  # 0 when every unit costs one request (or none)
    shards: tuple[Shard, ...]
    plan_sha256: str = ""
    kind: Literal["shard-plan"] = PLAN_KIND

    def body_sha256(self) -> str:
        """sha256 of the plan's canonical JSON without its plan_sha256."""
        body = {k: v for k, v in to_json(self).items() if k != "plan_sha256"}
        return hashlib.sha256(canonical_json(body).encode()).hexdigest()

    def sealed(self) -> ShardPlan:
        return replace(self, plan_sha256=self.body_sha256())


def shard_dir(out: Path, index: int) -> Path:
    return Path(out) / "shards" / f"shard-{index:03d}"


# ---- building the plan ---------------------------------------------------------------------------------------------


def build_shard_plan(cfg: ReproduceConfig, n_shards: int, *, stand_in: bool = False) -> ShardPlan:
    """Split `cfg` into `n_shards` shards (module docstring).

    `stand_in` (dry runs only): when Verified is not fetched here, plan over its published shape
    (harness.reproduce.plan.plan_population) with placeholder case ids; such a plan is marked and cannot run."""
    if n_shards < 1:
        raise ShardError(f"--shards must be at least 1, not {n_shards}")
    resolved, dataset = _plan_population(cfg, stand_in)
    blocks = _blocks(cfg, resolved)
    units = [u for block in blocks for u in block]
    if not units:
        raise ShardError("the run has no (arm, seed, case) units to split")
    if n_shards > len(blocks):
        what = "cases" if cfg.order == CASE_MAJOR else "(arm, seed, case) units"
        raise ShardError(f"{n_shards} shards for {len(blocks)} {what}: give at most {len(blocks)}")
    shards = _cut(blocks, n_shards, cfg.order == CASE_MAJOR, [a.name for a in resolved.arms], list(cfg.seeds))
    total = sum(u.weight for u in units)
    return ShardPlan(
        cfg.settings, dataset, n_shards, len(units), total if any(u.weight > 1 for u in units) else 0, tuple(shards)
    ).sealed()


class _StandInCase:
    """A bundled-slice case under a placeholder id, for dry-run plans of an unfetched dataset."""

    def __init__(self, case: Case, case_id: str) -> None:
        self._case, self.case_id = case, case_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._case, name)


def _plan_population(cfg: ReproduceConfig, stand_in: bool) -> tuple[Resolved, PlanDataset]:
    """The config resolved over its dataset, or (a dry run of an unfetched Verified split) over its published shape."""
    try:
        dataset = load_dataset(cfg.dataset)
    except DatasetError as exc:
        if not (stand_in and cfg.dataset == "verified"):
            raise ShardError(f"dataset {cfg.dataset!r} is not available: {exc}") from None
        pop = plan_population(cfg.dataset, cfg.limit, cfg.shortest)
        cases = tuple(_StandInCase(c, f"stand-in-{i:04d}") for i, c in enumerate(pop.cases))
        note = f"STAND-IN plan (dry run only; case ids are placeholders): {pop.description}"
        resolved = cfg.resolve(load_dataset("bundled-test"))
        return replace(resolved, cases=cases), PlanDataset(cfg.dataset, None, len(cases), note)
    resolved = cfg.resolve(dataset)
    return resolved, PlanDataset(dataset.name, dataset.sha256, len(resolved.cases))


def _groups(cfg: ReproduceConfig, resolved: Resolved) -> list[tuple[str | None, tuple[Arm, ...]]]:
    """(model key, its arms): the model-free arms first (None), then each model (ARMS=all: the paper's arms)."""
    groups: list[tuple[str | None, tuple[Arm, ...]]] = []
    if resolved.model_free:
        groups.append((MODEL_FREE_KEY, resolved.model_free))
    if resolved.with_model:
        groups += [(key, resolved.arms_of(key)) for key in cfg.models]
    return groups


def _blocks(cfg: ReproduceConfig, resolved: Resolved) -> list[list[CaseUnit]]:
    """The run's units in its request order, in the blocks no shard boundary may cut: under case-major a case's
    units (every arm and seed of one model on that case), under arm-major each unit alone."""
    blocks: list[list[CaseUnit]] = []
    for key, arms in _groups(cfg, resolved):
        covered = {a.name: [c.case_id for c in arm_cases(a, list(resolved.cases), cfg.all_cases)] for a in arms}
        weight = {
            (a.name, c.case_id): max(1, request_bounds(a, c)[1])
            for a in arms
            for c in arm_cases(a, list(resolved.cases), cfg.all_cases)
        }
        if cfg.order == CASE_MAJOR:
            ids = set().union(*map(set, covered.values()))
            for case in case_order([c for c in resolved.cases if c.case_id in ids], cfg.seeds[0]):
                blocks.append(
                    [
                        CaseUnit(key, a.name, seed, case.case_id, weight[(a.name, case.case_id)])
                        for a in arms
                        if case.case_id in covered[a.name]
                        for seed in cfg.seeds
                    ]
                )
        else:
            blocks += [
                [CaseUnit(key, a.name, seed, cid, weight[(a.name, cid)])]
                for a in arms
                for seed in cfg.seeds
                for cid in covered[a.name]
            ]
    return blocks


def _cut(
    blocks: list[list[CaseUnit]], n_shards: int, case_major: bool, arms: list[str], seeds: list[int]
) -> list[Shard]:
    """Contiguous runs of blocks of about equal weight; the last blocks fill the last shards so none is empty."""
    total = sum(u.weight for block in blocks for u in block)
    parts: list[list[CaseUnit]] = [[] for _ in range(n_shards)]
    before = 0
    for i, block in enumerate(blocks):
        s = max(min(n_shards - 1, before * n_shards // total), n_shards - (len(blocks) - i))
        before += sum(u.weight for u in block)
        parts[s] += block
    shards = []
    for index, units in enumerate(parts):
        slices = _slices(units, case_major, arms, seeds)
        shards.append(Shard(index, len(units), sum(u.weight for u in units), tuple(slices)))
    return shards


def _slices(units: list[CaseUnit], case_major: bool, arms: list[str], seeds: list[int]) -> list[Slice]:
    """A shard's units as slices, each one run: consecutive units of one model (case-major: its arms and seeds
    together) or of one (model, arm, seed) (arm-major); arms and seeds in the run's order (`arms`, `seeds`), cases in
    the units' (the run's case order)."""

    def group(u: CaseUnit) -> tuple:
        return (u.model_key,) if case_major else (u.model_key, u.arm, u.seed)

    runs: list[list[CaseUnit]] = []
    for u in units:
        if not runs or group(u) != group(runs[-1][0]):
            runs.append([])
        runs[-1].append(u)
    return [
        Slice(
            run[0].model_key,
            tuple(a for a in arms if any(u.arm == a for u in run)),
            tuple(s for s in seeds if any(u.seed == s for u in run)),
            tuple(dict.fromkeys(u.case_id for u in run)),
            len(run),
            sum(u.weight for u in run),
        )
        for run in runs
    ]


# ---- the plan on disk ----------------------------------------------------------------------------------------------


def write_plan(plan: ShardPlan, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json_file_text(to_json(plan), indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_plan(path: Path) -> ShardPlan:
    """A plan written by `harness shard plan` (ShardError naming the file: unreadable, not a plan, edited)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ShardError(f"cannot read shard plan {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ShardError(f"{path}: not a JSON shard plan ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != PLAN_KIND:
        raise ShardError(f"{path}: not a shard plan (written by `harness shard plan`)")
    try:
        plan = from_json(ShardPlan, data)
    except TypedJsonError as exc:
        raise ShardError(f"{path}: not a shard plan of this kit ({exc})") from None
    if plan.body_sha256() != plan.plan_sha256:
        raise ShardError(f"{path}: plan_sha256 does not match its content (edited by hand?)")
    return plan


def config_from_plan(plan: ShardPlan, out: Path) -> ReproduceConfig:
    return ReproduceConfig.of(plan.config, out=Path(out), progress=False)


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


def shard_status(out: Path, index: int) -> str:
    """`complete`, `running`, `failed`, `incomplete` or `missing` for shard `index` under `out`."""
    try:
        return read_shard_manifest(shard_dir(out, index)).status
    except ShardError:
        return "missing"


# ---- running one shard ----------------------------------------------------------------------------------------------


def run_shard(plan: ShardPlan, index: int, out: Path, *, echo: Echo = print) -> ShardManifest:
    """Run shard `index` of `plan` into `shard_dir(out, index)`; returns its manifest. Resumes by record key; the
    directory's SHA256SUMS are written when it ends, however it ends."""
    shard = _shard_of(plan, index)
    directory = shard_dir(out, index)
    directory.mkdir(parents=True, exist_ok=True)
    cfg = config_from_plan(plan, directory)
    dataset = _plan_dataset(cfg, plan)
    run = _ShardRun(
        plan, shard, cfg, dataset, LiveManifest(directory, _first_manifest(plan, shard, cfg, dataset)), echo
    )
    with SumsOnExit(directory):
        with sigterm_as_interrupt():  # scancel and the time limit send SIGTERM: `finally` still stops the server
            run.run()
        run.live.update(infra_failed=run.infra_failed, status="complete" if not run.infra_failed else "incomplete")
        return run.finish()


def _shard_of(plan: ShardPlan, index: int) -> Shard:
    if not 0 <= index < plan.n_shards:
        raise ShardError(f"shard {index} is not in the plan (0..{plan.n_shards - 1})")
    if plan.dataset.stand_in:
        raise ShardError(f"the plan is a stand-in for an unfetched dataset and cannot run: {plan.dataset.stand_in}")
    return plan.shards[index]


def _plan_dataset(cfg: ReproduceConfig, plan: ShardPlan) -> Dataset:
    """The plan's dataset on this node: the same file (its sha256) as where the plan was made."""
    try:
        dataset = load_dataset(cfg.dataset)
    except DatasetError as exc:
        raise ShardError(f"dataset {cfg.dataset!r} is not available: {exc}") from None
    if dataset.sha256 != plan.dataset.sha256:
        raise ShardError(
            f"dataset {cfg.dataset!r} has sha256 {dataset.sha256} here but the plan was made with "
            f"{plan.dataset.sha256}: every node must see the same dataset file"
        )
    return dataset


def _first_manifest(plan: ShardPlan, shard: Shard, cfg: ReproduceConfig, dataset: Dataset) -> ShardManifest:
    try:  # every arm of the run as the runs configure them (the convention recorded in their config): merge compares
        arms, _choice = apply_convention(resolve_arms(cfg.arms), dataset, cfg.convention)
    except ValueError as exc:
        raise ShardError(str(exc)) from None
    return ShardManifest(
        origin=origin(),
        index=shard.index,
        n_shards=plan.n_shards,
        plan_sha256=plan.plan_sha256,
        status="running",
        slurm={
            k: os.environ[k]
            for k in (
                "SLURM_JOB_ID",
                "SLURM_ARRAY_JOB_ID",
                "SLURM_ARRAY_TASK_ID",
                "SLURMD_NODENAME",
                "CUDA_VISIBLE_DEVICES",
            )
            if k in os.environ
        },
        dataset=dataset_ref(dataset),
        prompt_hashes=template_hashes(),
        arm_config_hashes={a.name: a.config_hash() for a in arms},
        launch=cfg.launch_settings(),
        order=cfg.order,
        seeds=cfg.seeds,
        units=shard.units,
        slices=tuple(sl.summary() for sl in shard.slices),
    )


def _fail_requested(index: int) -> bool:
    wanted = {p.strip() for p in os.environ.get(FAIL_ENV, "").split(",") if p.strip()}
    return str(index) in wanted


@dataclass
class _ShardRun:
    """One shard as it runs: its slices by model, the manifest rewritten as it goes, what it has done so far."""

    plan: ShardPlan
    shard: Shard
    cfg: ReproduceConfig
    dataset: Dataset
    live: LiveManifest
    echo: Echo
    slices_done: int = 0
    infra_failed: int = 0

    def run(self) -> None:
        """Model-free slices directly; for each model: start its server, run its slices, stop it. A failure is
        recorded in the manifest before it propagates."""
        groups: dict[str | None, list[Slice]] = {}
        for sl in self.shard.slices:
            groups.setdefault(sl.model_key, []).append(sl)
        try:
            for key, slices in groups.items():
                if key is MODEL_FREE_KEY:
                    self.run_slices(slices)
                else:
                    self.run_model(key, slices)
        except BaseException as exc:
            self.live.update(status="failed", error=f"{type(exc).__name__}: {exc}")
            self.finish()
            raise

    def run_model(self, key: str, slices: list[Slice]) -> None:
        cfg, index, echo = self.cfg, self.shard.index, self.echo
        launcher = cfg.kind.for_model(key, cfg.launch_options(self.live.root / "server-logs"))
        launcher.for_task(index)  # several array tasks may share a node: own port, name, devices
        self.live.update(server={**(self.live.manifest.server or {}), key: launcher.describe().settings()})
        try:
            echo(f"shard {index}: starting {cfg.launcher} server for {key}: {' '.join(launcher.command())}")
            launcher.start()
            launcher.wait_ready(cfg.ready_timeout or cfg.kind.ready_timeout)
            info = launcher.describe()
            self.live.update(
                servers={**self.live.manifest.servers, key: info},
                synthetic=self.live.manifest.synthetic or info.synthetic,
            )
            self.run_slices(
                slices, _target(cfg, self.live.root, launcher, info), cfg.concurrency or launcher.concurrency
            )
        finally:
            echo(f"shard {index}: stopping the {key} server")
            launcher.stop()

    def run_slices(self, slices: list[Slice], target: ModelTarget | None = None, concurrency: int = 1) -> None:
        """Each slice as one run of its arms and seeds over its cases, in the run's request order."""
        cfg, index = self.cfg, self.shard.index
        by_id = self.dataset.by_case_id()
        for sl in slices:
            request = RunRequest.build(
                [get_arm(a) for a in sl.arms],
                self.dataset,
                [by_id[c] for c in sl.case_ids],
                sl.seeds,
                out_dir=self.live.root,
                convention=cfg.convention,
                target=target or _target(cfg, self.live.root),
                concurrency=concurrency,
                executor_backend=cfg.executor_backend,
                scorer=cfg.scorer,
                all_cases=cfg.all_cases,
                progress=False,
                order=cfg.order,
            )
            for s in asyncio.run(run_session(request)).summaries:
                self.infra_failed += s.infra_failed
                self.echo(
                    f"shard {index}: {s.arm} seed {s.seed}: {s.total} cases, {s.written} new, {s.skipped} "
                    f"resumed, {s.infra_failed} infra-failed -> {s.path}"
                )
            self.slices_done += 1
            if _fail_requested(index):
                self.live.update(failed_on_purpose=FAIL_ENV)
                raise ShardError(
                    f"shard {index} fails on purpose after {self.slices_done} slice(s) ({FAIL_ENV} is set)"
                )

    def finish(self) -> ShardManifest:
        """Counts, executor policy hash (from the run manifests) and the synthetic flag; shard.json rewritten."""
        directory, manifest = self.live.root, self.live.manifest
        n, synthetic = 0, manifest.synthetic
        for path in iter_result_files(directory):
            for rec in read_result_file(path):
                n += 1
                synthetic = synthetic or rec.synthetic
        policy = set()
        for found in read_manifests(directory, kind="run"):
            synthetic = synthetic or found.manifest.synthetic
            if found.manifest.executor is not None:
                policy.add(found.manifest.executor.policy_hash)
        changes: dict = {}
        if len(policy) > 1:
            changes.update(
                status="failed",
                error=f"runs of this shard used different executor policies: {', '.join(sorted(policy))}",
            )
        self.live.update(
            executor_policy_hash=next(iter(policy)) if len(policy) == 1 else None,
            records=n,
            synthetic=synthetic,
            finished_at=now(),
            **changes,
        )
        return self.live.manifest


def _target(
    cfg: ReproduceConfig, directory: Path, launcher: Launcher | None = None, info: ServerInfo | None = None
) -> ModelTarget:
    """The model a slice's run talks to (none for model-free slices)."""
    if launcher is None:
        return ModelTarget(timeout=cfg.timeout, cache_dir=directory / ".cache" / "responses")
    return ModelTarget(
        base_url=launcher.base_url,
        model=launcher.model_id,
        revision=launcher.revision,
        server_profile=launcher.server_profile or "plain",
        timeout=cfg.timeout,
        cache_dir=directory / ".cache" / "responses",
        server_info=info,
    )

"""Manifests: one typed value per kind, like the record (harness.run.record) and inspect_ai's EvalSpec.

Four kinds, told apart by their `kind` field, never by their file name or shape:

* `RunManifest` (`run`): one `harness run` (or one block of the reproduce pipeline, one slice of a shard): the
  dataset, the arms' configs and hashes, the prompt templates, seeds and cases, the model, the client, the server
  (the launcher's typed `ServerInfo`), the executor, the unit convention; rewritten at the end with the units'
  summaries.
* `ReproduceManifest` (`reproduce`): one `make reproduce` pipeline: its settings (`ReproduceSettings`), its blocks
  (which run manifests each wrote), the servers it started, the gVisor record (`RunscRecord`), status and outputs.
* `MergeManifest` (`merge`): one `harness merge` of shards: which shard gave how many records, what they agreed on.
* `ShardManifest` (`shard`): one shard of a SLURM reproduction (`shard.json` in the shard's directory): its slices
  and the request order they ran in, and what `harness merge` compares (dataset, prompt and arm hashes, executor
  policy, server settings, request order, the kit's commit).

Every kind shares the typed parts: `Origin` (when, the command, the kit's git state, Python, platform, the locked
packages), `DatasetRef`, `ModelRef`, `ServerInfo` (harness.model.server_info: the server with its flags),
`ExecutorInfo`, `ArmConfig` (harness.arms.spec), `ConventionRef`, `ClientInfo`.

Each kind has its own schema number (``MANIFEST_SCHEMAS``), written into every manifest of the kind
(``manifest_schema``); it bumps whenever a field of that kind (or of a part it holds) is added, removed or changes
meaning, so a change to the shard manifest leaves run manifests readable; result sets whose manifests another schema
wrote are regenerated rather than read through shims.

Files. `manifest_path(kind, id, root=...)` is the one place a manifest's file name is made:
`manifest-<run id>.json`, `manifest-reproduce-<run id>.json`, `manifest-merge.json`, `shard.json`.
`read_manifests(root, kind=...)` is the one reader: the manifests directly in `root` (never deeper: a directory of
result sets is not a result set), each through its kind's `from_json`; a file that is not JSON, has no known
`kind`, another schema, an unknown field, a missing one or one of the wrong type is one `ManifestError` naming the
file. `write_manifest(root, manifest)` is the one writer (atomic); `LiveManifest` rewrites a manifest as its run goes.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, TypeVar

from harness.arms.spec import Arm, ArmConfig
from harness.core.canonical_json import json_file_text
from harness.core.host import RunscRecord
from harness.core.paths import REPO_ROOT
from harness.core.seeds import PAPER_SEEDS
from harness.core.typed_json import TypedJsonError, from_json, to_json
from harness.data.conventions import ConventionChoice
from harness.data.dataset import Dataset
from harness.model.server_info import ServerInfo, ServerSettings
from harness.run.runner import ArmSeedSummary
from harness.run.schedule import DEFAULT_ORDER, Order

ROOT = REPO_ROOT
LOCK_FILE = ROOT / "requirements.lock"
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s\\;]+)")
# per kind: run 2 (RunManifest.order, issue 36); reproduce, merge and shard 3 (issue 43: typed settings and outputs,
# the shard's request order and slices of several arms and seeds, the merge's typed agreement, no checksums field)
MANIFEST_SCHEMAS = {"run": 2, "reproduce": 3, "merge": 3, "shard": 3}
MANIFEST_SCHEMA = MANIFEST_SCHEMAS["run"]
MANIFEST_GLOB = "manifest-*.json"
SHARD_MANIFEST = "shard.json"

__all__ = [
    "MANIFEST_SCHEMA",
    "MANIFEST_SCHEMAS",
    "ArmConfig",
    "Block",
    "ClientInfo",
    "ClientProfile",
    "ConventionRef",
    "DatasetRef",
    "ExecutorInfo",
    "GitState",
    "LaunchSettings",
    "LiveManifest",
    "Manifest",
    "ManifestError",
    "ManifestFile",
    "MergeManifest",
    "MergedShard",
    "ModelRef",
    "Origin",
    "Outputs",
    "Packages",
    "ReproduceManifest",
    "ReproduceSettings",
    "RunManifest",
    "RunscRecord",
    "ServerInfo",
    "ServerRun",
    "ServerSettings",
    "ShardManifest",
    "ShardsAgreed",
    "SliceSummary",
    "dataset_ref",
    "git_state",
    "locked_packages",
    "manifest_files",
    "manifest_path",
    "origin",
    "read_manifest",
    "read_manifests",
    "run_manifests",
    "write_manifest",
]


class ManifestError(ValueError):
    """A manifest file that cannot be read as one of this kit's typed manifests (the message names the file)."""


# ---- the typed parts ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GitState:
    """The kit's checkout: commit and dirty flag (None when not a git checkout)."""

    commit: str | None
    dirty: bool | None


@dataclass(frozen=True)
class Packages:
    """The hash-locked packages (requirements.lock) and the installed ones that do not match their pin."""

    lock_file: str
    locked: dict[str, str]
    not_matching_lock: tuple[str, ...]


@dataclass(frozen=True)
class Origin:
    """Where and when a manifest was written: the command line, the kit's checkout, Python, platform, packages."""

    created_at: str
    command: tuple[str, ...]
    git: GitState
    python: str
    platform: str
    packages: Packages


@dataclass(frozen=True)
class DatasetRef:
    """The dataset a run read: its name, the file, its content sha256, the hub revision (None for a file the pins
    name by sha256 alone: checksums/datasets.json holds the revision), and its number of cases."""

    name: str
    path: str
    sha256: str
    revision: str | None
    n_cases: int


@dataclass(frozen=True)
class ModelRef:
    """The model a run's records name (`library` for model-free arms), its weights' revision and client profile."""

    id: str
    revision: str | None
    server_profile: str | None


@dataclass(frozen=True)
class ConventionRef:
    """The unit convention in force and why (harness.data.conventions.ConventionChoice)."""

    name: str
    source: str
    reason: str
    rounding: str

    @classmethod
    def of(cls, choice: ConventionChoice) -> ConventionRef:
        return from_json(cls, choice.to_dict())


@dataclass(frozen=True)
class ClientProfile:
    """The server profile: request fields added to every request, and whether sampled requests carry a seed."""

    name: str
    extra: dict[str, Any]
    send_seed: bool


@dataclass(frozen=True)
class ClientInfo:
    """The model client's settings (harness.model.client.ModelClient.describe())."""

    base_url: str
    model: str
    model_revision: str | None
    profile: ClientProfile
    concurrency: int
    timeout_s: float
    max_retries: int
    cache_dir: str | None

    @classmethod
    def of(cls, described: dict[str, Any]) -> ClientInfo:
        return from_json(cls, described, "client")


@dataclass(frozen=True)
class ExecutorInfo:
    """The executor as `Executor.describe()` states it (executor/api.py, executor/pool.py): backend and why, the
    policy hash and limits, the worker pool; for the container backend the image, runtime and docker flags; for
    the process backend the supervisor. A field the executor adds is refused here until it is declared."""

    backend: str
    requested_backend: str
    backend_reason: str
    workers: int
    policy_hash: str
    limits: dict[str, Any]
    disabled_layers: tuple[str, ...]
    host_python: str
    recycle_after: int | None = None
    recycle_on: tuple[str, ...] = ()
    max_attempts: int | None = None
    stats: dict[str, int] = field(default_factory=dict)
    address_layout: str | None = None
    supervisor: dict[str, Any] | None = None
    seccomp: dict[str, Any] | None = None
    selftest: dict[str, Any] | None = None
    describe_error: str | None = None
    # the process backend
    supervisor_command: tuple[str, ...] | None = None
    python: str | None = None
    replaced_supervisors: int | None = None
    # the container backend
    image: str | None = None
    image_id: str | None = None
    rootfs_sha256: str | None = None
    layers: tuple[str, ...] | None = None
    executor_src_sha256: str | None = None
    runtime: dict[str, Any] | None = None
    runsc_version: str | None = None
    docker_server_version: str | None = None
    run_flags: tuple[str, ...] | None = None
    command: tuple[str, ...] | None = None
    seccomp_profile: str | None = None
    seccomp_profile_sha256: str | None = None
    pin_cpus: bool | None = None

    @classmethod
    def of(cls, described: dict[str, Any]) -> ExecutorInfo:
        return from_json(cls, described, "executor")


# ---- the four kinds ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunManifest:
    """One run (module docstring); `summaries`, `requests_sent` and `cache_hits` are None until it ends."""

    run_id: str
    origin: Origin
    dataset: DatasetRef
    arms: dict[str, ArmConfig]
    arm_config_hashes: dict[str, str]
    prompts: dict[str, str]
    seeds: tuple[int, ...]
    scorer: str
    case_ids: tuple[str, ...]
    model: ModelRef
    client: ClientInfo | None
    server: ServerInfo | None
    executor: ExecutorInfo | None
    convention: ConventionRef
    order: Order  # the request order (harness.run.schedule); no record depends on it
    synthetic: bool = False
    summaries: tuple[ArmSeedSummary, ...] | None = None
    requests_sent: int | None = None
    cache_hits: int | None = None
    kind: Literal["run"] = "run"
    manifest_schema: int = MANIFEST_SCHEMAS["run"]

    @property
    def id(self) -> str:
        return self.run_id

    @property
    def uses_model(self) -> bool:
        """A run with a model (not a library-only run, whose model is `library`)."""
        return any(a.needs_model for a in self.arms.values())


@dataclass(frozen=True)
class ReproduceSettings:
    """A reproduction as asked (`make reproduce`, `harness reproduce`, `harness shard`): what it runs, not where
    it writes; what the reproduce manifest and the shard plan record. Checked where it is made
    (harness.reproduce.config.ReproduceConfig, which adds the output directory)."""

    launcher: str = "vllm"
    models: tuple[str, ...] = ()  # empty: the launcher's defaults
    arms: tuple[str, ...] = ("all",)
    seeds: tuple[int, ...] = PAPER_SEEDS
    dataset: str = "verified"
    generation_config: str = "auto"
    deterministic: bool = False
    limit: int | None = None
    shortest: bool = False
    all_cases: bool = False
    executor_backend: str = "auto"
    concurrency: int | None = None
    timeout: float = 900.0
    ready_timeout: float | None = None
    scorer: str = "paper"
    draws: int | None = None
    convention: str | None = None  # unit convention; None: the dataset's own by content
    base_url: str | None = None  # the external launcher's server
    server_profile: str | None = None  # the external launcher's client profile [plain]
    sampling_seeds: bool = False  # sampled requests carry a derived seed (profile vllm-seeded)
    order: Order = DEFAULT_ORDER  # the request order: changes no record


@dataclass(frozen=True)
class LaunchSettings:
    """The server settings of a reproduction that change answers but are in no record key: one results directory
    holds one combination of them (harness.reproduce.config.check_same_settings; the shards of a run share them)."""

    launcher: str
    generation_config: str
    deterministic: bool


@dataclass(frozen=True)
class Block:
    """One `harness run` of a reproduction: the model-free arms, or one model's arms against its server."""

    model: str | None
    model_key: str | None
    arms: tuple[str, ...]
    run_manifest: str  # the file name of the run manifest it wrote
    executor: ExecutorInfo | None
    summaries: tuple[ArmSeedSummary, ...]


@dataclass(frozen=True)
class ServerRun:
    """One model's server in a reproduction: as described once ready, and again after it stopped."""

    model_key: str
    info: ServerInfo | None = None
    skipped: str | None = None  # why it was not started (every record already there)
    stopped_at: str | None = None


@dataclass(frozen=True)
class Outputs:
    """What a reproduction or a merge derived from its records (harness.analysis.report.write_outputs)."""

    stats: str
    tables: tuple[str, ...]
    tables_omitted: dict[str, str]  # table id -> why the results cannot determine it
    figures: tuple[str, ...]
    report: str
    comparison: str | None  # the paper against these results (comparison.md)


@dataclass(frozen=True)
class ReproduceManifest:
    """One `make reproduce` pipeline (module docstring); rewritten as it goes (`status`)."""

    run_id: str
    origin: Origin
    dataset: DatasetRef
    settings: LaunchSettings
    config: ReproduceSettings  # the reproduction as asked
    case_ids: tuple[str, ...]
    arms: tuple[str, ...]
    arms_by_model: dict[str, tuple[str, ...]]
    arm_config_hashes: dict[str, str]
    convention: ConventionRef
    gvisor: RunscRecord | None  # /etc/docker/mathsolver-runsc.json (scripts/install-host.sh); None: none
    status: str  # running | complete | incomplete | interrupted | failed
    blocks: tuple[Block, ...] = ()
    servers: tuple[ServerRun, ...] = ()
    synthetic: bool = False
    error: str | None = None
    infra_failed: int | None = None
    outputs: Outputs | None = None
    kind: Literal["reproduce"] = "reproduce"
    manifest_schema: int = MANIFEST_SCHEMAS["reproduce"]

    @property
    def id(self) -> str:
        return self.run_id


@dataclass(frozen=True)
class MergedShard:
    """What one shard gave a merge."""

    index: int
    dir: str
    records_kept: int
    records_in_shard: int | None
    slurm: dict[str, str]
    shard_manifest_sha256: str


@dataclass(frozen=True)
class ShardsAgreed:
    """What every merged shard agreed on (harness merge refuses shards that differ in any of it): None where no shard
    recorded the field (an executor policy when no shard ran a program)."""

    plan_sha256: str
    dataset_sha256: str
    prompt_hashes: dict[str, str]
    arm_config_hashes: dict[str, str]
    executor_policy_hash: str | None
    launch: LaunchSettings
    order: Order
    seeds: tuple[int, ...]
    kit_commit: str | None
    server: dict[str, ServerSettings]  # per model key, over the shards that served it
    synthetic: bool


@dataclass(frozen=True)
class MergeManifest:
    """One `harness merge` (module docstring)."""

    origin: Origin
    n_shards: int
    plan_n_shards: int | None
    records: int
    results_files: int
    duplicates_dropped: int
    agreed: ShardsAgreed
    synthetic: bool
    shards: tuple[MergedShard, ...]
    run_manifests: tuple[str, ...]  # the shards' run manifests, copied here (the ledger tables read them)
    outputs: Outputs | None = None
    kind: Literal["merge"] = "merge"
    manifest_schema: int = MANIFEST_SCHEMAS["merge"]

    @property
    def id(self) -> None:
        return None


@dataclass(frozen=True)
class SliceSummary:
    """One slice of a shard as its manifest lists it: the model, arms and seeds it runs over how many cases, its
    (arm, seed, case) units and their weight (estimated requests)."""

    model_key: str | None
    arms: tuple[str, ...]
    seeds: tuple[int, ...]
    n_cases: int
    units: int
    weight: int


@dataclass(frozen=True)
class ShardManifest:
    """One shard of a SLURM reproduction (module docstring); written at its start, rewritten at its end."""

    origin: Origin
    index: int
    n_shards: int
    plan_sha256: str
    status: str  # running | complete | incomplete | failed
    slurm: dict[str, str]
    dataset: DatasetRef
    prompt_hashes: dict[str, str]
    arm_config_hashes: dict[str, str]
    launch: LaunchSettings
    order: Order  # the request order its slices ran in (each slice's run manifest says it)
    seeds: tuple[int, ...]  # the run's seeds in order: the first orders a case-major run's cases
    units: int
    slices: tuple[SliceSummary, ...]
    executor_policy_hash: str | None = None
    server: dict[str, ServerSettings] | None = None  # per model key, what changes its answers (merge compares)
    servers: dict[str, ServerInfo] = field(default_factory=dict)
    synthetic: bool = False
    records: int | None = None
    infra_failed: int | None = None
    finished_at: str | None = None
    error: str | None = None
    failed_on_purpose: str | None = None
    kind: Literal["shard"] = "shard"
    manifest_schema: int = MANIFEST_SCHEMAS["shard"]

    @property
    def id(self) -> None:
        return None


Manifest = RunManifest | ReproduceManifest | MergeManifest | ShardManifest
KINDS: dict[str, type] = {
    "run": RunManifest,
    "reproduce": ReproduceManifest,
    "merge": MergeManifest,
    "shard": ShardManifest,
}


# ---- files ---------------------------------------------------------------------------------------------------


def manifest_path(kind: str, id: str | None = None, *, root: str | os.PathLike[str]) -> Path:  # noqa: A002 (the manifest's id)
    """The one place a manifest's file name is made (module docstring)."""
    root = Path(root)
    if kind == "run":
        return root / f"manifest-{id}.json"
    if kind == "reproduce":
        return root / f"manifest-reproduce-{id}.json"
    if kind == "merge":
        return root / "manifest-merge.json"
    if kind == "shard":
        return root / SHARD_MANIFEST
    raise ValueError(f"unknown manifest kind {kind!r}; kinds: {', '.join(KINDS)}")


@dataclass(frozen=True)
class ManifestFile:
    """One manifest as read from disk: where it is and the typed manifest."""

    path: Path
    manifest: Manifest


def _parse(path: Path) -> Manifest:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: unreadable manifest (not a JSON object)")
    kind = data.get("kind")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ManifestError(f"{path}: manifest kind {data.get('kind')!r}, not one of {', '.join(KINDS)}")
    schema, wanted = data.get("manifest_schema"), MANIFEST_SCHEMAS[data["kind"]]
    if schema != wanted:
        raise ManifestError(
            f"{path}: manifest schema {schema!r}, this kit reads schema {wanted} for a "
            f"{data['kind']} manifest; regenerate the result set with this kit"
        )
    try:
        return from_json(cls, data)
    except TypedJsonError as exc:
        raise ManifestError(f"{path}: not a {data['kind']} manifest of schema {wanted} ({exc})") from None


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """One manifest file, typed (ManifestError naming it)."""
    return _parse(Path(path))


def manifest_files(root: str | os.PathLike[str]) -> list[Path]:
    """The manifest files directly in `root` that `read_manifests` reads (sorted by name; `shard.json` last)."""
    root = Path(root)
    return sorted(root.glob(MANIFEST_GLOB)) + ([root / SHARD_MANIFEST] if (root / SHARD_MANIFEST).is_file() else [])


def read_manifests(root: str | os.PathLike[str], kind: str | None = None) -> list[ManifestFile]:
    """Every manifest directly in `root` (sorted by file name; `shard.json` last), typed, or only those of `kind`;
    one ManifestError naming the first file that is not a manifest of this kit's schema."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown manifest kind {kind!r}; kinds: {', '.join(KINDS)}")
    found = [ManifestFile(p, _parse(p)) for p in manifest_files(root)]
    return [f for f in found if kind is None or f.manifest.kind == kind]


def run_manifests(root: str | os.PathLike[str]) -> list[RunManifest]:
    """The run manifests directly in `root` (read_manifests(root, kind="run"), typed)."""
    return [f.manifest for f in read_manifests(root, kind="run") if isinstance(f.manifest, RunManifest)]


def write_manifest(root: str | os.PathLike[str], manifest: Manifest, *, id: str | None = None) -> Path:  # noqa: A002
    """Write `manifest` to its path under `root` (atomically) and return the path; `id` names a copy otherwise
    than by the manifest's own id (the shards' run manifests in a merge)."""
    path = manifest_path(manifest.kind, id if id is not None else manifest.id, root=root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json_file_text(to_json(manifest)), encoding="utf-8")
    os.replace(tmp, path)
    return path


class LiveManifest:
    """A manifest rewritten as its run goes (a reproduction, a shard): each change a new frozen value, written at
    once through `write_manifest`."""

    def __init__(self, root: str | os.PathLike[str], manifest: Manifest):
        self.root = Path(root)
        self.manifest = manifest
        self.path = write_manifest(self.root, manifest)

    def update(self, **changes: Any) -> Path:
        self.manifest = updated(self.manifest, **changes)
        self.path = write_manifest(self.root, self.manifest)
        return self.path


# ---- what every manifest records ---------------------------------------------------------------------------------


def git_state(root: Path = ROOT) -> GitState:
    """Commit and dirty flag of the kit's checkout (None when not a git checkout)."""

    def run(*args: str) -> str | None:
        try:
            return subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return GitState(commit, None if status is None else bool(status))


def locked_packages(lock_file: Path = LOCK_FILE) -> dict[str, str]:
    """name -> version pinned in the hash-locked requirements file."""
    pins: dict[str, str] = {}
    if lock_file.exists():
        for line in lock_file.read_text().splitlines():
            m = _PIN.match(line.strip())
            if m:
                pins[m.group(1).lower()] = m.group(2)
    return pins


def _installed(names: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def origin() -> Origin:
    """This process's origin: now, its command line, the kit's checkout, Python, platform, the locked packages."""
    locked = locked_packages()
    installed = _installed(sorted(locked))
    drift = tuple(sorted(n for n, v in locked.items() if installed.get(n) not in (None, v)))
    return Origin(
        created_at=now(),
        command=(Path(sys.argv[0]).name, *sys.argv[1:]),
        git=git_state(),
        python=sys.version.split()[0],
        platform=platform.platform(),
        packages=Packages(LOCK_FILE.name, locked, drift),
    )


def dataset_ref(dataset: Dataset, n_cases: int | None = None) -> DatasetRef:
    """A Dataset as manifests name it (pinned by its sha256; checksums/datasets.json holds the hub revision)."""
    return DatasetRef(
        dataset.name, str(dataset.path), dataset.sha256, None, len(dataset.cases) if n_cases is None else n_cases
    )


def arm_configs(arms: list[Arm]) -> dict[str, ArmConfig]:
    return {a.name: ArmConfig.of(a) for a in arms}


M = TypeVar("M", bound=Manifest)  # updated() gives back the kind it was given


def updated(manifest: M, **changes: Any) -> M:
    """The manifest with `changes` (a frozen value: each rewrite is a new one)."""
    return replace(manifest, **changes)

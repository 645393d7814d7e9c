"""vLLM serving for `make reproduce`: pinned image and model lock, per-model flags, the launcher, preflight.

Everything a person with one H100 box needs is read from three committed files:
`containers/vllm/image.lock.json` (image by digest), `containers/vllm/models.lock.json` (Hugging Face
repos at full commit revisions) and `containers/vllm/serving.json` (flags per model). `VllmLauncher`
implements the same `Launcher` interface as the CPU launcher (harness.serving), so the pipeline above
it never branches on which one runs.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.serving import LaunchError, Launcher, poll_models

ROOT = Path(__file__).resolve().parent.parent
VLLM_DIR = ROOT / "containers" / "vllm"
FULL_REVISION = re.compile(r"^[0-9a-f]{40}$")
FULL_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class PinError(ValueError):
    """A model or image is not pinned to a full revision or digest; the message names the file and entry."""


def load_json(name: str) -> dict:
    path = VLLM_DIR / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise PinError(f"{path} missing") from None
    except json.JSONDecodeError as exc:
        raise PinError(f"{path}: invalid JSON ({exc})") from None


def image_reference() -> str:
    lock = load_json("image.lock.json")
    digest = lock.get("digest", "")
    if not FULL_DIGEST.match(digest):
        raise PinError(f"{VLLM_DIR / 'image.lock.json'}: digest {digest!r} is not a full sha256 digest")
    return f"{lock['image']}:{lock['tag']}@{digest}"


def model_lock(key: str) -> dict:
    models = load_json("models.lock.json")["models"]
    if key not in models:
        raise PinError(f"unknown model {key!r}; models.lock.json has {', '.join(sorted(models))}")
    entry = models[key]
    if not FULL_REVISION.match(entry.get("revision") or ""):
        raise PinError(f"{VLLM_DIR / 'models.lock.json'}: {key} ({entry.get('repo')}) is not pinned to a full "
                       f"40-character commit (got {entry.get('revision')!r}); run `make pin-models` on a networked "
                       "machine. The kit refuses to serve an unpinned model.")
    return entry


def all_model_keys() -> list[str]:
    return list(load_json("models.lock.json")["models"])


def serving_flags(key: str, *, generation_config: str = "auto", deterministic: bool = False) -> dict:
    """The resolved flag set for one model: defaults, then the model's own overrides, then the options."""
    serving = load_json("serving.json")
    if key not in serving["models"]:
        raise PinError(f"{VLLM_DIR / 'serving.json'}: no serving flags for model {key!r}")
    if generation_config not in serving["generation_config_choices"]:
        raise PinError(f"--generation-config must be one of {sorted(serving['generation_config_choices'])}, "
                       f"not {generation_config!r}")
    flags = {**serving["defaults"], **serving["models"][key], "generation_config": generation_config}
    flags["deterministic"] = deterministic
    return flags


@dataclass
class VllmLauncher(Launcher):
    """The pinned vLLM OpenAI-compatible server in docker with the NVIDIA runtime, bound to 127.0.0.1."""

    model_key: str
    generation_config: str = "auto"
    deterministic: bool = False
    hf_cache: Path = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    container_name: str = "mathsolver-vllm"
    log_path: Path = ROOT / "runs" / "vllm-server.log"
    server_profile: str = "vllm"
    _started: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.lock = model_lock(self.model_key)
        self.flags = serving_flags(self.model_key, generation_config=self.generation_config,
                                   deterministic=self.deterministic)
        self.image = image_reference()

    @property
    def model_id(self) -> str:  # the served model name is the Hugging Face id, as in the paper's ledger
        return self.lock["repo"]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.flags['port']}/v1"

    def env(self) -> dict[str, str]:
        env = {}
        if self.deterministic:
            env.update(load_json("serving.json")["deterministic"]["env"])
        return env

    def server_args(self) -> list[str]:
        f = self.flags
        args = ["--model", self.lock["repo"], "--revision", self.lock["revision"],
                "--tokenizer-revision", self.lock["revision"], "--served-model-name", self.lock["repo"],
                "--host", "0.0.0.0", "--port", str(f["port"]), "--dtype", f["dtype"],
                "--max-model-len", str(f["max_model_len"]),
                "--gpu-memory-utilization", str(f["gpu_memory_utilization"]),
                "--max-num-seqs", str(f["max_num_seqs"]), "--seed", str(f["seed"]),
                "--tensor-parallel-size", str(f["tensor_parallel_size"]),
                "--generation-config", f["generation_config"]]
        for opt in ("quantization", "tokenizer_mode", "config_format", "load_format"):
            if f.get(opt):
                args += [f"--{opt.replace('_', '-')}", str(f[opt])]
        if self.deterministic:
            args += load_json("serving.json")["deterministic"]["flags"]
        return args

    def command(self) -> list[str]:
        cmd = ["docker", "run", "--rm", "--detach", "--name", self.container_name, "--runtime", "nvidia",
               "--gpus", "all", "--ipc", "host", "-p", f"127.0.0.1:{self.flags['port']}:{self.flags['port']}",
               "-v", f"{self.hf_cache}:/root/.cache/huggingface"]
        for k, v in self.env().items():
            cmd += ["-e", f"{k}={v}"]
        if self.lock.get("gated"):
            cmd += ["-e", "HF_TOKEN"]  # passed through from the caller's environment, never recorded
        return cmd + [self.image] + self.server_args()

    def start(self) -> None:
        if shutil.which("docker") is None:
            raise LaunchError("docker not found: the vLLM launcher needs docker with the NVIDIA runtime")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(self.command(), capture_output=True, text=True)
        if proc.returncode != 0:
            raise LaunchError(f"docker run failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
        self._started = True

    def logs(self) -> str:
        proc = subprocess.run(["docker", "logs", self.container_name], capture_output=True, text=True)
        return proc.stdout + proc.stderr

    def wait_ready(self, timeout: float = 1800.0) -> None:
        poll_models(self.base_url, self.model_id, timeout, log=self.log_path, interval=5.0)

    def stop(self) -> None:
        if not self._started:
            return
        self.log_path.write_text(self.logs())
        subprocess.run(["docker", "stop", "-t", "30", self.container_name], capture_output=True)
        self._started = False

    def describe(self) -> dict:
        out = {"launcher": "vllm", "image": self.image, "model_key": self.model_key, "model_id": self.model_id,
               "revision": self.lock["revision"], "flags": self.flags, "env": self.env(),
               "command": self.command(), "server_profile": self.server_profile, "base_url": self.base_url}
        if self._started:
            out["sampling_defaults_logged"] = logged_sampling_defaults(self.logs())
            out["vllm_version"] = logged_vllm_version(self.logs())
            out["gpu"] = gpu_names()
        return out


_DEFAULTS_LINE = re.compile(r"Default sampling parameters have been overridden by the model's "
                            r"Hugging Face generation config[^:]*:\s*(\{.*\})")
_VERSION_LINE = re.compile(r"vLLM API server version\s+([0-9][^\s]*)")


def logged_sampling_defaults(log_text: str) -> dict | None:
    """The sampling defaults vLLM says it took from generation_config.json (None: it logged none)."""
    for line in log_text.splitlines():
        m = _DEFAULTS_LINE.search(line)
        if m:
            text = m.group(1).replace("'", '"')
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return {"raw": m.group(1)}
    return None


def logged_vllm_version(log_text: str) -> str | None:
    m = _VERSION_LINE.search(log_text)
    return m.group(1) if m else None


def gpu_names() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    proc = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                          capture_output=True, text=True)
    return [line.strip() for line in proc.stdout.splitlines() if line.strip()]


# --------------------------------------------------------------------------- preflight


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _run(cmd: list[str], timeout: float = 20) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


def preflight(model_keys: list[str], *, weights_gb_free_needed: float | None = None) -> list[Check]:
    """Every prerequisite of `make reproduce`, each with how to fix it when missing."""
    checks: list[Check] = []
    smi = _run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"])
    gpus = [ln for ln in (smi.stdout.splitlines() if smi and smi.returncode == 0 else []) if ln.strip()]
    checks.append(Check("NVIDIA GPU and driver", bool(gpus), "; ".join(gpus) or "nvidia-smi not found or no GPU",
                        "install the NVIDIA driver (H100: driver >= 535) so `nvidia-smi` lists the GPU"))
    need_tp2 = any(serving_flags(k)["tensor_parallel_size"] > 1 for k in model_keys)
    if need_tp2:
        checks.append(Check("two GPUs for tensor parallel 2", len(gpus) >= 2, f"{len(gpus)} GPU(s)",
                            "Mistral-7B runs under tensor parallel 2 as in the paper: use a 2-GPU box or drop it "
                            "with MODELS="))
    info = _run(["docker", "info", "--format", "{{json .Runtimes}}"])
    runtimes = {}
    if info and info.returncode == 0:
        try:
            runtimes = json.loads(info.stdout or "{}")
        except json.JSONDecodeError:
            runtimes = {}
    checks.append(Check("docker", info is not None and info.returncode == 0,
                        "docker info answered" if info and info.returncode == 0 else "docker daemon not reachable",
                        "install docker.io and start dockerd (scripts/install-host.sh does both)"))
    checks.append(Check("NVIDIA container runtime", "nvidia" in runtimes, f"runtimes: {sorted(runtimes)}",
                        "install nvidia-container-toolkit and run `nvidia-ctk runtime configure --runtime=docker`"))
    checks.append(Check("runsc runtime for the executor", "runsc" in runtimes, f"runtimes: {sorted(runtimes)}",
                        "run scripts/install-host.sh (installs runsc, registers it with --network=none --oci-seccomp)"))
    hf_home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    probe = hf_home if hf_home.exists() else hf_home.parent if hf_home.parent.exists() else Path.home()
    free_gb = shutil.disk_usage(probe).free / 1e9
    need = weights_gb_free_needed if weights_gb_free_needed is not None else sum(WEIGHTS_GB.get(k, 20) for k in model_keys) + 20
    checks.append(Check("disk space for weights and the image", free_gb >= need,
                        f"{free_gb:.0f} GB free at {probe}, {need:.0f} GB needed",
                        "free disk space or point HF_HOME at a larger disk"))
    gated = [k for k in model_keys if model_lock(k).get("gated")]
    if gated:
        has_token = bool(os.environ.get("HF_TOKEN"))
        checks.append(Check("Hugging Face token for gated repositories", has_token,
                            f"gated: {', '.join(model_lock(k)['repo'] for k in gated)}",
                            "accept the licence on the model page and export HF_TOKEN=..."))
    for key in model_keys:
        try:
            model_lock(key)
            checks.append(Check(f"model pinned: {key}", True, model_lock(key)["revision"]))
        except PinError as exc:
            checks.append(Check(f"model pinned: {key}", False, str(exc), "make pin-models"))
    try:
        checks.append(Check("vLLM image pinned by digest", True, image_reference()))
    except PinError as exc:
        checks.append(Check("vLLM image pinned by digest", False, str(exc), "make pin-images"))
    checks.append(dataset_check())
    return checks


def dataset_check() -> Check:
    try:
        from harness.dataset import load_dataset
        ds = load_dataset("verified")
        return Check("pinned dataset (MedCalc-Bench Verified)", True, f"{ds.path} sha256 {ds.sha256[:12]}...")
    except Exception as exc:  # noqa: BLE001 - any failure is reported as the check's detail
        return Check("pinned dataset (MedCalc-Bench Verified)", False, str(exc).splitlines()[0],
                     "harness data fetch (after `harness data pin` on a machine that reaches the hub)")


# Approximate download sizes (GB) of the pinned checkpoints, for the disk check.
WEIGHTS_GB = {"qwen2.5-7b": 16, "qwen2.5-32b-awq": 20, "mistral-7b": 15, "phi-3.5-mini": 8}

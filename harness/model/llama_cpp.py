"""The `llama-cpp` launcher: llama.cpp's own OpenAI-compatible server on a GGUF of harness/model/cpu_models.json
(scripts/cpu_model_server.py, run by the prebuilt `xllamacpp` wheel from the separate `.venv-server` virtualenv):
the CPU demo and CI. `harness serve start`/`describe` and scripts/model-server.sh use it too."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.paths import REPO_ROOT
from harness.core.ports import free_port
from harness.model.cpu_models import CPU_MODEL, CPU_MODEL_ID, DEFAULT_GGUF, get_model, model_ids
from harness.model.gguf import GGUFError
from harness.model.gguf import summary as gguf_summary
from harness.model.prerequisites import Check, path_check
from harness.model.server_info import ServerInfo, Weights, server_args_for_record
from harness.model.server_process import ServerProcess
from harness.model.serving import Launcher, LaunchError, LaunchOptions, Throughput, poll_models

DEFAULT_SERVER_PYTHON = REPO_ROOT / ".venv-server" / "bin" / "python"
SERVER_SCRIPT = REPO_ROOT / "scripts" / "cpu_model_server.py"
# llama.cpp's CPU threads use OpenMP; its default spin-waiting at barriers collapses throughput when the cores
# are shared (1.2 vs 13 tokens/s on the 0.5B at load 11 here): the server's threads sleep instead of spinning.
SERVER_ENV = {"OMP_WAIT_POLICY": "passive"}


@dataclass
class LlamaCppLauncher(Launcher):
    """llama.cpp's server (scripts/cpu_model_server.py under .venv-server) on a GGUF, on 127.0.0.1."""

    name = "llama-cpp"
    summary = "llama.cpp's server on the CPU model's GGUF (CI and the demo)"
    deterministic_refusal = (
        "--deterministic is a vLLM option (VLLM_BATCH_INVARIANT); the llama.cpp CPU server is "
        "single-stream and has no such switch"
    )
    # Qwen2.5-Coder-0.5B GGUF on 2 cores: measured order of magnitude, one request at a time
    stated_throughput = Throughput(
        50, 15, 10, "order of magnitude measured on the kit's 2-core CI machine (one request at a time)"
    )

    model_path: Path = DEFAULT_GGUF
    model_id: str = CPU_MODEL_ID
    host: str = "127.0.0.1"
    port: int = 8088
    n_ctx: int = 8192
    n_threads: int | None = None
    n_parallel: int = 1
    python: Path = DEFAULT_SERVER_PYTHON
    log_path: Path = Path(tempfile.gettempdir()) / "mathsolver-model-server.log"
    server_profile: str = "llama.cpp"
    extra_args: list[str] = field(default_factory=list)
    _process: ServerProcess | None = field(default=None, init=False, repr=False)

    # ---- the kind ----
    @classmethod
    def default_models(cls) -> list[str]:
        return [CPU_MODEL_ID]

    @classmethod
    def for_model(cls, key: str, options: LaunchOptions) -> LlamaCppLauncher:
        cls.check_config(base_url=options.base_url, deterministic=options.deterministic)
        return cls(model_id=key, port=free_port(), log_path=Path(options.log_dir) / f"{key}.log")

    @classmethod
    def prerequisites(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        """Its own virtualenv and the CPU model's GGUF."""
        return [
            path_check("CPU model server virtualenv", DEFAULT_SERVER_PYTHON, "make server-venv"),
            path_check("CPU model GGUF", DEFAULT_GGUF, "make model (scripts/fetch-model.sh)"),
        ]

    @classmethod
    def weights_bytes(cls, key: str) -> int | None:
        return CPU_MODEL["gguf_bytes"]

    # ---- one server ----
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        cmd = [
            str(self.python),
            str(SERVER_SCRIPT),
            "--model",
            str(self.model_path),
            "--alias",
            self.model_id,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--ctx",
            str(self.n_ctx),
            "--parallel",
            str(self.n_parallel),
        ]
        if self.n_threads:
            cmd += ["--threads", str(self.n_threads)]
        return cmd + list(self.extra_args)

    def start(self) -> None:
        if not Path(self.python).exists():
            raise LaunchError(
                f"server interpreter {self.python} missing: run `make server-venv` (it makes .venv-server "
                "from requirements-demo.lock)"
            )
        if not Path(self.model_path).exists():
            raise LaunchError(
                f"model file {self.model_path} missing: run scripts/fetch-model.sh --model {self.model_id}"
            )
        if self.host not in {"127.0.0.1", "localhost", "::1"}:
            raise LaunchError(f"the CPU server binds to loopback only, not {self.host!r}")
        self._process = ServerProcess(Path(self.log_path))
        self._process.start(self.command(), env={**os.environ, **SERVER_ENV})

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def wait_ready(self, timeout: float = 300.0) -> None:
        poll_models(self.base_url, self.model_id, timeout, process=self._process, log=Path(self.log_path))

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()

    @property
    def revision(self) -> str | None:
        """The GGUF's sha256 when the launcher serves a locked CPU model's own file (cpu_models.json)."""
        if self.model_id in model_ids() and Path(self.model_path) == get_model(self.model_id).path:
            return f"gguf-sha256:{get_model(self.model_id).gguf_sha256}"
        return None

    def describe(self) -> ServerInfo:
        version = None
        try:
            version = (
                subprocess.run(
                    [str(self.python), "-c", "import xllamacpp; print(xllamacpp.__version__)"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                ).stdout.strip()
                or None
            )
        except OSError:
            pass
        model = get_model(self.model_id).describe() if self.model_id in model_ids() else None
        try:
            metadata = gguf_summary(self.model_path)
        except (OSError, GGUFError) as exc:
            metadata = {"error": str(exc)}
        served = (
            f"<{model['id']} GGUF, sha256 {model['gguf_sha256'][:12]}...>"
            if model and self.revision
            else f"<{Path(self.model_path).name}>"
        )
        return ServerInfo(
            launcher=self.name,
            base_url=self.base_url,
            model_id=self.model_id,
            server_profile=self.server_profile,
            server="llama.cpp server (xllamacpp)",
            server_version=version,
            revision=self.revision,
            weights=Weights(
                model["gguf_sha256"] if model and self.revision else None,
                metadata.get("name"),
                metadata.get("size_label"),
                metadata.get("file_type_name"),
            ),
            command=tuple(self.command()),
            args=server_args_for_record(self.command()[2:], {"--model": served}),
            env=dict(SERVER_ENV),
            flags={"ctx": self.n_ctx, "parallel": self.n_parallel, "threads": self.n_threads},
            model=model,
            log=str(self.log_path),
            facts={
                "model_path": str(self.model_path),
                "gguf_metadata": metadata,
                "chat_template": "the GGUF's embedded tokenizer.chat_template (jinja, no override)",
            },
        )

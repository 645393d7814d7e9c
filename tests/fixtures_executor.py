"""Fixtures for the executor tests: real local supervisors (process backend), with all layers on
or with chosen layers turned off through the test-only switch, and the container backend when
the container side provides it.

Limits: CPU 1 s for speed, wall 10 s so that a loaded 2-core machine still hits the CPU limit first; everything else is the shipped policy.
"""

from __future__ import annotations

import contextlib
import os

import pytest

from executor.api import Executor

TEST_LIMITS = {"cpu_seconds": 1, "wall_seconds": 10.0}
OS_LAYERS_ONLY = ("static", "builtins")
STATIC_ALONE = ("builtins",)  # layer 1 without layer 2 (the OS layers stay on)
# Put in the pytest process's environment: no program may ever see it.
HOST_SECRET_NAME = "EXECUTOR_TEST_HOST_SECRET"
HOST_SECRET = "hs-7f3a9c1e-do-not-leak"
# The two backends as parameters: the container case is marked `docker` (it runs in the docker lane, tests/lanes.py),
# for fixtures and tests that ask for the container backend at run time.
BACKENDS = ("process", pytest.param("container", marks=pytest.mark.docker))


def host_children(pid: int) -> list[int]:
    """Pids of the host processes whose parent is `pid` (read from /proc)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


@contextlib.contextmanager
def layer_switch(layers, canary: str = ""):
    """Set the documented test-only switches (EXECUTOR_TESTING=1 + EXECUTOR_UNSAFE_DISABLE_LAYERS,
    EXECUTOR_TEST_CANARY: tests/adversarial/canaries.py) while an Executor is constructed; restore
    the environment afterwards."""
    saved = {
        k: os.environ.get(k) for k in ("EXECUTOR_TESTING", "EXECUTOR_UNSAFE_DISABLE_LAYERS", "EXECUTOR_TEST_CANARY")
    }
    if layers or canary:
        os.environ["EXECUTOR_TESTING"] = "1"
    if layers:
        os.environ["EXECUTOR_UNSAFE_DISABLE_LAYERS"] = ",".join(layers)
    if canary:
        os.environ["EXECUTOR_TEST_CANARY"] = canary
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def make_executor(
    backend: str = "process", disabled_layers=(), limits=None, workers: int = 1, canary: str = ""
) -> Executor:
    """An Executor with the test limits; the container backend gets the tests' runtime setting
    (tests/fixtures_container.py, container_runtime); ``canary``: the memory canary every nonce
    starts with (tests/adversarial/canaries.py)."""
    from tests.fixtures_container import container_runtime

    opts = {"runtime": container_runtime()} if backend != "process" else {}
    with layer_switch(disabled_layers, canary):
        return Executor(
            backend=backend, workers=workers, limits=dict(TEST_LIMITS if limits is None else limits), **opts
        )


@pytest.fixture(scope="session", autouse=False)
def host_secret():
    os.environ[HOST_SECRET_NAME] = HOST_SECRET
    return HOST_SECRET


@pytest.fixture(scope="session")
def canaries(host_secret):
    """The planted secrets every session executor carries (tests/adversarial/canaries.py)."""
    from tests.adversarial.canaries import Canaries

    planted = Canaries()
    yield planted
    planted.close()


@pytest.fixture(scope="session")
def process_executor(canaries):
    ex = make_executor("process", workers=2, canary=canaries.memory)
    yield ex
    ex.close()


@pytest.fixture(scope="session")
def process_executor_os_layers(canaries):
    """Process backend with layers 1-2 (static policy, builtins allow-list) turned off."""
    ex = make_executor("process", disabled_layers=OS_LAYERS_ONLY, workers=2, canary=canaries.memory)
    yield ex
    ex.close()


@pytest.fixture(scope="session")
def process_executor_static_alone(canaries):
    """Process backend with layer 2 (builtins allow-list) off: layer 1 must stand alone (issue 40)."""
    ex = make_executor("process", disabled_layers=STATIC_ALONE, workers=2, canary=canaries.memory)
    yield ex
    ex.close()


def _container_fixture(request, name: str):
    from tests.conftest import require

    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        require(False, f"container backend: fixture {name!r} (tests/fixtures_container.py) not available")


@pytest.fixture(scope="session")
def container_executor_os_layers(request, canaries):
    """Container backend with layers 1-2 off (needs the container side's `container_executor`
    to exist, i.e. docker + runsc + image)."""
    _container_fixture(request, "container_executor")
    # two containers: most programs here end in a sandbox violation, which replaces the container in the
    # background; the next test runs in the other one meanwhile
    ex = make_executor("container", disabled_layers=OS_LAYERS_ONLY, workers=2, canary=canaries.memory)
    yield ex
    ex.close()


@pytest.fixture(scope="session")
def container_executor_static_alone(request, canaries):
    """Container backend with layer 2 off: layer 1 alone above the OS layers."""
    _container_fixture(request, "container_executor")
    ex = make_executor("container", disabled_layers=STATIC_ALONE, workers=2, canary=canaries.memory)
    yield ex
    ex.close()


@pytest.fixture(params=BACKENDS)
def backend_executor(request):
    """(backend name, Executor with all layers on) for each backend."""
    if request.param == "process":
        return "process", request.getfixturevalue("process_executor")
    return "container", _container_fixture(request, "container_executor")


@pytest.fixture(params=BACKENDS)
def backend_executor_os_layers(request):
    """(backend name, Executor with layers 1-2 off) for each backend."""
    if request.param == "process":
        return "process", request.getfixturevalue("process_executor_os_layers")
    return "container", request.getfixturevalue("container_executor_os_layers")


@pytest.fixture(params=BACKENDS)
def backend_executor_static_alone(request):
    """(backend name, Executor with layer 2 off, layer 1 and the OS layers on) for each backend."""
    if request.param == "process":
        return "process", request.getfixturevalue("process_executor_static_alone")
    return "container", request.getfixturevalue("container_executor_static_alone")

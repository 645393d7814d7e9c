"""Layer 6 (the container pool) on a real dockerd + runsc: order, parallelism, recycling,
replacement of dead containers with the in-flight program retried, clear errors, describe()."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from executor import pool
from executor.outcomes import Outcome
from tests.fixtures_executor import TEST_LIMITS

pytestmark = pytest.mark.docker

OS_LAYERS_ONLY = ("static", "builtins")  # test-only switch: prove layers 3-5 on their own


@pytest.fixture(scope="module")
def small_pool(container_backend):
    """One container, layers 1-2 off (so a program can reach the OS layers), recycled every 4."""
    p = pool.ContainerPool(
        1, container_backend["image"], recycle_after=4, limits=TEST_LIMITS, disabled_layers=OS_LAYERS_ONLY
    )
    yield p
    p.close()


def live_names(p: pool.ContainerPool) -> set[str]:
    with p._lock:
        return {c.name for c in p._live}


def wait_for(cond, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def docker_ps_names(docker: str) -> set[str]:
    out = subprocess.run(
        [docker, "ps", "--filter", "label=org.mathsolver.executor=1", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    return set(out.split())


def test_executor_api_container_backend_runs_and_describes(container_executor):
    r = container_executor.run("import math\nanswer = round(math.sqrt(2), 4)")
    assert r.outcome == "OK" and r.answer == 1.4142 and r.backend == "container"
    d = container_executor.describe()
    assert json.dumps(d)  # goes into the run manifest
    assert "container" in json.dumps(d)


def test_run_many_keeps_order_across_containers(container_executor):
    sources = [f"answer = {i} * 3" for i in range(40)]
    results = container_executor.run_many(sources)
    assert [r.answer for r in results] == [i * 3 for i in range(40)]
    assert {r.outcome for r in results} == {"OK"}


def test_describe_names_image_runtime_flags_and_runsc(small_pool, container_backend):
    d = small_pool.describe()
    assert d["image"] == container_backend["image"]
    assert d["image_id"].startswith("sha256:")
    assert d["rootfs_sha256"] and d["layers"] == [f"sha256:{d['rootfs_sha256']}"]
    assert d["executor_src_sha256"] == pool.executor_source_digest()
    assert d["runtime"]["name"] == "runsc"
    assert {"--network=none", "--oci-seccomp"} <= set(d["runtime"]["runtimeArgs"])
    assert d["runsc_version"] and "runsc version" in d["runsc_version"]
    assert f"--security-opt=seccomp={pool.SECCOMP_PROFILE.resolve()}" in d["run_flags"]
    assert d["supervisor"]["seccomp"]["action"] in ("KILL_PROCESS", "KILL_THREAD")
    assert d["supervisor"]["disabled_layers"] == sorted(OS_LAYERS_ONLY)


def test_forbidden_syscall_in_child_is_a_violation_and_recycles_the_container(small_pool):
    before = set(live_names(small_pool))
    recycled = small_pool.stats["recycled"]
    r = small_pool.run("import os\nanswer = os.getuid()")  # layers 1-2 off: only seccomp stops it
    assert r["outcome"] == Outcome.SANDBOX_VIOLATION.value, r
    assert r["answer"] is None
    assert small_pool.stats["recycled"] == recycled + 1
    ok = small_pool.run("answer = 1")
    assert ok["outcome"] == "OK"
    assert not (live_names(small_pool) & before), "the violating container must have been replaced"


def test_container_is_recycled_after_the_set_number_of_programs(small_pool):
    assert wait_for(lambda: small_pool._idle.qsize() == 1)
    recycled = small_pool.stats["recycled"]
    seen = []
    for i in range(9):
        r = small_pool.run(f"answer = {i}")
        assert r["outcome"] == "OK" and r["answer"] == i
        assert wait_for(lambda: small_pool._idle.qsize() == 1)
        seen.append(frozenset(live_names(small_pool)))
    assert small_pool.stats["recycled"] - recycled >= 2
    assert len(set(seen)) >= 3, "9 programs with recycle_after=4 must use at least 3 containers"


def test_dead_container_is_replaced_and_the_in_flight_program_retried(small_pool, container_backend):
    assert wait_for(lambda: small_pool._idle.qsize() == 1)
    victim = next(iter(live_names(small_pool)))
    replaced, retried = small_pool.stats["replaced"], small_pool.stats["retried"]
    out = {}
    # a long single C call: runs until the 1 s CPU limit, long enough to kill the container under it
    t = threading.Thread(target=lambda: out.update(small_pool.run("answer = sum(range(10**10))")))
    t.start()
    assert wait_for(lambda: small_pool._idle.qsize() == 0)
    time.sleep(0.3)
    subprocess.run([container_backend["docker"], "kill", victim], capture_output=True, timeout=60)
    t.join(timeout=120)
    assert not t.is_alive()
    assert out["outcome"] in (Outcome.CPU_LIMIT.value, Outcome.TIMEOUT_WALL.value), out
    assert small_pool.stats["replaced"] >= replaced + 1
    assert small_pool.stats["retried"] >= retried + 1
    assert victim not in live_names(small_pool)
    assert small_pool.run("answer = 5")["answer"] == 5


def test_program_that_kills_its_container_every_time_is_crash_not_lost(container_backend):
    """With the in-container supervisor gone after every attempt, the result is CRASH after
    max_attempts, never an exception and never a hang. The container is made to die by a
    pool deadline shorter than the program (a stand-in for a sandbox that dies)."""
    with pool.ContainerPool(
        1, container_backend["image"], max_attempts=2, request_timeout=0.5, limits=TEST_LIMITS
    ) as p:
        r = p.run("answer = sum(range(10**10))")
        assert r["outcome"] == Outcome.CRASH.value, r
        assert "2 attempt" in r["error"]
        assert p.stats["replaced"] >= 2
        assert wait_for(lambda: p._idle.qsize() == 1)
        ok = p.run("answer = 7")
        assert ok["outcome"] == "OK" and ok["answer"] == 7


def test_fork_bomb_is_contained_and_the_pool_keeps_working(small_pool):
    bomb = "import os\nwhile True:\n    os.fork()\nanswer = 1"
    r = small_pool.run(bomb)
    assert r["outcome"] in (Outcome.SANDBOX_VIOLATION.value, Outcome.PROGRAM_ERROR.value), r
    assert small_pool.run("answer = 2")["answer"] == 2


def test_close_removes_every_container(container_backend):
    p = pool.ContainerPool(2, container_backend["image"], limits=TEST_LIMITS)
    names = live_names(p)
    assert len(names) == 2 and names <= docker_ps_names(container_backend["docker"])
    p.close()
    p.close()  # idempotent
    assert wait_for(lambda: not (names & docker_ps_names(container_backend["docker"])), timeout=30)
    with pytest.raises(RuntimeError, match="closed"):
        p.run("answer = 1")


def test_bad_source_type_is_a_clear_error(small_pool):
    with pytest.raises(TypeError, match="must be str"):
        small_pool.run(b"answer = 1")
    with pytest.raises(TypeError, match="#1 must be str"):
        small_pool.run_many(["answer = 1", None])


def test_missing_image_is_a_clear_error(container_backend):
    with pytest.raises(
        pool.ContainerBackendUnavailable, match="not found: build it with scripts/build-executor-image.sh"
    ):
        pool.ContainerPool(1, "mathsolver-executor:does-not-exist")


def test_missing_runtime_is_a_clear_error(container_backend):
    with pytest.raises(pool.ContainerBackendUnavailable, match="no 'runsc-missing' runtime.*install-host.sh"):
        pool.ContainerPool(1, container_backend["image"], runtime="runsc-missing")


def test_missing_docker_cli_is_a_clear_error():
    with pytest.raises(pool.ContainerBackendUnavailable, match="docker CLI .* not found"):
        pool.ContainerPool(1, "x", docker="/nonexistent/docker")


def test_stale_image_is_refused_with_fake_digest(container_backend, monkeypatch):
    """Fake: the checkout's digest is replaced, as if executor/ had changed since the build."""
    monkeypatch.setattr(pool, "executor_source_digest", lambda *a: "0" * 64)
    with pytest.raises(
        pool.ContainerBackendUnavailable, match="is stale.*rebuild with scripts/build-executor-image.sh"
    ):
        pool.ContainerPool(1, container_backend["image"])


def test_program_larger_than_a_pipe_buffer_goes_through(small_pool):
    source = "x = 0\n" + "x = x + 1\n" * 9000 + "answer = x\n"  # ~90 kB, under policy.MAX_SOURCE_CHARS
    assert len(source) > 65536
    r = small_pool.run(source)
    assert r["outcome"] == "OK" and r["answer"] == 9000, r


def test_pinned_pool_spreads_containers_over_cpus(container_backend):
    import os

    cpus = sorted(os.sched_getaffinity(0))
    with pool.ContainerPool(2, container_backend["image"], limits=TEST_LIMITS, pin_cpus=True) as p:
        got = sorted(c.cpu for c in p._live)
        assert got == sorted(cpus[:2] if len(cpus) >= 2 else cpus * 2)
        names = {c.name: c.cpu for c in p._live}
        for name, cpu in names.items():
            out = subprocess.run(
                [container_backend["docker"], "inspect", "--format", "{{.HostConfig.CpusetCpus}}", name],
                capture_output=True,
                text=True,
                timeout=30,
            ).stdout.strip()
            assert out == str(cpu)
        assert [r["answer"] for r in p.run_many([f"answer = {i}" for i in range(6)])] == list(range(6))

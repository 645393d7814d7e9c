"""Layer 6 on both worker kinds: an infrastructure failure is retried on a fresh supervisor and
is never scored. The failure is real: the zygote beside a supervisor (the process that forks
the programs' children) is SIGKILLed, on the host or inside the gVisor container, so the
supervisor answers INFRA_ERROR and exits; the pool must retire it and run the program again."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from executor import pool
from executor.outcomes import Outcome, taxonomy
from tests.fixtures_executor import BACKENDS, TEST_LIMITS, host_children

_PROC_PPID_SCRIPT = (
    "import os\n"
    "for p in os.listdir('/proc'):\n"
    "    if p.isdigit():\n"
    "        try:\n"
    "            s = open('/proc/%s/status' % p).read()\n"
    "        except OSError:\n"
    "            continue\n"
    "        ppid = [l.split()[1] for l in s.splitlines() if l.startswith('PPid:')]\n"
    "        if ppid == ['1']:\n"
    "            print(p)\n"
)


def kill_zygote(worker) -> None:
    """SIGKILL the zygote of one worker (the supervisor's only child)."""
    if isinstance(worker, pool.ContainerWorker):
        # inside the sandbox the supervisor is PID 1; its only child is the zygote
        out = subprocess.run(
            [worker.docker, "exec", worker.name, "python3", "-I", "-S", "-c", _PROC_PPID_SCRIPT],
            capture_output=True,
            text=True,
            timeout=60,
        )
        pids = out.stdout.split()
        assert len(pids) == 1, (out.stdout, out.stderr)
        subprocess.run(
            [worker.docker, "exec", worker.name, "python3", "-I", "-S", "-c", f"import os; os.kill({pids[0]}, 9)"],
            check=True,
            capture_output=True,
            timeout=60,
        )
    else:
        kids = host_children(worker.proc.pid)
        assert len(kids) == 1, kids
        os.kill(kids[0], signal.SIGKILL)


def _pool(backend: str, request, **opts):
    if backend == "container":
        image = request.getfixturevalue("container_backend")["image"]
        return pool.ContainerPool(1, image, limits=TEST_LIMITS, **opts)
    return pool.ProcessPool(1, limits=TEST_LIMITS, **opts)


@pytest.mark.parametrize("backend", BACKENDS)
def test_infra_failure_is_retried_on_a_fresh_supervisor(backend, request):
    with _pool(backend, request) as p:
        victim = next(iter(p._live))
        kill_zygote(victim)
        time.sleep(0.2)
        r = p.run("answer = 6 * 7")
        assert (r["outcome"], r["answer"], r["backend"]) == ("OK", 42, backend), r
        assert p.stats["retried"] >= 1
        assert victim not in p._live
        assert taxonomy(r["outcome"]) == "answered"


class _ZygoteKillingProcessPool(pool.ProcessPool):
    """Every supervisor it starts loses its zygote right after start-up (fault injection)."""

    def _new_worker(self):
        w = super()._new_worker()
        kill_zygote(w)
        return w


class _ZygoteKillingContainerPool(pool.ContainerPool):
    def _new_worker(self):
        w = super()._new_worker()
        kill_zygote(w)
        return w


@pytest.mark.parametrize("backend", BACKENDS)
def test_infra_failure_on_every_attempt_is_infra_error_and_never_scored(backend, request):
    if backend == "container":
        image = request.getfixturevalue("container_backend")["image"]
        p = _ZygoteKillingContainerPool(1, image, limits=TEST_LIMITS, max_attempts=2)
    else:
        p = _ZygoteKillingProcessPool(1, limits=TEST_LIMITS, max_attempts=2)
    with p:
        time.sleep(0.2)
        r = p.run("answer = 1")
        assert r["outcome"] == Outcome.INFRA_ERROR.value, r
        assert "2 attempt(s)" in r["error"] and "zygote" in r["error"]
        assert p.stats["retried"] == 1
        with pytest.raises(ValueError, match="never score it"):
            taxonomy(r["outcome"])

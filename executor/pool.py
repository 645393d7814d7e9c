"""Layer 6: one retrying pool of supervisors over two worker kinds (``workers.py``).

``WorkerPool`` holds N workers and gives these guarantees whatever the kind:

* ``run(source)`` always returns a complete result dict (``result.FIELDS``). A worker that dies,
  hangs past the pool deadline or breaks the protocol is removed and replaced, and the program
  is retried on a fresh worker (``max_attempts`` in all). An INFRA_ERROR *result* (the sandbox
  failed, not the program: the zygote died, the child was killed from outside) retires the
  worker and is retried the same way. If the worker died on every attempt the result is
  ``CRASH`` (the program may be what kills it); if every attempt was an infrastructure failure
  the pool runs its own CONTROL_PROGRAM: when that answers correctly the program is what breaks
  the sandbox and the result is the scored ``PERSISTENT_INFRA_ERROR`` (a program cannot take
  itself out of the denominator); otherwise it is ``INFRA_ERROR``, which the harness retries
  later and never scores (``outcomes.taxonomy`` refuses it).
* a reply line the supervisor did not write for this request (no valid per-request MAC,
  ``workers.ForgedReply``) makes the program a SANDBOX_VIOLATION and kills the worker.
* a worker is recycled (stopped, replaced in the background) after ``recycle_after`` programs
  and after any result in ``recycle_on`` (sandbox violations, crashes, infra errors).
* ``run_many`` spreads programs across the workers and keeps their order.

``ProcessPool``: supervisors on this host (layers 1-4). ``ContainerPool``: supervisors in
``docker run --runtime=runsc`` containers (layers 1-5); missing docker, dockerd, runtime or image
is a ``ContainerBackendUnavailable`` naming the fix, and an image built from other executor
sources than this checkout is refused (stale image).

Only the standard library and the docker CLI are used (no docker SDK): this package stays
stdlib + pyseccomp only (SECURITY.md, "Dependencies").
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import subprocess
import threading
import weakref
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from executor import policy, supervisor
from executor.container_config import (  # noqa: F401  (re-exported: pool.X is the public name)
    CONTAINER_DIR,
    DEFAULT_IMAGE,
    DEFAULT_RUN_VALUES,
    IMAGE_LOCK,
    IMAGE_NAME,
    LABEL_ROOTFS,
    LABEL_SRC,
    PACKAGE_DIR,
    REPO_ROOT,
    RUN_FLAGS_FILE,
    SECCOMP_PROFILE,
    SUPERVISOR_COMMAND,
    ContainerBackendUnavailable,
    default_image,
    default_run_flags,
    docker_cli,
    docker_json,
    executor_source_digest,
    read_run_flags,
    runsc_version,
)
from executor.outcomes import Outcome
from executor.result import FIELDS as RESULT_FIELDS  # noqa: F401
from executor.result import make_result
from executor.workers import (
    ContainerWorker,
    ExecutorUnavailable,
    ForgedReply,
    ProcessWorker,
    SupervisorWorker,
    WorkerFailure,
    remove_container,
)

# An honest program the pool runs after a program failed as infrastructure on every attempt.
CONTROL_PROGRAM = "import math\nanswer = math.factorial(5) + 1\n"
CONTROL_ANSWER = 121
DEFAULT_RECYCLE_ON = frozenset(
    {
        Outcome.SANDBOX_VIOLATION.value,
        Outcome.CRASH.value,
        Outcome.INFRA_ERROR.value,
        Outcome.PERSISTENT_INFRA_ERROR.value,
    }
)


class WorkerPool:
    """N supervisors of one kind; ``run``, ``run_many``, ``describe``, ``close``. Subclasses
    say how to start a worker (``_new_worker``) and what to report (``describe``)."""

    backend = "?"

    def __init__(
        self,
        workers: int | None,
        *,
        recycle_after: int = 500,
        recycle_on: Iterable[str] = DEFAULT_RECYCLE_ON,
        max_attempts: int = 3,
        request_timeout: float | None = None,
        limits: dict[str, int | float] | None = None,
        start_timeout: float = 120.0,
    ) -> None:
        if workers is None:
            workers = os.cpu_count() or 1
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        if not isinstance(recycle_after, int) or recycle_after < 1:
            raise ValueError(f"recycle_after must be a positive integer, got {recycle_after!r}")
        if not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"max_attempts must be a positive integer, got {max_attempts!r}")
        self.workers = workers
        self.recycle_after = recycle_after
        self.recycle_on = frozenset(str(o) for o in recycle_on)
        self.max_attempts = max_attempts
        self.start_timeout = start_timeout
        effective = policy.policy_dict(limits)["limits"]  # validates the overrides
        self.request_timeout = request_timeout or float(effective["wall_seconds"]) + 15.0
        self._idle: queue.Queue[SupervisorWorker | WorkerFailure | None] = queue.Queue()
        self._lock = threading.Lock()
        self._live: set[SupervisorWorker] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self.stats = {"started": 0, "recycled": 0, "replaced": 0, "retried": 0}
        self.ready_info: dict[str, Any] = {}

    def _start_all(self, unavailable: type[Exception]) -> None:
        """Start every worker in parallel (each runs its start-up self-test)."""
        with ThreadPoolExecutor(max_workers=self.workers) as tp:
            futures = [tp.submit(self._start) for _ in range(self.workers)]
        errors = [f.exception() for f in futures if f.exception()]
        for f in futures:
            if not f.exception():
                self._idle.put(f.result())
        if errors:
            self.close()
            raise unavailable(f"executor {self.backend} supervisor failed to start: {errors[0]}")
        self.ready_info = next(iter(self._live)).ready if self._live else {}

    def _new_worker(self) -> SupervisorWorker:
        raise NotImplementedError

    # --- workers -----------------------------------------------------------------------------
    def _start(self) -> SupervisorWorker:
        w = self._new_worker()
        with self._lock:
            closed = self._closed
            if not closed:
                self._live.add(w)
                self.stats["started"] += 1
        if closed:
            w.close()
            raise WorkerFailure("pool closed")
        return w

    def _retire(self, w: SupervisorWorker, kill: bool) -> None:
        with self._lock:
            self._live.discard(w)
        if kill:
            w.kill()
        else:
            w.close()

    def _replace_in_background(self, old: SupervisorWorker | None, kill: bool) -> None:
        """Stop ``old`` and put a fresh worker on the idle queue, off the caller's path."""

        def work() -> None:
            if old is not None:
                self._retire(old, kill)
            try:
                new = self._start()
            except WorkerFailure as exc:
                self._idle.put(exc)  # the next caller sees the failure and retries the start
                return
            self._idle.put(new)

        t = threading.Thread(target=work, name=f"executor-{self.backend}-replace", daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _checkout(self) -> SupervisorWorker:
        item = self._idle.get()
        if not isinstance(item, (WorkerFailure, type(None))) and item.alive():
            return item
        if item is not None and not isinstance(item, WorkerFailure):  # died while idle
            self._retire(item, kill=True)
            self.stats["replaced"] += 1
        try:
            return self._start()
        except WorkerFailure:
            self._idle.put(None)  # keep the slot: someone will try again
            raise

    # --- API ---------------------------------------------------------------------------------
    def run(self, source: str) -> dict[str, Any]:
        """Run one program; always returns a result dict (see the module docstring)."""
        if not isinstance(source, str):
            raise TypeError(f"program source must be str, got {type(source).__name__}")
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        died, infra = [], []
        for attempt in range(self.max_attempts):
            if attempt:
                self.stats["retried"] += 1
            try:
                w = self._checkout()
            except WorkerFailure as exc:
                infra.append(f"no supervisor could be started: {exc}")
                continue
            try:
                result = w.request(source, self.request_timeout)
            except ForgedReply as exc:  # the program wrote into the protocol: its own fault
                self.stats["replaced"] += 1
                self._replace_in_background(w, kill=True)
                return make_result(
                    Outcome.SANDBOX_VIOLATION,
                    self.backend,
                    error=(f"the program wrote into the executor's reply stream ({str(exc)[:200]})"),
                )
            except WorkerFailure as exc:
                tail = w.stderr_tail(300)
                died.append(f"{exc}" + (f" [{tail}]" if tail else ""))
                self.stats["replaced"] += 1
                self._replace_in_background(w, kill=True)
                continue
            w.programs += 1
            outcome = str(result.get("outcome"))
            if w.programs >= self.recycle_after or outcome in self.recycle_on:
                self.stats["recycled"] += 1
                self._replace_in_background(w, kill=False)
            else:
                self._idle.put(w)
            if outcome == Outcome.INFRA_ERROR.value:
                infra.append(result.get("error") or "infrastructure error")
                continue
            result.setdefault("backend", self.backend)
            return result
        if died and not infra:
            return make_result(
                Outcome.CRASH,
                self.backend,
                error=(f"the sandbox died while running this program ({len(died)} attempt(s)): {died[-1]}"),
            )
        if self._control_program_ok():  # the sandbox works for others: this program breaks it
            return make_result(
                Outcome.PERSISTENT_INFRA_ERROR,
                self.backend,
                error=(
                    f"the program caused an infrastructure failure on all {self.max_attempts} attempt(s) "
                    f"while a control program ran fine: {(infra or died)[-1]}"
                ),
            )
        return make_result(
            Outcome.INFRA_ERROR,
            self.backend,
            error=(f"infrastructure failure on all {self.max_attempts} attempt(s): {(infra or died)[-1]}"),
        )

    def _control_program_ok(self) -> bool:
        """Run the executor's own CONTROL_PROGRAM on the pool: True when it answers correctly
        (the infrastructure works, so repeated failures are the program's doing)."""
        try:
            w = self._checkout()
        except WorkerFailure:
            return False
        try:
            result = w.request(CONTROL_PROGRAM, self.request_timeout)
        except WorkerFailure:
            self.stats["replaced"] += 1
            self._replace_in_background(w, kill=True)
            return False
        w.programs += 1
        self._idle.put(w)
        return result.get("outcome") == Outcome.OK.value and result.get("answer") == CONTROL_ANSWER

    def run_many(self, sources: Iterable[str]) -> list[dict[str, Any]]:
        """Run programs in parallel across the workers; results in input order."""
        sources = list(sources)
        for i, s in enumerate(sources):
            if not isinstance(s, str):
                raise TypeError(f"program source #{i} must be str, got {type(s).__name__}")
        if not sources:
            return []
        with ThreadPoolExecutor(max_workers=min(self.workers, len(sources))) as tp:
            return list(tp.map(self.run, sources))

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "workers": self.workers,
            "recycle_after": self.recycle_after,
            "recycle_on": sorted(self.recycle_on),
            "max_attempts": self.max_attempts,
            "stats": dict(self.stats),
            "address_layout": self.ready_info.get("address_layout"),
            "supervisor": {
                k: self.ready_info.get(k)
                for k in ("policy_hash", "seccomp", "python", "limits", "disabled_layers", "spares", "address_layout")
            },
        }

    def close(self) -> None:
        """Stop every worker (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = list(self._threads)
        for t in threads:
            t.join(timeout=self.start_timeout)
        with self._lock:
            live = list(self._live)
            self._live.clear()
        for w in live:
            w.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ProcessPool(WorkerPool):
    """Supervisors on this host: layers 1-4 (``backend="process"``)."""

    backend = "process"

    def __init__(
        self,
        workers: int | None = None,
        limits: dict[str, int | float] | None = None,
        disabled_layers: Iterable[str] = (),
        python: str | None = None,
        max_attempts: int = 3,
        spares: int | None = None,
        test_canary: str = "",
        **opts: Any,  # WorkerPool's keyword options
    ) -> None:
        super().__init__(workers, limits=limits, max_attempts=max_attempts, **opts)
        self.disabled_layers = list(disabled_layers)
        self.command = supervisor.supervisor_command(
            python, limits=limits, spares=spares, disabled_layers=self.disabled_layers, test_canary=test_canary
        )
        self._start_all(ExecutorUnavailable)

    def _new_worker(self) -> ProcessWorker:
        return ProcessWorker(self.command, self.start_timeout)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "supervisor_command": self.command[1:],
            "python": self.ready_info.get("python"),
            "seccomp": self.ready_info.get("seccomp"),
            "selftest": (self.ready_info.get("selftest") or {}).get("results"),
            "replaced_supervisors": self.stats["replaced"],
        }


class ContainerPool(WorkerPool):
    """Supervisors in gVisor containers: layers 1-5 (``backend="container"``).

    Options (keyword): ``memory`` ("512m", also the memory+swap cap), ``pids_limit`` (256, >= 128),
    ``recycle_after`` (programs per container, 500), ``recycle_on``
    (outcomes that retire a container), ``max_attempts`` (3), ``limits`` (policy limit overrides,
    passed to the supervisor), ``disabled_layers`` and ``test_canary`` (TESTS ONLY, passed to the supervisor),
    ``spares`` (children each supervisor keeps forked ahead), ``runtime`` ("runsc"), ``docker``
    (CLI path), ``seccomp_profile`` (path), ``run_flags_file``, ``start_timeout`` (s),
    ``request_timeout`` (s; default wall-clock limit + 15 s), ``check_image_source`` (refuse an
    image built from other executor sources; True), ``pin_cpus`` (give each container one CPU
    with ``--cpuset-cpus``, spread evenly; False).
    """

    backend = "container"

    def __init__(
        self,
        workers: int | None = None,
        image: str | None = None,
        *,
        memory: str = DEFAULT_RUN_VALUES["memory"],
        pids_limit: int = DEFAULT_RUN_VALUES["pids_limit"],
        limits: dict[str, int | float] | None = None,
        disabled_layers: Iterable[str] = (),
        spares: int | None = None,
        runtime: str = DEFAULT_RUN_VALUES["runtime"],
        docker: str = "docker",
        seccomp_profile: str | os.PathLike[str] | None = None,
        run_flags_file: str | os.PathLike[str] | None = None,
        check_image_source: bool = True,
        pin_cpus: bool = False,
        test_canary: str = "",
        **opts: Any,  # WorkerPool's keyword options
    ) -> None:
        if not isinstance(pids_limit, int) or pids_limit < 128:
            raise ValueError(
                f"pids_limit must be an integer >= 128 (64 kills a forking runsc sandbox), got {pids_limit!r}"
            )
        super().__init__(workers, limits=limits, **opts)
        self.image = image or default_image()
        self.docker = docker
        self.runtime = runtime
        self.seccomp_profile = Path(seccomp_profile or SECCOMP_PROFILE).resolve()
        self.run_flags_file = Path(run_flags_file or RUN_FLAGS_FILE)
        self._docker_bin = self._preflight_docker()
        self._image_info = self._preflight_image(check_image_source)
        if not self.seccomp_profile.is_file():
            raise ContainerBackendUnavailable(
                f"seccomp profile {self.seccomp_profile} missing (render it with `executor seccomp-profile`)"
            )
        self.run_flags = read_run_flags(
            self.run_flags_file,
            runtime=runtime,
            memory=memory,
            pids_limit=str(pids_limit),
            seccomp_profile=str(self.seccomp_profile),
        )
        self.command = [
            *SUPERVISOR_COMMAND,
            *supervisor.supervisor_args(
                limits=limits,
                disabled_layers=tuple(disabled_layers),
                backend_label="container",
                spares=spares,
                test_canary=test_canary,
            ),
        ]
        self.pin_cpus = bool(pin_cpus)
        self._cpus = sorted(os.sched_getaffinity(0))
        self._starting_cpus: list[int] = []
        self._finalizer = weakref.finalize(self, _remove_all, self._docker_bin, self._live)
        self._start_all(ContainerBackendUnavailable)

    # --- preflight ---------------------------------------------------------------------------
    def _preflight_docker(self) -> str:
        path = shutil.which(self.docker)
        if not path:
            raise ContainerBackendUnavailable(
                f"docker CLI {self.docker!r} not found on PATH (install the host with scripts/install-host.sh)"
            )
        try:
            info = docker_cli(path, "info", "--format", "{{json .}}", timeout=30)
        except subprocess.TimeoutExpired:
            raise ContainerBackendUnavailable("dockerd did not answer `docker info` within 30 s") from None
        if info.returncode != 0:
            raise ContainerBackendUnavailable(
                "dockerd not reachable (`docker info` failed: "
                f"{info.stderr.strip()[:300]}); start it with scripts/install-host.sh"
            )
        data = json.loads(info.stdout)
        runtimes = data.get("Runtimes") or {}
        if self.runtime not in runtimes:
            raise ContainerBackendUnavailable(
                f"dockerd has no {self.runtime!r} runtime (has: {', '.join(sorted(runtimes))}); "
                "configure it with scripts/install-host.sh"
            )
        self._docker_info = {
            "server_version": data.get("ServerVersion"),
            "runtime": {"name": self.runtime, **runtimes[self.runtime]},
        }
        return path

    def _preflight_image(self, check_source: bool) -> dict[str, Any]:
        data = docker_json(self._docker_bin, "image", "inspect", self.image)
        if data is None:
            raise ContainerBackendUnavailable(
                f"executor image {self.image!r} not found: build it with scripts/build-executor-image.sh"
            )
        labels = (data.get("Config") or {}).get("Labels") or {}
        info = {
            "image": self.image,
            "image_id": data.get("Id"),
            "rootfs_sha256": labels.get(LABEL_ROOTFS),
            "layers": (data.get("RootFS") or {}).get("Layers"),
            "executor_src_sha256": labels.get(LABEL_SRC),
        }
        if check_source:
            image_src = labels.get(LABEL_SRC)
            if not image_src:
                raise ContainerBackendUnavailable(
                    f"image {self.image!r} has no {LABEL_SRC} label: it was "
                    "not built by scripts/build-executor-image.sh"
                )
            here = executor_source_digest()
            if image_src != here:
                raise ContainerBackendUnavailable(
                    f"image {self.image!r} is stale: built from executor sources {image_src[:12]}, "
                    f"this checkout has {here[:12]}; rebuild with scripts/build-executor-image.sh"
                )
        return info

    # --- containers --------------------------------------------------------------------------
    def _pick_cpu(self) -> list[str]:
        """``--cpuset-cpus`` for a new container when pinning: the CPU with the fewest containers.
        (On the shared 2-core test machine pinning made no measurable difference, so it is off
        by default.)"""
        if not self.pin_cpus:
            return []
        with self._lock:
            used = [getattr(c, "cpu", None) for c in self._live] + list(self._starting_cpus)
            cpu = min(self._cpus, key=lambda k: (used.count(k), k))
            self._starting_cpus.append(cpu)
        return [f"--cpuset-cpus={cpu}"]

    def _new_worker(self) -> ContainerWorker:
        pin = self._pick_cpu()
        try:
            c = ContainerWorker(self._docker_bin, self.run_flags + pin, self.image, self.command, self.start_timeout)
        finally:
            if pin:
                with self._lock:
                    self._starting_cpus.remove(int(pin[0].split("=", 1)[1]))
        c.cpu = int(pin[0].split("=", 1)[1]) if pin else None
        return c

    def describe(self) -> dict[str, Any]:
        """Everything a run manifest needs to identify the sandbox."""
        return {
            **super().describe(),
            **self._image_info,
            "runtime": self._docker_info["runtime"],
            "runsc_version": runsc_version(self._docker_info["runtime"].get("path") or "runsc"),
            "docker_server_version": self._docker_info["server_version"],
            "run_flags": list(self.run_flags),
            "command": list(self.command),
            "seccomp_profile": str(self.seccomp_profile),
            "seccomp_profile_sha256": hashlib.sha256(self.seccomp_profile.read_bytes()).hexdigest(),
            "pin_cpus": self.pin_cpus,
            "seccomp": self.ready_info.get("seccomp"),
            "selftest": (self.ready_info.get("selftest") or {}).get("results"),
        }

    def close(self) -> None:
        super().close()
        if hasattr(self, "_finalizer"):
            self._finalizer.detach()


def _remove_all(docker: str, live: set[SupervisorWorker]) -> None:
    """Last resort at interpreter exit: remove containers a caller forgot to close."""
    for c in list(live):
        remove_container(docker, c.name)

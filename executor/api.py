"""The ``Executor`` facade used by the harness and the CLI, and ``ExecResult``.

Backends:

* ``process``: layers 1-4 on this host. A pool of local supervisors (``supervisor.py``, one per
  worker), each a ``python3 -I -S -B`` subprocess with an empty environment, speaking the JSON
  line protocol.
* ``container``: ``executor.pool.ContainerPool`` (the container side): the same supervisor inside
  ``docker run --runtime=runsc`` containers. If that module is missing or docker/runsc cannot
  run, asking for it is an ``ExecutorUnavailable`` error, never a silent downgrade.
* ``auto``: container where it works, else process; the choice and the reason are recorded in
  ``describe()`` (which goes into the run manifest).

``run`` never raises for program faults. INFRA_ERROR results (a supervisor died, a reply timed
out) are retried on a fresh supervisor, up to ``max_retries`` times; a dead supervisor is
replaced. Test-only layer switch: see ``supervisor.disabled_layers_from_env``.
"""
from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields

from executor import policy, supervisor
from executor.outcomes import Outcome, parse_outcome

BACKENDS = ("auto", "process", "container")


class ExecutorUnavailable(RuntimeError):
    """The requested backend cannot run here (the message says why)."""


@dataclass
class ExecResult:
    """One program's result (also the JSON printed by ``executor run``)."""

    outcome: str
    answer: object = None
    kind: str | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_ms: float | None = None
    cpu_ms: float | None = None
    exit_code: int | None = None
    signal: int | None = None
    error: str | None = None
    backend: str | None = None

    @classmethod
    def from_dict(cls, data: dict) -> "ExecResult":
        if not isinstance(data, dict):
            raise ValueError(f"executor result must be a JSON object, got {type(data).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"executor result has unknown field(s): {sorted(unknown)}")
        if "outcome" not in data:
            raise ValueError("executor result has no 'outcome'")
        parse_outcome(data["outcome"])
        return cls(**data)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.OK.value


def _infra(error: str, backend: str) -> ExecResult:
    return ExecResult(outcome=Outcome.INFRA_ERROR.value, error=error, backend=backend)


class LocalSupervisor:
    """One supervisor subprocess on this host."""

    def __init__(self, command: list[str], ready_timeout: float = 120.0):
        self.command = command
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env={}, cwd="/", close_fds=True)
        self._counter = 0
        line = self._read_line(ready_timeout)
        try:
            info = json.loads(line) if line else None
        except ValueError:
            info = None
        if not isinstance(info, dict) or not info.get("ready"):
            err = info.get("error") if isinstance(info, dict) else f"no ready line ({self.stderr_tail()})"
            self.close()
            raise ExecutorUnavailable(f"executor supervisor refused to start: {err}")
        self.info = info

    def stderr_tail(self, n: int = 2000) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode("utf-8", "replace")[-n:]
        except (OSError, ValueError):
            return ""

    def _read_line(self, timeout: float) -> bytes | None:
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return None
        return self.proc.stdout.readline() or None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, source: str, timeout: float) -> dict:
        """Send one program; the supervisor's result dict. Raises OSError/TimeoutError on
        infrastructure failure (the caller replaces this supervisor)."""
        self._counter += 1
        rid = str(self._counter)
        self.proc.stdin.write(json.dumps({"id": rid, "source": source}).encode() + b"\n")
        self.proc.stdin.flush()
        line = self._read_line(timeout)
        if line is None:
            raise TimeoutError(f"supervisor gave no reply within {timeout:.0f} s "
                               f"(alive={self.alive()}) {self.stderr_tail(300)}")
        reply = json.loads(line)
        if reply.get("id") != rid or not isinstance(reply.get("result"), dict):
            raise OSError(f"supervisor protocol error: {line[:200]!r}")
        return reply["result"]

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            if self.proc.stdout:
                self.proc.stdout.close()
            self._stderr.close()


class ProcessPool:
    """N local supervisors; the process backend."""

    def __init__(self, workers: int, limits: dict | None = None, disabled_layers=(),
                 python: str | None = None, max_retries: int = 2):
        self.workers = workers
        self.limits = limits
        self.disabled_layers = list(disabled_layers)
        self.command = supervisor.supervisor_command(python, limits=limits,
                                                     disabled_layers=self.disabled_layers)
        self.max_retries = max_retries
        self.effective_limits = policy.policy_dict(limits)["limits"]
        self.reply_timeout = float(self.effective_limits["wall_seconds"]) + 10.0
        self._idle: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._all: list[LocalSupervisor] = []
        self.replaced = 0
        with ThreadPoolExecutor(max_workers=workers) as tp:  # start-up (self-test) in parallel
            started = [tp.submit(self._add) for _ in range(workers)]
            errors = [f.exception() for f in started if f.exception() is not None]
        if errors:
            self.close()
            raise errors[0]
        self.info = self._all[0].info

    def _add(self) -> LocalSupervisor:
        sup = LocalSupervisor(self.command)
        with self._lock:
            self._all.append(sup)
        self._idle.put(sup)
        return sup

    def _discard(self, sup: LocalSupervisor) -> None:
        with self._lock:
            if sup in self._all:
                self._all.remove(sup)
        try:
            sup.proc.kill()
        except OSError:
            pass
        sup.close()

    def run(self, source: str) -> dict:
        last_error = "no attempt made"
        for _attempt in range(self.max_retries + 1):
            sup = self._idle.get()
            try:
                result = sup.request(source, self.reply_timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                last_error = f"supervisor failed: {type(exc).__name__}: {exc}"
                self._discard(sup)
                self.replaced += 1
                try:
                    self._add()
                except ExecutorUnavailable as exc2:
                    return {"outcome": Outcome.INFRA_ERROR.value, "error": str(exc2), "backend": "process"}
                continue
            self._idle.put(sup)
            if result.get("outcome") == Outcome.INFRA_ERROR.value:
                last_error = result.get("error") or "infra error"
                continue
            return result
        return {"outcome": Outcome.INFRA_ERROR.value, "error": last_error, "backend": "process"}

    def describe(self) -> dict:
        return {"supervisor_command": self.command[1:], "python": self.info.get("python"),
                "seccomp": self.info.get("seccomp"), "selftest": self.info.get("selftest", {}).get("results"),
                "replaced_supervisors": self.replaced}

    def close(self) -> None:
        with self._lock:
            sups = list(self._all)
            self._all.clear()
        for sup in sups:
            sup.close()


class Executor:
    """Facade: ``run``, ``run_many``, ``describe``; a context manager."""

    def __init__(self, backend: str = "auto", workers: int | None = None, *, limits: dict | None = None,
                 image: str | None = None, max_retries: int = 2, python: str | None = None, **container_opts):
        if backend not in BACKENDS:
            raise ValueError(f"unknown executor backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers or os.cpu_count() or 1
        self.requested_backend = backend
        self.limits = limits
        self.policy_hash = policy.policy_hash(limits)
        self.disabled_layers = supervisor.disabled_layers_from_env()
        self.max_retries = max_retries
        self.backend_reason = "requested"
        self._impl = None
        if backend in ("auto", "container"):
            try:
                self._impl = self._start_container(image, container_opts)
                self.backend = "container"
                if backend == "auto":
                    self.backend_reason = "auto: docker with runsc available"
            except ExecutorUnavailable as exc:
                if backend == "container":
                    raise
                self.backend_reason = f"auto: container backend unavailable ({exc})"
        if self._impl is None:
            self._impl = ProcessPool(self.workers, limits, self.disabled_layers, python, max_retries)
            self.backend = "process"

    def _start_container(self, image: str | None, opts: dict):
        try:
            from executor import pool as pool_module
        except ImportError as exc:
            raise ExecutorUnavailable(f"container backend unavailable: executor.pool cannot be imported ({exc})") from None
        image = image or getattr(pool_module, "DEFAULT_IMAGE", None)
        if not image:
            raise ExecutorUnavailable("container backend unavailable: no image given and executor.pool has no DEFAULT_IMAGE")
        extra = dict(opts)
        if self.limits:
            extra["limits"] = self.limits
        if self.disabled_layers:
            extra["disabled_layers"] = self.disabled_layers
        try:
            return pool_module.ContainerPool(self.workers, image, **extra)
        except ExecutorUnavailable:
            raise
        except Exception as exc:
            raise ExecutorUnavailable(f"container backend unavailable: {type(exc).__name__}: {exc}") from None

    def run(self, source: str) -> ExecResult:
        if not isinstance(source, str):
            raise TypeError(f"program source must be str, got {type(source).__name__}")
        if self._impl is None:
            raise RuntimeError("this Executor is closed")
        try:
            raw = self._impl.run(source)
        except Exception as exc:  # the backend itself broke: infrastructure, never the program
            return _infra(f"{type(exc).__name__}: {exc}", self.backend)
        try:
            res = ExecResult.from_dict(raw)
        except ValueError as exc:
            return _infra(f"malformed result from backend: {exc}", self.backend)
        if res.backend is None:
            res.backend = self.backend
        return res

    def run_many(self, sources) -> list[ExecResult]:
        sources = list(sources)
        if not sources:
            return []
        with ThreadPoolExecutor(max_workers=min(self.workers, len(sources))) as tp:
            return list(tp.map(self.run, sources))

    def describe(self) -> dict:
        d = {"backend": self.backend, "requested_backend": self.requested_backend,
             "backend_reason": self.backend_reason, "workers": self.workers,
             "policy_hash": self.policy_hash, "limits": policy.policy_dict(self.limits)["limits"],
             "disabled_layers": self.disabled_layers, "host_python": sys.version.split()[0]}
        try:
            d.update(self._impl.describe())
        except Exception as exc:
            d["describe_error"] = f"{type(exc).__name__}: {exc}"
        d["backend"] = self.backend
        return d

    def close(self) -> None:
        if self._impl is not None:
            self._impl.close()
            self._impl = None

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # best effort; close() is the contract
        try:
            self.close()
        except Exception:
            pass

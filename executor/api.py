"""The ``Executor`` facade used by the harness and the CLI, and ``ExecResult``.

Backends:

* ``process``: layers 1-4 on this host: ``pool.ProcessPool``, supervisors (``supervisor.py``)
  run as ``python3 -I -S -B`` subprocesses with an empty environment.
* ``container``: layers 1-5: ``pool.ContainerPool``, the same supervisor inside ``docker run
  --runtime=runsc`` containers. If docker/runsc cannot run, asking for it is an
  ``ExecutorUnavailable`` error, never a silent downgrade.
* ``auto``: container where it works, else process; the choice and the reason are recorded in
  ``describe()`` (which goes into the run manifest).

Both are the one retrying pool of ``pool.py`` (layer 6): ``run`` never raises for program faults;
a dead or hung supervisor and an INFRA_ERROR result are retried on a fresh supervisor, up to
``max_attempts`` attempts in all. The result schema is ``result.py``. Test-only layer switch: see
``supervisor.disabled_layers_from_env``.
"""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

from executor import policy, supervisor
from executor import pool as pool_module
from executor.pool import ProcessPool
from executor.result import BACKENDS as RESULT_BACKENDS, ExecResult, infra_result
from executor.workers import ExecutorUnavailable

__all__ = ["REQUESTABLE_BACKENDS", "ExecResult", "Executor", "ExecutorUnavailable"]
# What a caller may ask for: "auto" or one of the backends a result can name (result.BACKENDS).
REQUESTABLE_BACKENDS = ("auto", *RESULT_BACKENDS)


class Executor:
    """Facade: ``run``, ``run_many``, ``describe``; a context manager."""

    def __init__(self, backend: str = "auto", workers: int | None = None, *, limits: dict | None = None,
                 image: str | None = None, max_attempts: int = 3, python: str | None = None, **container_opts):
        if backend not in REQUESTABLE_BACKENDS:
            raise ValueError(f"unknown executor backend {backend!r}; choose one of {', '.join(REQUESTABLE_BACKENDS)}")
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers or os.cpu_count() or 1
        self.requested_backend = backend
        self.limits = limits
        self.policy_hash = policy.policy_hash(limits)
        self.disabled_layers = supervisor.disabled_layers_from_env()
        self.test_canary = supervisor.test_canary_from_env()
        self.max_attempts = max_attempts
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
            self._impl = ProcessPool(self.workers, limits, self.disabled_layers, python, max_attempts,
                                     spares=container_opts.get("spares"), test_canary=self.test_canary)
            self.backend = "process"

    def _start_container(self, image: str | None, opts: dict):
        image = image or pool_module.DEFAULT_IMAGE
        extra = dict(opts)
        extra.setdefault("max_attempts", self.max_attempts)
        if self.limits:
            extra["limits"] = self.limits
        if self.disabled_layers:
            extra["disabled_layers"] = self.disabled_layers
        if self.test_canary:
            extra["test_canary"] = self.test_canary
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
            return ExecResult.from_dict(infra_result(f"{type(exc).__name__}: {exc}", self.backend))
        try:
            res = ExecResult.from_dict(raw)
        except ValueError as exc:
            return ExecResult.from_dict(infra_result(f"malformed result from backend: {exc}", self.backend))
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

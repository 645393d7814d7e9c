"""The ``Executor`` facade used by the harness and the CLI, and ``ExecResult``.

Backends are classes registered by name in ``backends.BACKENDS`` (``backends.py``):

* ``process``: layers 1-4 on this host: ``pool.ProcessPool``, supervisors (``supervisor.py``)
  run as ``python3 -I -S -B`` subprocesses with an empty environment.
* ``container``: layers 1-5: ``pool.ContainerPool``, the same supervisor inside ``docker run
  --runtime=runsc`` containers. If docker/runsc cannot run, asking for it is an
  ``ExecutorUnavailable`` error, never a silent downgrade.
* ``auto``: a policy over the registry (``backends.start_auto``): container where it works, else
  process; the choice and the reason are recorded in ``describe()`` (which goes into the run manifest).

Both are the one retrying pool of ``pool.py`` (layer 6): ``run`` never raises for program faults;
a dead or hung supervisor and an INFRA_ERROR result are retried on a fresh supervisor, up to
``max_attempts`` attempts in all. The result schema is ``result.py``. Test-only layer switch: see
``supervisor.disabled_layers_from_env``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from executor import policy, supervisor
from executor.backends import AUTO, BACKENDS, BackendOptions, Pool, requestable, start_auto
from executor.result import ExecResult, infra_result
from executor.workers import ExecutorUnavailable

__all__ = ["REQUESTABLE_BACKENDS", "ExecResult", "Executor", "ExecutorUnavailable"]
# What a caller may ask for: "auto" or one of the kit's registered backends (backends.requestable() at call time
# also names those registered later).
REQUESTABLE_BACKENDS = requestable()


class Executor:
    """Facade: ``run``, ``run_many``, ``describe``; a context manager."""

    def __init__(
        self,
        backend: str = "auto",
        workers: int | None = None,
        *,
        limits: dict[str, int | float] | None = None,
        image: str | None = None,
        max_attempts: int = 3,
        python: str | None = None,
        **container_opts: Any,  # the backend's own keyword options (BackendOptions.extra)
    ) -> None:
        chosen = None if backend == AUTO else BACKENDS.lookup(backend)  # ValueError naming the choices
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers or os.cpu_count() or 1
        self.requested_backend = backend
        self.limits = limits
        self.policy_hash = policy.policy_hash(limits)
        self.disabled_layers = supervisor.disabled_layers_from_env()
        self.test_canary = supervisor.test_canary_from_env()
        self.max_attempts = max_attempts
        self._impl: Pool | None = None
        options = BackendOptions(
            self.workers,
            limits,
            self.disabled_layers,
            self.test_canary,
            max_attempts,
            image=image,
            python=python,
            extra=container_opts,
        )
        if chosen is None:
            started = start_auto(options)
            self._impl, self.backend, self.backend_reason = started.pool, started.backend, started.reason
        else:
            self._impl = chosen.start(options)  # by name: never a fallback
            self.backend, self.backend_reason = chosen.name, "requested"

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

    def run_many(self, sources: Iterable[str]) -> list[ExecResult]:
        sources = list(sources)
        if not sources:
            return []
        with ThreadPoolExecutor(max_workers=min(self.workers, len(sources))) as tp:
            return list(tp.map(self.run, sources))

    def describe(self) -> dict[str, Any]:
        d = {
            "backend": self.backend,
            "requested_backend": self.requested_backend,
            "backend_reason": self.backend_reason,
            "workers": self.workers,
            "policy_hash": self.policy_hash,
            "limits": policy.policy_dict(self.limits)["limits"],
            "disabled_layers": self.disabled_layers,
            "host_python": sys.version.split()[0],
        }
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

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort; close() is the contract
        try:
            self.close()
        except Exception:
            pass

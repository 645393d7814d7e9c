"""The executor's backends, registered by name: a backend is a class, the class is the kind.

The shape of inspect_ai's sandbox providers and of the harness's launcher registry (``harness/model/launchers.py``),
kept in the standard library: the executor imports nothing from the harness, so this is its own small registry.

* A backend is a subclass of :class:`Backend` with a ``name``, a ``summary`` and ``start(options)``, which returns
  a running pool (``run``, ``describe``, ``close``: ``pool.ProcessPool``, ``pool.ContainerPool``) or raises
  ``ExecutorUnavailable`` naming why it cannot run here. It is registered in :data:`BACKENDS`.
* ``auto`` is not a backend but a policy over the registry (:func:`start_auto`): the backends that take part
  (``auto_rank`` not None) are tried from the lowest rank up and the first that starts is used; the choice and the
  reasons the others could not start are recorded (``Executor.describe()``, the run manifest). The kit's own:
  ``container`` (rank 0: layers 1-5, docker + runsc) before ``process`` (rank 1: layers 1-4 on this host).
* Asking for a backend by name never falls back: if it cannot start, that is the caller's error.

Outside the executor (tests, a study) ``with registered(MyBackend): ...`` adds one for a block; the kit's own
cannot be removed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from executor import container_config
from executor import pool as pool_module
from executor.workers import ExecutorUnavailable

__all__ = [
    "AUTO",
    "BACKENDS",
    "Backend",
    "BackendOptions",
    "BackendRegistry",
    "ContainerBackend",
    "Pool",
    "ProcessBackend",
    "Started",
    "registered",
    "requestable",
    "start_auto",
]

AUTO = "auto"


class Pool(Protocol):
    """What a started backend is to the ``Executor`` facade."""

    def run(self, source: str) -> dict[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class BackendOptions:
    """What the facade hands every backend: its settings, whether or not the backend uses each."""

    workers: int
    limits: dict[str, Any] | None = None
    disabled_layers: list[str] = field(default_factory=list)
    test_canary: str = ""
    max_attempts: int = 3
    image: str | None = None  # container: the executor image (default: container_config.DEFAULT_IMAGE)
    python: str | None = None  # process: the supervisors' interpreter
    extra: Mapping[str, Any] = field(default_factory=dict)  # the backend's own keyword options


class Backend:
    """One way to run programs. Subclasses set the class attributes and implement ``start``."""

    name: ClassVar[str]
    summary: ClassVar[str]
    # auto tries the backends with a rank, lowest first; None: auto never chooses this one
    auto_rank: ClassVar[int | None] = None
    # what auto records when it chooses this backend first time round
    auto_reason: ClassVar[str] = ""

    @classmethod
    def start(cls, options: BackendOptions) -> Pool:
        """A running pool, or ExecutorUnavailable saying why this backend cannot run here."""
        raise NotImplementedError


class ProcessBackend(Backend):
    name = "process"
    summary = "layers 1-4 on this host: supervisors as `python3 -I -S -B` subprocesses with an empty environment"
    auto_rank = 1
    auto_reason = "process backend chosen"

    @classmethod
    def start(cls, options: BackendOptions) -> Pool:
        pool: Pool = pool_module.ProcessPool(
            options.workers,
            options.limits,
            options.disabled_layers,
            options.python,
            options.max_attempts,
            spares=options.extra.get("spares"),
            test_canary=options.test_canary,
        )
        return pool


class ContainerBackend(Backend):
    name = "container"
    summary = "layers 1-5: the same supervisor inside `docker run --runtime=runsc` containers"
    auto_rank = 0
    auto_reason = "docker with runsc available"

    @classmethod
    def start(cls, options: BackendOptions) -> Pool:
        extra = dict(options.extra)
        extra.setdefault("max_attempts", options.max_attempts)
        if options.limits:
            extra["limits"] = options.limits
        if options.disabled_layers:
            extra["disabled_layers"] = options.disabled_layers
        if options.test_canary:
            extra["test_canary"] = options.test_canary
        try:
            pool: Pool = pool_module.ContainerPool(
                options.workers, options.image or container_config.DEFAULT_IMAGE, **extra
            )
        except ExecutorUnavailable:
            raise
        except Exception as exc:
            raise ExecutorUnavailable(f"container backend unavailable: {type(exc).__name__}: {exc}") from None
        return pool


class BackendRegistry(Mapping[str, type[Backend]]):
    """Name -> backend class, in registration order; the kit's own entries (``freeze()``) stay."""

    def __init__(self) -> None:
        self._entries: dict[str, type[Backend]] = {}
        self._frozen: frozenset[str] = frozenset()

    def __getitem__(self, name: str) -> type[Backend]:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, name: str) -> type[Backend]:
        """The backend registered as ``name``; ValueError naming what may be asked for."""
        try:
            return self._entries[name]
        except KeyError:
            raise ValueError(
                f"unknown executor backend {name!r}; choose one of {', '.join(requestable(self))}"
            ) from None

    def register(self, cls: type[Backend]) -> type[Backend]:
        if not (isinstance(cls, type) and issubclass(cls, Backend)):
            raise TypeError(f"an executor backend must be a subclass of Backend, got {cls!r}")
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name or name == AUTO:
            raise ValueError(f"an executor backend needs a name other than {AUTO!r}, got {name!r}")
        held = self._entries.get(name)
        if held is not None and held is not cls:
            raise ValueError(f"executor backend name {name!r} is already registered")
        self._entries[name] = cls
        return cls

    def unregister(self, name: str) -> None:
        if name in self._frozen:
            raise ValueError(f"executor backend {name!r} is one of the kit's own and cannot be removed")
        self._entries.pop(name, None)

    def freeze(self) -> BackendRegistry:
        self._frozen = frozenset(self._entries)
        return self

    def auto_order(self) -> list[type[Backend]]:
        """The backends ``auto`` tries, in order."""
        ranked = [cls for cls in self._entries.values() if cls.auto_rank is not None]
        return sorted(ranked, key=lambda cls: cls.auto_rank if cls.auto_rank is not None else 0)


BACKENDS = BackendRegistry()
BACKENDS.register(ProcessBackend)
BACKENDS.register(ContainerBackend)
BACKENDS.freeze()


def requestable(registry: BackendRegistry = BACKENDS) -> tuple[str, ...]:
    """What a caller may ask for: ``auto`` and every registered backend."""
    return (AUTO, *registry)


@dataclass(frozen=True)
class Started:
    """A backend running: its pool, its name and why it was chosen."""

    pool: Pool
    backend: str
    reason: str


def start_auto(options: BackendOptions, registry: BackendRegistry = BACKENDS) -> Started:
    """The ``auto`` policy: the first backend of ``registry.auto_order()`` that starts. The reason names the
    backend's own ``auto_reason`` when the first one started, else every backend that could not and why."""
    unavailable: list[str] = []
    for cls in registry.auto_order():
        try:
            pool = cls.start(options)
        except ExecutorUnavailable as exc:
            unavailable.append(f"{cls.name} backend unavailable ({exc})")
            continue
        reason = "; ".join(unavailable) if unavailable else cls.auto_reason
        return Started(pool, cls.name, f"{AUTO}: {reason}")
    raise ExecutorUnavailable(f"{AUTO}: no executor backend could start: {'; '.join(unavailable) or 'none takes part'}")


@contextmanager
def registered(cls: type[Backend], registry: BackendRegistry = BACKENDS) -> Iterator[type[Backend]]:
    """Register a backend for the length of a block (tests, one-off studies)."""
    registry.register(cls)
    try:
        yield cls
    finally:
        registry.unregister(cls.name)

"""The executor's backends as a registry (issue 49): a backend is a class registered by name, `auto` is a policy
over the registry, and the facade (executor/api.py) compares no backend's name."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from executor import backends
from executor.api import REQUESTABLE_BACKENDS, Executor, ExecutorUnavailable
from executor.backends import (
    AUTO,
    BACKENDS,
    Backend,
    BackendOptions,
    BackendRegistry,
    registered,
    requestable,
    start_auto,
)
from executor.outcomes import Outcome
from executor.result import BACKENDS as RESULT_BACKENDS
from executor.result import make_result

REPO = Path(__file__).resolve().parents[2]


class FakePool:
    """A pool that answers every program with the length of its source, and remembers what it was given."""

    def __init__(self, options: BackendOptions, backend: str) -> None:
        self.options, self.backend, self.closed = options, backend, False

    def run(self, source: str) -> dict[str, Any]:
        return make_result(Outcome.OK, None, answer=len(source), kind="number")

    def describe(self) -> dict[str, Any]:
        return {"fake_workers": self.options.workers, "backend": "whatever the pool says"}

    def close(self) -> None:
        self.closed = True


def fake_backend(name: str, *, rank: int | None = None, fails: str | None = None, reason: str = "") -> type[Backend]:
    """A backend class defined here alone: it starts a FakePool, or raises ExecutorUnavailable(fails)."""

    def start(cls: type[Backend], options: BackendOptions) -> FakePool:
        if fails is not None:
            raise ExecutorUnavailable(fails)
        return FakePool(options, cls.name)

    return type(
        f"Fake_{name}",
        (Backend,),
        {
            "name": name,
            "summary": f"a test's {name}",
            "auto_rank": rank,
            "auto_reason": reason,
            "start": classmethod(start),
        },
    )


def test_the_kits_backends_are_the_registry():
    assert list(BACKENDS) == ["process", "container"]
    assert set(BACKENDS) == set(RESULT_BACKENDS)  # the backends a result can name
    assert REQUESTABLE_BACKENDS == requestable() == ("auto", "process", "container")
    assert [cls.name for cls in BACKENDS.auto_order()] == ["container", "process"]  # auto: container first
    with pytest.raises(ValueError, match="unknown executor backend 'docker'; choose one of auto, process, container"):
        BACKENDS.lookup("docker")
    with pytest.raises(ValueError, match="one of the kit's own"):
        BACKENDS.unregister("process")


def test_registering_is_checked():
    with pytest.raises(TypeError, match="subclass of Backend"):
        BACKENDS.register(FakePool)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a name other than 'auto'"):
        BACKENDS.register(fake_backend(AUTO))
    with pytest.raises(ValueError, match="'process' is already registered"):
        BACKENDS.register(fake_backend("process"))


def test_a_backend_defined_in_a_test_file_runs_behind_the_facade():
    """Registered for a block, a new backend is asked for by name like the kit's own; it never needed an edit of
    executor/api.py, and it is gone after the block."""
    fake = fake_backend("fake-test")
    with registered(fake):
        assert "fake-test" in requestable()
        with Executor(backend="fake-test", workers=3, limits={"wall_seconds": 5}, image="img", spares=2) as ex:
            pool = ex._impl
            assert isinstance(pool, FakePool) and pool.options.workers == 3 and pool.options.image == "img"
            assert pool.options.limits == {"wall_seconds": 5} and dict(pool.options.extra) == {"spares": 2}
            r = ex.run("answer = 1")
            assert (r.outcome, r.answer, r.backend) == ("OK", 10, "fake-test")
            d = ex.describe()
            assert (d["backend"], d["requested_backend"], d["backend_reason"]) == (
                "fake-test",
                "fake-test",
                "requested",
            )
            assert d["fake_workers"] == 3
        assert pool.closed
    assert "fake-test" not in BACKENDS
    with pytest.raises(ValueError, match="unknown executor backend 'fake-test'"):
        Executor(backend="fake-test")


def test_asking_by_name_never_falls_back():
    with (
        registered(fake_backend("broken-test", rank=None, fails="no such sandbox here")),
        pytest.raises(ExecutorUnavailable, match="no such sandbox here"),
    ):
        Executor(backend="broken-test", workers=1)


def test_auto_is_a_policy_over_the_registry():
    """Ranked lowest first; a backend without a rank never takes part; the reason names the first choice's own
    reason, or every backend that could not start and why; none starting is one error naming them all."""
    reg = BackendRegistry()
    reg.register(fake_backend("slow", rank=5, reason="slow chosen"))
    reg.register(fake_backend("best", rank=0, fails="no hardware", reason="best chosen"))
    reg.register(fake_backend("middle", rank=1, fails="not installed"))
    reg.register(fake_backend("manual", rank=None, reason="never by auto"))
    assert [cls.name for cls in reg.auto_order()] == ["best", "middle", "slow"]
    started = start_auto(BackendOptions(workers=1), reg)
    assert started.backend == "slow" and isinstance(started.pool, FakePool)
    assert started.reason == (
        "auto: best backend unavailable (no hardware); middle backend unavailable (not installed)"
    )
    reg.unregister("best")
    reg.unregister("middle")
    assert start_auto(BackendOptions(workers=1), reg).reason == "auto: slow chosen"
    reg.unregister("slow")
    with pytest.raises(ExecutorUnavailable, match="auto: no executor backend could start: none takes part"):
        start_auto(BackendOptions(workers=1), reg)


def test_auto_through_the_facade_takes_a_registered_backend_first():
    with registered(fake_backend("first-test", rank=-1, reason="the test's own")):
        with Executor(backend="auto", workers=1) as ex:
            d = ex.describe()
    assert (d["backend"], d["requested_backend"], d["backend_reason"]) == ("first-test", "auto", "auto: the test's own")


def test_the_facade_compares_no_backend_name():
    """executor/api.py holds no backend name: which backends exist and how `auto` picks is backends.py's
    (on main c14e538 the facade branched on "auto", "container" and "process" strings)."""
    tree = ast.parse((REPO / "executor" / "api.py").read_text())
    names = set(BACKENDS) | {AUTO}
    literals = sorted(
        {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
        }
    )
    assert literals == ["auto"], literals  # the default of Executor(backend="auto") alone
    compared = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for side in [node.left, *node.comparators]
        if isinstance(side, ast.Constant) and side.value in names
    ]
    assert not compared, f"executor/api.py compares a backend name at lines {compared}"
    assert backends.__doc__ and "auto" in backends.__doc__


def test_the_harness_commands_offer_the_registry():
    """harness run, reproduce and shard plan|submit take --executor-backend from the registry."""
    from click.testing import CliRunner

    from harness.cli import main

    for command in (["run"], ["reproduce"], ["shard", "plan"], ["shard", "submit"]):
        out = CliRunner().invoke(main, [*command, "--help"], terminal_width=200).output
        assert "--executor-backend [auto|process|container]" in out, (command, out)

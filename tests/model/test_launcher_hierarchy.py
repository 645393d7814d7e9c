"""The launchers are one class hierarchy in one registry (harness.model.launchers): each kind is a `Launcher` class
owning its command, prerequisites, lifecycle and description; nothing outside a launcher class compares launcher
names; a kind defined in this file alone, registered for a block, is planned, preflighted, run by the reproduce
pipeline and split into shards like the kit's own; the one local-server-process helper stops a server's whole
process group."""

from __future__ import annotations

import ast
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

import harness
from harness.model.launchers import LAUNCHERS, launcher_kind, registered
from harness.model.prerequisites import Check
from harness.model.rehearsal.server import RehearsalServer
from harness.model.server_info import ServerInfo
from harness.model.server_process import ServerProcess
from harness.model.serving import Launcher, LaunchError, LauncherSettingsError, LaunchOptions, Throughput, poll_models
from harness.reproduce.config import ReproduceConfig, ReproduceError, preflight
from harness.reproduce.merge import merge_shards
from harness.reproduce.plan import build_plan, format_plan
from harness.reproduce.reproduction import run_pipeline
from harness.reproduce.shard import build_shard_plan, run_shard, shard_dir
from harness.run.store import load_records

PACKAGE = Path(harness.__file__).resolve().parent


def test_the_registry_holds_one_class_per_kind_each_owning_its_parts():
    assert list(LAUNCHERS) == ["vllm", "vllm-cpu", "llama-cpp", "rehearsal", "external"]
    for name, kind in LAUNCHERS.items():
        assert isinstance(kind, type) and issubclass(kind, Launcher) and kind.name == name
        assert kind.summary and kind.__module__.startswith("harness.model.")
        assert not kind.__abstractmethods__, (name, sorted(kind.__abstractmethods__))  # every part its own
    with pytest.raises(LauncherSettingsError, match="unknown launcher 'tgi'; known launchers: vllm, vllm-cpu"):
        launcher_kind("tgi")
    with pytest.raises(TypeError, match="a launcher must be a subclass of Launcher"):
        LAUNCHERS.register(object)
    with pytest.raises(ValueError, match="cannot be removed"):
        LAUNCHERS.unregister("vllm")


def _launcher_name_comparisons(root: Path = PACKAGE) -> list[str]:
    """Every comparison under `root` of something named *launcher* against a registered launcher's name, outside the
    module that defines that launcher class."""
    home = {kind.name: Path(sys.modules[kind.__module__].__file__).resolve() for kind in LAUNCHERS.values()}
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            names = {
                c.value
                for s in sides
                for c in ast.walk(s)
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in home
            }
            subject = " ".join(ast.get_source_segment(text, s) or "" for s in sides)
            if "launcher" in subject.lower() and any(path.resolve() != home[name] for name in names):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {subject}")
    return found


def test_no_launcher_name_is_compared_outside_its_class():
    assert _launcher_name_comparisons() == []


def test_the_name_check_finds_a_comparison_when_there_is_one(tmp_path):
    """The check above can fail: a module comparing a config's launcher with "vllm" is found, a profile is not."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "canary.py").write_text(
        'def f(cfg, profile):\n    ok = profile == "vllm"\n'
        '    return cfg.launcher == "vllm" or cfg.launcher in ("rehearsal", "external")\n'
    )
    found = _launcher_name_comparisons(tmp_path / "pkg")
    assert [f.split(": ", 1)[0] for f in found] == ["pkg/canary.py:3", "pkg/canary.py:3"]


# ---- a kind defined here alone --------------------------------------------------------------------------------------


@dataclass
class InThreadLauncher(Launcher):
    """A launcher kind of a test: the rehearsal fake served from a thread of this process (no subprocess)."""

    name = "in-thread"
    summary = "the rehearsal fake in a thread of the harness (a test's kind)"
    ready_timeout = 30.0
    deterministic_refusal = "--deterministic: the in-thread fake has no such switch"
    stated_throughput = Throughput(1_000_000, 100_000, 0, "a test's fake")

    model_id: str = "rehearsal-alpha"
    answer_key: Path | None = None
    started_ports: list = field(default_factory=list)
    _server: RehearsalServer | None = field(default=None, init=False, repr=False)
    server_profile: str = "vllm-seeded"

    @classmethod
    def default_models(cls) -> list[str]:
        return ["rehearsal-alpha"]

    @classmethod
    def for_model(cls, key: str, options: LaunchOptions) -> InThreadLauncher:
        cls.check_config(base_url=options.base_url, deterministic=options.deterministic)
        from harness.data.dataset import load_dataset

        return cls(model_id=key, answer_key=load_dataset(options.dataset).path)

    @classmethod
    def prerequisites(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        return [Check("in-thread fake", True, "nothing to install")]

    @classmethod
    def weights_bytes(cls, key: str) -> int | None:
        return 0

    @property
    def base_url(self) -> str:
        return self._server.base_url if self._server is not None else "http://127.0.0.1:0/v1"

    def start(self) -> None:
        self._server = RehearsalServer(port=0, seed=7, models=(self.model_id,), answer_key=self.answer_key)
        self._server.__enter__()
        self.started_ports.append(self.base_url)

    def wait_ready(self, timeout: float = 30.0) -> None:
        poll_models(self.base_url, self.model_id, timeout)

    def stop(self) -> None:
        if self._server is not None:
            self._server.__exit__(None, None, None)
            self._server = None

    def describe(self) -> ServerInfo:
        return ServerInfo(
            launcher=self.name,
            base_url=self.base_url,
            model_id=self.model_id,
            server_profile=self.server_profile,
            server="rehearsal fake in a thread",
            synthetic=True,
        )


def _cfg(tmp_path, **kw) -> ReproduceConfig:
    base = dict(
        launcher="in-thread",
        arms=["note-only", "gold-lib"],
        seeds=[42, 43],
        dataset="bundled-test",
        limit=3,
        out=tmp_path / "out",
        executor_backend="process",
        draws=200,
        progress=False,
    )
    return ReproduceConfig(**{**base, **kw})


def test_a_kind_of_a_test_is_planned_run_and_sharded_like_the_kits_own(tmp_path):
    with registered(InThreadLauncher):
        with pytest.raises(ReproduceError, match="--deterministic: the in-thread fake has no such switch"):
            _cfg(tmp_path, deterministic=True)
        cfg = _cfg(tmp_path)
        assert cfg.models == ("rehearsal-alpha",) and [c.ok for c in preflight(cfg)] == [True, True]
        plan = build_plan(cfg, results_root=tmp_path / "none")
        assert "launcher:   in-thread" in format_plan(plan) and not plan.problems
        manifest = run_pipeline(cfg, echo=lambda _: None)
        assert manifest.status == "complete" and manifest.servers[0].info.launcher == "in-thread"
        assert manifest.servers[0].stopped_at is not None
        with pytest.raises(httpx.HTTPError):  # stopped by the pipeline
            httpx.get(f"{manifest.servers[0].info.base_url}/models", timeout=2.0)
        shards = build_shard_plan(_cfg(tmp_path, out=tmp_path / "sharded"), 2)
        for i in (1, 0):
            assert run_shard(shards, i, tmp_path / "sharded", echo=lambda _: None).status == "complete"
        merged = merge_shards(
            [shard_dir(tmp_path / "sharded", i) for i in (0, 1)],
            tmp_path / "merged",
            outputs=False,
            echo=lambda _: None,
        )
    assert "in-thread" not in LAUNCHERS  # registered for the block only
    assert merged.records == len(load_records(cfg.out))

    def canon(root):
        return sorted((r.key, r.replies[-1] if r.replies else None, r.correct) for r in load_records(root))

    assert canon(tmp_path / "merged") == canon(cfg.out)


# ---- the local server process ---------------------------------------------------------------------------------------

SPAWNS_A_CHILD = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
print("child", child.pid, flush=True)
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0): read its state
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _child_pid(log: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if "child " in text:
            return int(text.split("child ", 1)[1].split()[0])
        time.sleep(0.05)
    raise AssertionError(f"no child line in {log}: {text!r}")


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_the_server_process_stops_its_whole_group_and_keeps_its_log(tmp_path, how):
    log = tmp_path / "logs" / "server.log"
    log.parent.mkdir()
    log.write_text("an earlier run's line\n")
    process = ServerProcess(log)
    pid = process.start([sys.executable, "-c", SPAWNS_A_CHILD])
    child = _child_pid(log)
    assert process.pid == pid and process.exited() is None and _alive(child)
    getattr(process, how)()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the server's child outlived the server"
    assert not _alive(pid) and process.pid is None and process.stop() is False
    assert log.read_text().startswith("an earlier run's line\n")  # appended, never truncated


def test_a_server_that_exits_before_it_is_ready_is_named_with_its_log(tmp_path):
    log = tmp_path / "s.log"
    process = ServerProcess(log)
    process.start([sys.executable, "-c", "import sys; print('bad flag'); sys.exit(3)"])
    with pytest.raises(LaunchError, match=f"exited with code 3 before it was ready; see {log}"):
        poll_models("http://127.0.0.1:9/v1", "m", 30, process=process, log=log, interval=0.05)
    assert "bad flag" in log.read_text()
    process.stop()


def test_no_private_process_helper_is_imported_across_modules():
    """One helper (harness.model.server_process) behind every launcher that runs a local server; nothing private
    crosses a module boundary, and no launcher opens a log for a Popen of its own."""
    for path in sorted((PACKAGE / "model").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness."):
                assert not [a.name for a in node.names if a.name.startswith("_")], path
        if path.name != "server_process.py":
            assert "subprocess.Popen(" not in text, path

"""Every user-facing CLI failure of issue 10 prints one or two lines naming the problem and the fix,
exits non-zero, and leaves results already written byte for byte intact. The CLI runs as a user runs
it (the installed `harness` in a subprocess); results are real records copied from the committed sets."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from harness.core.ports import free_port
from tests.conftest import ROOT

HARNESS = str(ROOT / ".venv" / "bin" / "harness")
GOLD = ROOT / "results" / "gold-solve"


def harness(*args, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [HARNESS, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})}
    )


def seeded_root(tmp_path) -> tuple[Path, dict[Path, bytes]]:
    """A results root holding a real Gold-Solve result file; returns it and every file's bytes."""
    root = tmp_path / "results"
    shutil.copytree(GOLD / "library", root / "library")
    return root, snapshot(root)


def snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_short_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode != 0, proc.stdout
    err = proc.stderr.strip()
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert 1 <= len(lines) <= 2, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def test_model_server_unreachable(tmp_path):
    root, before = seeded_root(tmp_path)
    port = free_port()  # nothing listens there
    proc = harness(
        "run",
        "--arm",
        "open-book",
        "--dataset",
        "bundled-test",
        "--limit",
        "1",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--out",
        str(root),
        "--no-progress",
    )
    assert_short_error(
        proc,
        f"cannot reach a model server at http://127.0.0.1:{port}/v1",
        "scripts/model-server.sh start",
        "--base-url",
    )
    assert snapshot(root) == before


@pytest.fixture
def static_file_server(tmp_path):
    """Python's own http.server serving a directory: a real HTTP server that is not a model server."""
    docroot = tmp_path / "www"
    (docroot / "v1").mkdir(parents=True)
    (docroot / "v1" / "models").write_text("<html><body>It works!</body></html>\n")
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(docroot), **k)  # noqa: E731
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_model_server_answers_non_json(tmp_path, static_file_server):
    root, before = seeded_root(tmp_path)
    proc = harness(
        "run",
        "--arm",
        "open-book",
        "--dataset",
        "bundled-test",
        "--limit",
        "1",
        "--base-url",
        f"{static_file_server}/v1",
        "--out",
        str(root),
        "--no-progress",
    )
    assert_short_error(proc, "answered GET /models with non-JSON", "It works!", "ending in /v1")
    # A URL without the /v1 root: the server answers 404.
    proc = harness(
        "run",
        "--arm",
        "open-book",
        "--dataset",
        "bundled-test",
        "--limit",
        "1",
        "--base-url",
        f"{static_file_server}/api",
        "--out",
        str(root),
        "--no-progress",
    )
    assert_short_error(proc, "HTTP 404", "ending in /v1")
    assert snapshot(root) == before


def test_container_backend_missing_docker(tmp_path):
    """No docker on PATH (a PATH holding only the venv's and python's directories)."""
    root, before = seeded_root(tmp_path)
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("python3", "env"):
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    proc = harness(
        "run",
        "--arm",
        "program-solve",
        "--dataset",
        "bundled-test",
        "--limit",
        "1",
        "--executor-backend",
        "container",
        "--base-url",
        f"http://127.0.0.1:{free_port()}/v1",
        "--out",
        str(root),
        "--no-progress",
        env={"PATH": f"{ROOT / '.venv' / 'bin'}:{bare}"},
    )
    assert_short_error(proc, "container executor backend is unavailable", "docker", "--executor-backend process")
    assert snapshot(root) == before


def test_container_backend_missing_runsc(tmp_path):
    """docker present but asked for a runtime dockerd does not have: the same one-line error names it."""
    from executor.api import Executor, ExecutorUnavailable
    from harness.cli.errors import explain

    if shutil.which("docker") is None:
        pytest.skip("docker not installed: test_container_backend_missing_docker covers this host")
    with pytest.raises(ExecutorUnavailable) as info:
        Executor(backend="container", workers=1, runtime="runsc-not-installed")
    msg = explain(info.value)
    assert "runsc-not-installed" in msg and "--executor-backend process" in msg and len(msg.splitlines()) <= 2


def test_unwritable_out(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    proc = harness(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        "bundled-test",
        "--limit",
        "1",
        "--out",
        str(blocker / "results"),
        "--no-progress",
    )
    assert_short_error(proc, f"cannot write results to {blocker / 'results'}", "--out")
    assert blocker.read_text() == "not a directory\n"


def test_results_root_with_foreign_records(tmp_path):
    root, _ = seeded_root(tmp_path)
    foreign = root / "someone-else" / "notes" / "seed1.jsonl"
    foreign.parent.mkdir(parents=True)
    foreign.write_text(
        json.dumps({"id": 1, "text": "a line from another tool"})
        + "\n"
        + json.dumps({"id": 2, "text": "and another"})
        + "\n"
    )
    before = snapshot(root)
    for args in (
        ["tables", "--results", str(root), "--out", str(tmp_path / "tables")],
        ["score", "--results", str(root)],
    ):
        proc = harness(*args)
        assert_short_error(proc, str(foreign), "move the named file out")
    assert snapshot(root) == before


def test_results_root_with_mixed_records(tmp_path):
    """The same (model, arm, seed, case) recorded twice under different run configurations."""
    root, _ = seeded_root(tmp_path)
    path = next(root.rglob("seed*.jsonl"))
    first = json.loads(path.read_text().splitlines()[0])
    other = path.with_name("seed42.jsonl")
    if other == path:
        other = path.with_name("seed43.jsonl")
    # a second file claiming seed 42 rows: the run configuration differs (another arm config hash)
    clash = dict(first, arm_config_hash="0" * 64, key="1" * 64, seed=first["seed"])
    extra = path.parent.parent / "gold-lib-copy" / path.name
    extra.parent.mkdir(parents=True)
    extra.write_text(json.dumps(dict(clash, arm="gold-lib")) + "\n")
    before = snapshot(root)
    proc = harness("tables", "--results", str(root), "--out", str(tmp_path / "tables"))
    assert_short_error(proc, first["case_id"], "duplicate record", "move the named file out")
    assert snapshot(root) == before


@pytest.mark.model
def test_corrupt_cache_entry(tmp_path, model_server):
    root, _ = seeded_root(tmp_path)
    args = (
        "run",
        "--arm",
        "open-book",
        "--dataset",
        "bundled-test",
        "--case",
        "24-951",
        "--base-url",
        model_server.base_url,
        "--out",
        str(root),
        "--no-progress",
        "--executor-backend",
        "process",
    )
    first = harness(*args, timeout=600)
    assert first.returncode == 0, first.stderr
    (entry,) = (root / ".cache" / "responses").rglob("*.json")
    entry.write_text('{"format": 1, "key": "x", "res')  # damaged after it was written
    shutil.rmtree(root / "qwen2.5-coder-0.5b-instruct")  # force a re-ask, which reads the cache
    before = snapshot(root)
    proc = harness(*args, timeout=600)
    assert_short_error(proc, f"corrupt response-cache entry {entry}", "--no-cache")
    # nothing written is changed or lost; the root's sums were rewritten over it (and the new run manifest)
    assert all(p.read_bytes() == b for p, b in before.items() if p.name != "SHA256SUMS")
    from harness.verify.verification import check_checksums

    assert check_checksums(root)[1] == []

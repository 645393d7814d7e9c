"""The vllm-cpu launcher without starting a server: its command is the H100 command built by the same code with only
the CPU adaptations of serving.json `cpu_twin`, it passes the same contract (whose source files the CPU wheel shares
byte for byte), and batch invariance is refused by name before anything starts. The server itself is exercised in
tests/model/test_vllm_cpu_server.py."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from harness.cli import main as cli
from harness.model.cpu_models import CPU_MODEL_ID
from harness.model.serving import LaunchError
from harness.model.vllm import locks as vllm
from harness.model.vllm.contract import check_server_command
from harness.model.vllm.cpu import ATTACH_ENV, VllmCpuLauncher
from harness.model.vllm.launcher import VllmLauncher
from harness.model.vllm.locks import DeterminismRefused


def _flags(args: list[str]) -> dict:
    out, i = {}, 0
    while i < len(args):
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[args[i]] = args[i + 1]
            i += 2
        else:
            out[args[i]] = True
            i += 1
    return out


@pytest.mark.parametrize("generation_config", ["auto", "vllm"])
def test_the_cpu_twin_command_is_the_h100_command_with_only_the_cpu_adaptations(generation_config):
    h100 = _flags(VllmLauncher("qwen2.5-7b", generation_config=generation_config).server_args())
    cpu = _flags(VllmCpuLauncher(port=8123, generation_config=generation_config).server_args())
    differ = {k for k in set(h100) | set(cpu) if h100.get(k) != cpu.get(k)}
    # what names the model and where it listens, and what serving.json cpu_twin adapts for a CPU
    assert differ == {
        "--model",
        "--revision",
        "--tokenizer-revision",
        "--served-model-name",
        "--host",
        "--port",
        "--dtype",
        "--gpu-memory-utilization",
        "--max-num-seqs",
        "--enforce-eager",
    }
    adapted = vllm.serving_config()["cpu_twin"]["flags"]
    assert set(adapted) == {"dtype", "gpu_memory_utilization", "enforce_eager", "max_num_seqs"}
    assert cpu["--dtype"] == "float32" and "--gpu-memory-utilization" not in cpu and cpu["--enforce-eager"] is True
    assert cpu["--generation-config"] == h100["--generation-config"] == generation_config
    assert cpu["--served-model-name"] == CPU_MODEL_ID and cpu["--host"] == "127.0.0.1"
    env = VllmCpuLauncher().env()
    assert env.pop("VLLM_CACHE_ROOT").endswith("vllm-cache")
    assert env == {**VllmLauncher("qwen2.5-7b").env(), "VLLM_CPU_KVCACHE_SPACE": "2"}


def test_the_cpu_twin_passes_the_same_contract_whose_sources_both_wheels_share():
    contract = vllm.contract()
    assert VllmCpuLauncher().contract_problems() == []
    twin = contract["cpu_twin"]
    assert twin["version"] == contract["vllm_version"] == vllm.image_lock()["cpu_twin"]["version"]
    assert twin["wheel_sha256"] == vllm.image_lock()["cpu_twin"]["sha256"]
    assert not set(twin["contract_sources"]) & set(twin["python_files_that_differ"])
    # the CPU rule is the contract's, not the launcher's: the same command with the mode on fails it on CPU only
    args, env = VllmCpuLauncher().server_args(), {"VLLM_BATCH_INVARIANT": "1"}
    assert check_server_command(contract, args, env, platform="cuda") == []
    (problem,) = check_server_command(contract, args, env, platform="cpu")
    assert "Triton" in problem and contract["batch_invariant"]["cpu_overrides"][0]["source"] in problem


def test_batch_invariance_on_cpu_is_refused_by_name_before_anything_starts(tmp_path, monkeypatch):
    monkeypatch.delenv(ATTACH_ENV, raising=False)
    with pytest.raises(DeterminismRefused, match="vllm-cpu launcher: VLLM_BATCH_INVARIANT=1 on the CPU platform"):
        VllmCpuLauncher(deterministic=True)
    base = [
        "reproduce",
        "--launcher",
        "vllm-cpu",
        "--dataset",
        "bundled-test",
        "--limit",
        "1",
        "--arms",
        "open-book",
        "--seeds",
        "42",
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    r = CliRunner().invoke(cli, base + ["--deterministic"])
    assert r.exit_code != 0 and "refuses batch invariance before anything starts" in r.output
    assert "vllm/model_executor/determinism/batch_invariant.py:" in r.output
    # inherited from the environment, the server would die at its first request: refused as well
    monkeypatch.setenv("VLLM_BATCH_INVARIANT", "1")
    r = CliRunner().invoke(cli, base)
    assert r.exit_code != 0 and "refuses batch invariance before anything starts" in r.output
    with pytest.raises(LaunchError, match="VLLM_BATCH_INVARIANT is set in this environment"):
        VllmCpuLauncher(log_path=tmp_path / "s.log").start()
    assert not (tmp_path / "out" / "server-logs").exists() and not (tmp_path / "s.log").exists()


def test_attaching_needs_the_same_command_and_a_live_server(tmp_path, monkeypatch):
    running = VllmCpuLauncher(port=8200, log_path=tmp_path / "s.log", log_requests=True)
    record = running.record_path()
    record.write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "base_url": running.base_url,
                "port": 8200,
                "command": running.command(),
                "env": running.env(),
                "log": str(running.log_path),
            }
        )
    )
    monkeypatch.setenv(ATTACH_ENV, str(record))
    mine = VllmCpuLauncher(port=9999, log_path=tmp_path / "mine.log")
    mine.start()  # the port and request logging aside, the command is the same: attached
    assert mine.port == 8200 and mine.base_url.endswith(":8200/v1") and mine.describe().facts["attached"]["pid"]
    mine.stop()  # not its server: nothing to stop
    with pytest.raises(LaunchError, match="command or environment differs"):
        VllmCpuLauncher(generation_config="vllm", log_path=tmp_path / "other.log").start()
    rec = json.loads(record.read_text())
    record.write_text(json.dumps({**rec, "pid": 2**22 + 17}))
    with pytest.raises(LaunchError, match="is not running"):
        VllmCpuLauncher(log_path=tmp_path / "late.log").start()
